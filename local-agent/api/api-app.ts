// The local API's one Hono app, before its routes: the guards every request passes and the one place a
// failure becomes an answer. Loopback only: a Host that is not this server's loopback name and port
// (DNS rebinding) is refused everywhere; the JSON routes (/api/*, /clawrelay/*) also refuse any request
// with an Origin header (a web page's), the inspector's pages all but their own (inspector-routes.ts);
// bodies are capped at 64 KiB. Two error shapes, by path: the Society routes (/api/*) answer
// `{success: false, error}`, as the Society AI skill scripts read it; every other route answers
// `{error: {code, message}}` (docs/local-agent.md#the-local-api). Routes throw AgentError with the
// status to answer. Used by local-api.ts; covered by test/node/api-server.test.ts.
import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AgentError } from "../errors.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/** Why a request's Host is refused (it is not this server's loopback name and port), or null. */
export function hostRefusal(host: string | undefined, port: number): string | null {
  const allowed = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  return allowed.includes((host ?? "").toLowerCase()) ? null : `Host must be 127.0.0.1:${port} or localhost:${port}`;
}

/** The Society AI API's paths: failures there keep the shape its skill scripts read. */
const isSocietyPath = (path: string) => path.startsWith("/api/");

/** The answer to a failure: a refusal's own status, else 500 (a route's bug, said as it is). */
function failure(c: Context, err: unknown): Response {
  const refusal = err instanceof AgentError && err.status !== undefined && err.status >= 400 && err.status <= 599 ? err : null;
  const status = (refusal?.status ?? 500) as 400;
  const message = err instanceof Error ? err.message : String(err);
  if (isSocietyPath(c.req.path)) return c.json({ success: false, error: message }, status);
  return c.json({ error: { code: refusal?.code ?? "internal_error", message } }, status);
}

/** The app with its guards, error answers and 404; `port()` is the port the server got (Host is checked against it). */
export function apiApp(port: () => number): Hono {
  const app = new Hono();
  app.use(async (c, next) => {
    const why = hostRefusal(c.req.header("host"), port());
    if (why) throw new AgentError("foreign_host", why, 403);
    await next();
  });
  const refuseWebPages = async (c: Context, next: () => Promise<void>) => {
    if (c.req.header("origin") !== undefined) throw new AgentError("web_page_refused", "requests from web pages (with an Origin header) are refused", 403);
    await next();
  };
  app.use("/api/*", refuseWebPages);
  app.use("/clawrelay/*", refuseWebPages);
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new AgentError("body_too_large", `body larger than ${MAX_BODY_BYTES} bytes`, 413);
      },
    }),
  );
  app.notFound((c) => failure(c, new AgentError("not_found", `no route ${c.req.method} ${c.req.path}`, 404)));
  app.onError((err, c) => failure(c, err));
  return app;
}
