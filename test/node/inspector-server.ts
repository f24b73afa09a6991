// For the inspector's browser tests: only the inspector's routes, on the local API's app (its guards and
// error answers) and server on an ephemeral loopback port, with no agent behind them.
import type { Hono } from "hono";
import { apiApp } from "../../local-agent/api/api-app.ts";
import { startApiServer } from "../../local-agent/api/api-server.ts";
import type { ApiServer } from "../../local-agent/api/api-server.ts";
import { inspectorRoutes } from "../../local-agent/inspector/inspector-routes.ts";
import type { InspectorHost } from "../../local-agent/inspector/inspector-routes.ts";

/** `before`: middleware of the test's own, registered ahead of the inspector's routes. */
export async function serveInspector(host: InspectorHost, before?: (app: Hono) => void): Promise<ApiServer> {
  let server: ApiServer | null = null;
  const app = apiApp(() => server?.port ?? 0);
  before?.(app);
  app.route("/", inspectorRoutes(host).app);
  server = await startApiServer(0, app);
  return server;
}
