// Forwarding, one of the agent's parts (agent.ts): what the agent wires of forward/ into the delivery
// loop — the client that posts forwarded events to their local apps (app-client.ts), and the replay
// through the owner API that brings a failing app's set-aside events back (set-aside.ts; as
// `clawrelay messages replay`). The loop keeps their order and state (forward-delivery.ts). Covered by
// test/node/forward-agent.e2e.test.ts and forward-set-aside.e2e.test.ts.
import { replayMessage } from "../relay/messages.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { createAppClient } from "./app-client.ts";
import type { AppRequest } from "./app-client.ts";
import type { AppAnswer } from "./app-response.ts";

export interface AgentForwarding {
  postToApp(request: AppRequest): Promise<AppAnswer>;
  /** Replays a dead message under a new id; answers the new id. */
  replay(id: number): Promise<number>;
  /** Closes the app client's connections (after the delivery loop's grace). Idempotent. */
  close(): void;
}

export function startForwarding(access: InboxAccess): AgentForwarding {
  const client = createAppClient();
  return {
    postToApp: (request) => client.post(request),
    replay: async (id) => (await replayMessage(access, id)).id,
    close: () => client.close(),
  };
}
