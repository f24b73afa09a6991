// The agent's own routes on the local API: GET /clawrelay/status (what `clawrelay status` prints, with
// the relay's live counts: the relay holds the truth about the backlog, the dead shelf and the outbox, so
// it is asked on every call) and POST /clawrelay/retry (`clawrelay retry` and the inspector's Retry now: every
// wait cut short at once). Mounted by local-api.ts; covered by test/node/cli-start-status.e2e.test.ts,
// retry-now.e2e.test.ts and api-server.test.ts.
import { Hono } from "hono";
import type { AgentStatus, AgentStatusAnswer } from "../agent-status.ts";
import type { RetryNow } from "../delivery/delivery-status.ts";
import { queueSummary } from "../relay/messages.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { signedRelayCall } from "../relay/relay-api.ts";

export interface ClawrelayRoutesHost {
  status(): AgentStatus;
  access: InboxAccess;
  /** Cuts every wait short; answers what it woke. */
  retry(): RetryNow & { relay_reconnect: boolean };
}

/** The relay's view of the hub link, or null when it cannot be read just now (the status goes on without it). */
async function relayHub(access: InboxAccess): Promise<AgentStatusAnswer["relay_hub"]> {
  const answer = await signedRelayCall(access.relayUrl, access.identity, "GET", `/inbox/${access.agentId}/hub`).catch(() => null);
  return answer?.status === 200 ? (answer.body as AgentStatusAnswer["relay_hub"]) : null;
}

/** The relay's outbox: how many records and the acks setting, or null (an older relay has none; or it cannot be read just now). */
async function relayOutbox(access: InboxAccess): Promise<AgentStatusAnswer["relay_outbox"]> {
  const answer = await signedRelayCall(access.relayUrl, access.identity, "GET", `/inbox/${access.agentId}/outbox?limit=0`).catch(() => null);
  return answer?.status === 200 ? { total: Number(answer.body.total), acks: answer.body.acks === "deliver" ? "deliver" : "record" } : null;
}

export function clawrelayRoutes(host: ClawrelayRoutesHost): Hono {
  const app = new Hono();
  app.get("/clawrelay/status", async (c) => {
    const [relayQueue, hub, outbox] = await Promise.all([queueSummary(host.access).catch((err: Error) => ({ error: err.message })), relayHub(host.access), relayOutbox(host.access)]);
    const answer: AgentStatusAnswer = { ...host.status(), relay_queue: relayQueue, relay_hub: hub, relay_outbox: outbox };
    return c.json(answer);
  });
  app.post("/clawrelay/retry", (c) => c.json(host.retry()));
  return app;
}
