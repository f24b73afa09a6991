// The one place a failure becomes an HTTP answer: {"error":{"code","message"}} with a stable code.
// Used as onError/notFound by both the edge app (app.ts) and the inbox's router (inbox-routes.ts).
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
async function discardUnreadBody(request: Request): Promise<void> {
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

/** Every route of the relay and the methods it answers (docs/protocol.md, "Every route"): a known path with another method is a 405. */
const ROUTES: [RegExp, string[]][] = [
  [/^\/healthz$/, ["GET"]],
  [/^\/inbox\/[^/]+$/, ["PUT"]],
  [/^\/inbox\/[^/]+\/hooks\/.+$/, ["POST"]],
  [/^\/inbox\/[^/]+\/envelopes$/, ["POST"]],
  [/^\/inbox\/[^/]+\/(?:connect|messages|queue|hub)$/, ["GET"]],
  [/^\/inbox\/[^/]+\/queue\/[^/]+$/, ["GET", "DELETE"]],
  [/^\/inbox\/[^/]+\/queue\/[^/]+\/replay$/, ["POST"]],
  [/^\/inbox\/[^/]+\/sources$/, ["GET", "POST"]],
  [/^\/inbox\/[^/]+\/sources\/[^/]+$/, ["POST", "PATCH", "DELETE"]],
  [/^\/inbox\/[^/]+\/sources\/[^/]+\/[^/]+$/, ["POST"]],
  [/^\/directory\/agents\/[^/]+$/, ["GET", "PUT", "DELETE"]],
  [/^\/directory\/search$/, ["POST"]],
];

export async function handleNotFound(c: Context): Promise<Response> {
  await discardUnreadBody(c.req.raw);
  const path = new URL(c.req.url).pathname;
  const allowed = ROUTES.find(([pattern]) => pattern.test(path))?.[1];
  if (allowed && !allowed.includes(c.req.method)) {
    return errorResponse(405, "method_not_allowed", `${loggablePath(path)} answers ${allowed.join(", ")}, not ${c.req.method}`, { allow: allowed.join(", ") });
  }
  return errorResponse(404, "not_found", `no route for ${c.req.method} ${loggablePath(path)}; see the route table in docs/protocol.md ("Every route")`);
}
