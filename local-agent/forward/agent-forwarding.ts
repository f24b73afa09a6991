// Forwarding, one of the agent's parts (agent.ts): what the agent wires of forward/ into the delivery
// loop — the client that posts forwarded events to their local apps (app-client.ts). The loop keeps
// their order, policy and state (forward-delivery.ts). Covered by test/node/forward-agent.e2e.test.ts.
import { createAppClient } from "./app-client.ts";
import type { AppRequest } from "./app-client.ts";
import type { AppAnswer } from "./app-response.ts";

export interface AgentForwarding {
  postToApp(request: AppRequest, signal?: AbortSignal): Promise<AppAnswer>;
  /** Closes the app client's connections (after the delivery loop's grace). Idempotent. */
  close(): void;
}

/** `apiPort`: the agent's local API port as it runs, never a target (address-guard.ts). */
export function startForwarding(apiPort?: () => number): AgentForwarding {
  const client = createAppClient(apiPort ? { apiPort } : {});
  return {
    postToApp: (request, signal) => client.post(request, signal),
    close: () => client.close(),
  };
}
