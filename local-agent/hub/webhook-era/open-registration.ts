// Open registration, as the webhook-era hub code (and the Agentline service) offers it: POST
// /registry/agents {pubkey, display_name, bio} answers the agent's id, a key id and a challenge, which the
// key signs (POST …/verify) for the agent's first JWT. Today's hub has none: an owner makes the agent on
// the dashboard and the agent claims it with a bind code (../install-claim.ts). Used by hub-session.ts
// when no token works and no bind code was given; covered by test/node/hub-link.test.ts.
import { hubDetail, hubRefusal, isAgentId, isHubSuccess, isKeyId } from "../../../protocol/index.ts";
import type { HubClient } from "../../../protocol/index.ts";
import { AgentError } from "../../errors.ts";

export const REGISTER_PATH = "/registry/agents";

/** Idempotent per pubkey (the same agent and key id, a fresh challenge); 409: the id is another key's. */
export async function registerAgent(hub: HubClient, key: { agentId: string; publicKey: string }, displayName: string): Promise<{ agentId: string; keyId: string; challenge: string }> {
  // The webhook-era hub code requires a bio (1 to 500 characters; it answers 422 without one).
  const bio = `${displayName}: an OpenClaw agent, reached through its clawrelay inbox`.slice(0, 500);
  const answer = await hub.call("POST", REGISTER_PATH, { body: { pubkey: key.publicKey, display_name: displayName, bio } });
  if (answer.status === 404 || answer.status === 405) {
    throw new AgentError(
      "hub_no_open_registration",
      `the hub at ${hub.url} does not register agents itself (POST ${REGISTER_PATH}: ${answer.status}): create the agent on the hub's dashboard, then run clawrelay hub register --bind-code bd_… --bind-nonce … with the code it shows`,
    );
  }
  if (answer.status === 409) {
    throw new AgentError("hub_agent_taken", `the hub says ${key.agentId} is already registered with another key (409 ${hubDetail(answer)}); this agent's key cannot take it over`);
  }
  if (!isHubSuccess(answer)) throw hubRefusal("POST", REGISTER_PATH, answer);
  const { agent_id, key_id, challenge } = answer.body;
  if (!isAgentId(agent_id) || !isKeyId(key_id) || typeof challenge !== "string") {
    throw new AgentError("hub_bad_answer", `POST ${REGISTER_PATH} answered without agent_id, key_id and challenge`);
  }
  return { agentId: agent_id, keyId: key_id, challenge };
}
