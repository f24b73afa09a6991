// The local API as one of the agent's parts (agent.ts): one Hono app (api-app.ts: guards and error
// answers) with the Society AI routes (../society/society-api.ts), the agent's own (clawrelay-routes.ts)
// and the inspector's (../inspector/inspector-routes.ts), served on 127.0.0.1 (api-server.ts). Built
// before it listens, so the parts that report the API's port can hold it from the start. Covered by
// test/node/api-server.test.ts and, end to end, cli-start-status.e2e.test.ts and inspector.e2e.test.ts.
import type { Hono } from "hono";
import { societyRoutes } from "../society/society-api.ts";
import type { SocietyApiDeps } from "../society/society-api.ts";
import { inspectorRoutes } from "../inspector/inspector-routes.ts";
import type { InspectorHost } from "../inspector/inspector-routes.ts";
import { apiApp } from "./api-app.ts";
import { startApiServer } from "./api-server.ts";
import type { ApiServer } from "./api-server.ts";
import { clawrelayRoutes } from "./clawrelay-routes.ts";
import type { ClawrelayRoutesHost } from "./clawrelay-routes.ts";

export interface LocalApiOptions {
  society: Omit<SocietyApiDeps, "apiPort">;
  agent: ClawrelayRoutesHost;
  inspector: Omit<InspectorHost, "status" | "access">;
}

export interface LocalApi {
  /** The port it listens on; 0 until listen() bound one. */
  readonly port: number;
  readonly app: Hono;
  listen(preferredPort: number): Promise<void>;
  /** Idempotent; ends open connections (an inspector page's event stream) too. */
  close(): Promise<void>;
}

export function createLocalApi(options: LocalApiOptions): LocalApi {
  let server: ApiServer | null = null;
  const port = () => server?.port ?? 0;
  const app = apiApp(port);
  app.route("/", societyRoutes({ ...options.society, apiPort: port }));
  app.route("/", clawrelayRoutes(options.agent));
  app.route("/", inspectorRoutes({ ...options.inspector, status: options.agent.status, access: options.agent.access }).app);
  let closing: Promise<void> | null = null;
  return {
    get port() {
      return port();
    },
    app,
    listen: async (preferredPort) => {
      server = await startApiServer(preferredPort, app);
    },
    close: () => (closing ??= server?.close() ?? Promise.resolve()),
  };
}
