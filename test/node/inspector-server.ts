// For the inspector's browser tests: only the inspector's routes, on the local API's app (its guards and
// error answers) and server on an ephemeral loopback port, with no agent behind them; and the agent status
// those tests serve, the same in each but for its delivery block.
import type { Hono } from "hono";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
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

/** A standalone agent connected to `relayUrl` for ten minutes; `delivery` overrides the parts a test is about. */
export function agentStatusFixture(now: number, relayUrl: string, delivery: Partial<AgentStatus["delivery"]> = {}): AgentStatus {
  return {
    agent_id: "ag_0123456789ab",
    runs_in: "standalone",
    relay: { url: relayUrl, state: "connected", since: now - 600_000, backlog: 0, error: null },
    gateway: { port: 18789, hooks_path: "/hooks", config_path: null, auth_source: "none", config_error: null, problem: null },
    delivery: { counted_since: now, delivered: 0, rejected: 0, last_delivery: null, paused: null, recent_rejections: [], last_error: null, queued: 0, in_flight: 0, concurrency: 4, gateway_down: null, lanes: [], cursor: 0, forwards: [], ...delivery },
    delegation: { waiting: 0, late_results_dropped: 0 },
    hub: { mode: null, watch: { state: "off", url: "", since: now, last_update_at: null, updates: 0, error: null }, credentials: null },
    api_port: 0,
    started_at: now - 600_000,
  };
}
