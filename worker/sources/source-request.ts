// What a request to a source URL is, beyond its body: the tail a token source's URL was sent with (the
// sub-path and query after its secret), the methods a source takes, and the sender's headers kept with
// the event — what a forward target is later posted (protocol/forward.ts), or a live request's frame carries. Used by source-routes.ts and,
// for the 405 of a GET, by inbox-routes.ts; covered by test/worker/sources-forward-routes.test.ts.
import { FORWARD_METHODS, FORWARD_TAIL_MAX_LENGTH, RelayError, forwardUrl, keptRequestHeaders } from "../../protocol/index.ts";
import type { ForwardMethod, LiveMethod } from "../../protocol/index.ts";
import type { StoredSource } from "./source-config.ts";

/** `/inbox/{id}/sources/{name}/{secret}`: what comes after it is the tail. */
const TOKEN_URL = /^\/inbox\/[^/]+\/sources\/[^/]+\/[^/]+/;
const SOURCE_URL = /^\/inbox\/[^/]+\/sources\/[^/]+(?:\/|$)/;

/** The raw path after a token source's secret and the raw query, as sent: "/stripe/events?x=1", "?x=1", "". */
export function requestTail(url: string): string {
  const { pathname, search } = new URL(url);
  const prefix = TOKEN_URL.exec(pathname)?.[0] ?? pathname;
  return pathname.slice(prefix.length) + search;
}

/** Refuses a tail that could not be forwarded below a target's path, or is longer than one is kept. */
export function checkTail(tail: string): void {
  if (tail.length > FORWARD_TAIL_MAX_LENGTH) {
    throw new RelayError(414, "uri_too_long", `the path and query after the source's URL are ${tail.length} characters; at most ${FORWARD_TAIL_MAX_LENGTH} are kept`);
  }
  if (forwardUrl("http://x/", tail) === null) {
    throw new RelayError(400, "invalid_path", 'the path after the source\'s URL must stay below it when it is forwarded: no "." or ".." segments (nor "..;x", "..." or ".." and a space), no encoded "/" or "\\" (%2F, %5C), no "\\", no empty segment ("//"), no double-encoded "%252e", "%252f" or "%255c", only UTF-8 percent-escapes (not %C0%AE), no control characters; nothing was stored');
  }
}

/**
 * POST always; PUT, PATCH and DELETE only to a source with a forward target (the gateway's hooks take POST);
 * GET and HEAD only to a live source with one (the app's answer is the point of them: they carry no event).
 */
export function checkMethod(method: string, source: Pick<StoredSource, "name" | "forward" | "live_sec">): LiveMethod {
  if (method === "POST") return "POST";
  if (method === "GET" || method === "HEAD") {
    if (source.forward !== null && typeof source.live_sec === "number") return method;
    throw new RelayError(
      405,
      "method_not_allowed",
      `source "${source.name}" is not live: the relay answers a source's sender at once and delivers the event later, so it forwards only requests that carry an event; to have a ${method} answered by a local app while the agent is connected: clawrelay sources set ${source.name} --live${source.forward === null ? " --forward URL" : ""}`,
      { allow: source.forward === null ? "POST" : FORWARD_METHODS.join(", ") },
    );
  }
  if (source.forward === null) {
    throw new RelayError(
      405,
      "method_not_allowed",
      `source "${source.name}" delivers to the gateway, whose hooks take POST, not ${method}; to have ${method} requests forwarded to a local app, set a forward target: clawrelay sources set ${source.name} --forward URL`,
      { allow: "POST" },
    );
  }
  return method as ForwardMethod;
}

/** The sender's headers a forwarded or live request keeps; 431 when they are more than one keeps, 400 when one cannot be passed on. */
export function keptHeaders(headers: Headers): [string, string][] {
  const kept = keptRequestHeaders(headers.entries());
  if (!kept.ok) throw new RelayError(kept.code === "headers_too_large" ? 431 : 400, kept.code, `${kept.problem}; nothing was stored`);
  return kept.headers;
}

/** Why a GET or HEAD at a source URL is refused, added to its 405 (http-errors.ts); null for other requests. */
export function sourceMethodAdvice(method: string, path: string): string | null {
  if ((method !== "GET" && method !== "HEAD") || !SOURCE_URL.test(path)) return null;
  return "the relay answers a source's sender at once and delivers the event later, so it forwards only requests that carry an event (POST; PUT, PATCH and DELETE too to a token source with a forward target); GET and HEAD reach a token source's URL (…/sources/{name}/{secret}) when it answers live (clawrelay sources set NAME --live --forward URL)";
}
