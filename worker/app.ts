// The edge: health, the directory, and routing /inbox/{agent_id}/… to that agent's Durable Object unchanged
// (WebSocket upgrades included, so the object can accept them with the hibernation API).
import { Hono } from "hono";
import { RelayError, isAgentId } from "../protocol/index.ts";
import { version } from "../package.json";
import type { Env } from "./env.ts";
import { directoryRoutes } from "./directory/routes.ts";
import { answerNotFound, handleError } from "./http-errors.ts";

export const RELAY_VERSION: string = version;

export const app = new Hono<{ Bindings: Env }>();
app.onError(handleError);
app.notFound(answerNotFound(app));

app.get("/healthz", (c) => c.json({ ok: true, version: RELAY_VERSION }));

app.route("/directory", directoryRoutes);
app.all("/inbox/:agent_id/*", forwardToInbox);
app.all("/inbox/:agent_id", forwardToInbox);

function forwardToInbox(c: { req: { param(name: "agent_id"): string; raw: Request }; env: Env }): Promise<Response> {
  const agentId = c.req.param("agent_id");
  if (!isAgentId(agentId)) {
    throw new RelayError(400, "invalid_agent_id", `"${agentId}" is not an agent id: expected ag_ followed by 12 lowercase hex digits`);
  }
  return c.env.INBOX.getByName(agentId).fetch(c.req.raw);
}
