// The one place a failure becomes an HTTP answer: {"error":{"code","message"}} with a stable code.
// Used as onError/notFound by both the edge app (app.ts) and the inbox's router (inbox-routes.ts);
// covered by test/worker/http.test.ts and test/worker/bad-input/routes.test.ts.
import type { Context } from "hono";
import { RelayError, errorBody } from "../protocol/index.ts";

export function errorResponse(status: number, code: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(errorBody(code, message)), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;

/**
 * Answering before reading a forwarded body makes workerd log "Can't read from request stream after
 * response has been sent"; reading the rest first avoids it. Huge bodies are cancelled instead.
 */
export async function discardUnreadBody(request: Request): Promise<void> {
  if (!request.body || request.bodyUsed) return;
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > DRAIN_LIMIT_BYTES) await request.body.cancel().catch(() => undefined);
  else await request.arrayBuffer().catch(() => undefined);
}

/** A path fit for a log: a token source's URL ends in its secret, which is cut off. */
export function loggablePath(path: string): string {
  return path.replace(/^(\/inbox\/[^/]+\/sources\/[^/]+)\/.+$/, "$1/…");
}

export async function handleError(err: Error, c: Context): Promise<Response> {
  await discardUnreadBody(c.req.raw);
  if (err instanceof RelayError) return errorResponse(err.status, err.code, err.message, err.headers);
  // Unknown failures: log the detail (never request secrets, which are not in the error), answer generically.
  console.error(`clawrelay: unhandled error on ${c.req.method} ${loggablePath(new URL(c.req.url).pathname)}:`, err);
  return errorResponse(500, "internal_error", "the relay failed while handling this request; it was not stored, retry later");
}

/** The methods a 405's Allow header can name, in the order it names them. */
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** The router of a Hono app, as far as the 405 needs it: each match carries its route's method. */
interface RoutedApp {
  router: { match(method: string, path: string): [[[unknown, { method: string }], unknown][], ...unknown[]] };
}

/**
 * The methods `app`'s own routes answer at `path`, asked of its router — the one that dispatches, so
 * parameters and wildcards match exactly as they do for a request. Routes for every method (`all`,
 * middleware) name none.
 */
export function allowedMethods(app: RoutedApp, path: string): string[] {
  return METHODS.filter((method) => app.router.match(method, path)[0].some(([[, route]]) => route.method === method));
}

/** Why a method is refused at a path, when there is more to say than which methods it takes; else null. */
export type MethodAdvice = (method: string, path: string) => string | null;

/**
 * The notFound handler of `app` (the edge app, app.ts; the inbox's router, inbox-routes.ts): a path one
 * of its routes knows, asked with another method, is a 405 with `Allow` (and `advice`'s reason, if it
 * has one); anything else a 404. Read from the router when a request comes, so a route added later is
 * known without a list to keep.
 */
export function answerNotFound(app: RoutedApp, advice: MethodAdvice = () => null): (c: Context) => Promise<Response> {
  return async (c) => {
    await discardUnreadBody(c.req.raw);
    const path = new URL(c.req.url).pathname;
    const allowed = allowedMethods(app, path);
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      const why = advice(c.req.method, path);
      const message = `${loggablePath(path)} answers ${allowed.join(", ")}, not ${c.req.method}${why ? `: ${why}` : ""}`;
      return errorResponse(405, "method_not_allowed", message, { allow: allowed.join(", ") });
    }
    return errorResponse(404, "not_found", `no route for ${c.req.method} ${loggablePath(path)}; see the route table in docs/protocol.md ("Every route")`);
  };
}
