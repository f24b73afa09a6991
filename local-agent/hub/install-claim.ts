// Claiming an agent an owner made on the hub's dashboard (today's hub has no open registration): the
// dashboard shows a bind code and a nonce; POST /openclaw/install-claim proves two keys with them — a
// host key (made here, used once: the relay needs no host control channel) and the agent's main key —
// each signing the base64-DECODED nonce, and the two must differ. The hub answers 201 with the agent
// (id derived from the agent key as ours is, its key id, already active, and a 24 h token) and host
// tokens we drop. See the hub's backend/hub/routers/openclaw_control.py, openclaw_install_claim.
// Used by token-sources.ts; covered by test/node/hub-bind.test.ts.
import { answeredHubToken, hubDetail, isAgentId, isKeyId, signChallenge } from "../../protocol/index.ts";
import type { HubClient, HubToken } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { newIdentity } from "../identity.ts";
import type { Identity } from "../identity.ts";

export const INSTALL_CLAIM_PATH = "/openclaw/install-claim";

export interface BindCode {
  code: string;
  /** base64, as the dashboard's install command prints it. */
  nonce: string;
}

export interface InstallClaim {
  agentId: string;
  keyId: string;
  displayName: string | null;
  token: HubToken;
}

const proof = async (key: Identity, nonce: string) => ({ pubkey: key.publicKey, proof: { nonce, sig: await signChallenge(key, nonce) } });

export async function claimInstall(hub: HubClient, bind: BindCode, agentKey: Identity): Promise<InstallClaim> {
  const host = await newIdentity();
  const body = { bind_code: bind.code, host: await proof(host, bind.nonce), agent: await proof(agentKey, bind.nonce) };
  const answer = await hub.call("POST", INSTALL_CLAIM_PATH, { body });
  const detail = hubDetail(answer);
  if (answer.status === 409) {
    throw new AgentError("hub_key_registered", `the hub already has this agent's key (409 ${detail}): the agent is at the hub already, so the bind code is not needed`);
  }
  if (answer.status === 404 || answer.status === 405) {
    throw new AgentError("hub_no_install_claim", `the hub at ${hub.url} has no ${INSTALL_CLAIM_PATH} (${answer.status}): it predates bind codes; run clawrelay hub register without --bind-code`);
  }
  if (answer.status === 400 && /INVALID_BIND_CODE/i.test(detail)) {
    throw new AgentError("hub_bind_code_refused", `the hub refused the bind code (400 ${detail}): it is unknown, used or expired — make a new one on the dashboard`);
  }
  if (answer.status === 401) {
    throw new AgentError("hub_bind_code_refused", `the hub refused the proofs (401 ${detail}): --bind-nonce must be the nonce shown with this bind code`);
  }
  if (answer.status < 200 || answer.status > 299) throw new AgentError("hub_refused", `hub refused POST ${INSTALL_CLAIM_PATH}: ${answer.status} ${detail}`);
  const agent = typeof answer.body.agent === "object" && answer.body.agent !== null ? (answer.body.agent as Record<string, unknown>) : {};
  const { id, key_id: keyId, token, token_expires_at: expires, display_name: name } = agent;
  if (!isAgentId(id) || !isKeyId(keyId) || typeof token !== "string" || token === "") {
    throw new AgentError("hub_bad_answer", `POST ${INSTALL_CLAIM_PATH} answered ${answer.status} without agent.id, agent.key_id and agent.token`);
  }
  return { agentId: id, keyId, displayName: typeof name === "string" ? name : null, token: answeredHubToken(token, expires, Date.now()) };
}
