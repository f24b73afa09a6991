// The request a forwarded event becomes (a delivery frame with `forward`, protocol/forward.ts): the URL
// its tail makes under the target, its method, its body's bytes and the frame's headers as they are (the
// sender's, then the relay's x-clawrelay-*). Checked again here, whatever the relay sent: an event that
// cannot be posted is refused with the reason, before any connection. And the source's policy the frame
// carries (post time limit, retry budget, order), each within its bounds, the defaults when a relay sent
// none. Pure; imported by forward-delivery.ts; covered by test/node/forward-delivery.test.ts and
// forward-policy.test.ts.
import { checkForwardTarget, FORWARD_METHODS, FORWARD_POLICY, forwardUrl, fromBase64, utf8 } from "../../protocol/index.ts";
import type { DeliveryFrame, ForwardFrame } from "../../protocol/index.ts";
import type { AppRequest } from "./app-client.ts";

/** Headers of the connection, not the sender's: the agent's own request sets what it needs of them (Host, Content-Length). */
const CONNECTION_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade", "te", "trailer", "expect"]);

/** A sender's headers without the connection's (a live request's too: ../live/live-requests.ts). */
export function withoutConnectionHeaders(headers: [string, string][]): [string, string][] {
  return headers.filter(([name]) => !CONNECTION_HEADERS.has(name.toLowerCase()));
}

/** How a source's events are posted (protocol/lanes.ts FORWARD_POLICY). */
export interface ForwardPolicy {
  timeoutMs: number;
  /** Failures that spend the budget (answered failures, time-outs, resets) an event may have beyond its first. */
  retries: number;
  /** False: its events may be posted several at once. */
  ordered: boolean;
}

function within(value: unknown, min: number, max: number, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.min(max, Math.max(min, Math.trunc(value))) : fallback;
}

export function forwardPolicy(forward: ForwardFrame): ForwardPolicy {
  return {
    timeoutMs: within(forward.timeout_sec, 1, FORWARD_POLICY.timeoutSecMax, FORWARD_POLICY.timeoutSec) * 1000,
    retries: within(forward.retries, 0, FORWARD_POLICY.retriesMax, FORWARD_POLICY.retries),
    ordered: forward.ordered !== false,
  };
}

export type BuiltRequest = { ok: true; request: AppRequest } | { ok: false; problem: string };

function isHeaderList(value: unknown): value is [string, string][] {
  return Array.isArray(value) && value.every((h) => Array.isArray(h) && h.length === 2 && typeof h[0] === "string" && typeof h[1] === "string");
}

/** What a person sees of a forwarded event where a sub-path would be: its URL tail, else its source. */
export function forwardShownAs(forward: ForwardFrame): string {
  return forward.tail !== "" ? forward.tail : forward.source;
}

export function forwardRequest(frame: DeliveryFrame, forward: ForwardFrame): BuiltRequest {
  const { source, target, tail, method } = forward;
  const fail = (problem: string): BuiltRequest => ({ ok: false, problem: `not forwarded: ${problem}` });
  // Public IP literals are the address guard's to refuse (app-client.ts), with the fix in its reason.
  const check = checkForwardTarget(target, true, { stored: true });
  if (!check.ok) return fail(`the source's target cannot be used (${check.problem}); set another: clawrelay sources set ${source} --forward URL`);
  if (!(FORWARD_METHODS as readonly string[]).includes(method)) return fail(`the method ${String(method).slice(0, 20)} is not one a forwarded event may have (${FORWARD_METHODS.join(", ")})`);
  const url = typeof tail === "string" ? forwardUrl(check.url, tail) : null;
  if (url === null) return fail(`its URL tail "${String(tail).slice(0, 80)}" would leave the target's path (a "..", an encoded slash) or is not a path and query`);
  if (!isHeaderList(forward.headers)) return fail("its headers are not a list of [name, value] pairs");
  // The relay kept none of these (forward.ts); dropped again here, as one would corrupt the request's framing.
  const headers = withoutConnectionHeaders(forward.headers);
  const body = frame.encoding === "utf8" ? utf8(frame.body) : fromBase64(frame.body);
  if (body === null) return fail("its body is not valid base64");
  return { ok: true, request: { source, target, allowPublic: forward.allow_public === true, url, method, headers, body, timeoutMs: forwardPolicy(forward).timeoutMs } };
}
