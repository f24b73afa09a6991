// The hub's registry endpoints (/registry/agents/{id}/…), typed: a key look-up (public; the relay's
// intake asks it for a sender's key, `hub status` for the agent's own), a token refresh proven by an
// active key's signature over a fresh nonce (the relay with the receipt key, the CLI with the main key),
// adding a key and verifying its challenge, and the message policy. Signing is the caller's (HubSigner):
// the relay's receipt key is sealed at rest, the agent's is in its settings. Built on hub-api-core.ts;
// covered by test/protocol/hub-api-core.test.ts, test/protocol/hub-api-relay.test.ts and, end to end
// through the CLI, test/node/hub-link.test.ts.
import { fromBase64, randomBytes, toBase64 } from "./encoding.ts";
import { isKeyId } from "./identity.ts";
import type { KeyRecord, KeyState } from "./verify-envelope.ts";
import { HubCallError, badAnswer, hubJson } from "./hub-api-core.ts";
import type { HubClient } from "./hub-api-core.ts";
import { answeredHubToken } from "./hub-token.ts";
import type { HubToken } from "./hub-token.ts";

/** A key of the agent that signs what the hub asks to be signed. */
export interface HubSigner {
  keyId: string;
  sign(message: Uint8Array): Uint8Array | Promise<Uint8Array>;
}

export const hubAgentPath = (agentId: string, rest = ""): string => `/registry/agents/${encodeURIComponent(agentId)}${rest}`;
export const policyPath = (agentId: string): string => hubAgentPath(agentId, "/policy");

/** base64 Ed25519 signature over the base64-DECODED bytes of a hub challenge or nonce. */
export async function signChallenge(signer: HubSigner, challenge: unknown): Promise<string> {
  const bytes = typeof challenge === "string" ? fromBase64(challenge) : null;
  if (!bytes) throw new HubCallError(502, "hub_bad_answer", "the hub's challenge is not standard base64; cannot sign it");
  return toBase64(await signer.sign(bytes));
}

/** The JWT in an answer (`agent_token`, or `token`), with its expiry read by hub-token.ts's rules. */
export function tokenOfAnswer(body: Record<string, unknown>, what: string, nowMs: number): HubToken {
  const token = body.agent_token ?? body.token;
  if (typeof token !== "string" || token === "") throw new HubCallError(502, "hub_bad_answer", `the hub's answer to ${what} carries no agent_token`);
  return answeredHubToken(token, body.expires_at, nowMs);
}

/**
 * GET …/keys/{key_id}: the key, or null when the hub does not know it (404). Anything else is a
 * key_lookup_failed, the intake's code for "ask again later". A hub that names the owner is believed
 * over the path asked under; a state it does not name is taken as revoked.
 */
export async function lookupHubKey(hub: HubClient, agentId: string, keyId: string): Promise<KeyRecord | null> {
  const path = hubAgentPath(agentId, `/keys/${encodeURIComponent(keyId)}`);
  let answer;
  try {
    answer = await hub.call("GET", path);
  } catch (err) {
    // Only no answer becomes the intake's code; anything else a client throws is its own failure.
    if (!(err instanceof HubCallError)) throw err;
    throw new HubCallError(err.hubStatus, "key_lookup_failed", `could not reach the hub at ${hub.url} to look up key ${keyId}; retry later`);
  }
  if (answer.status === 404) return null;
  const data = answer.status >= 200 && answer.status <= 299 ? answer.body : {};
  if (typeof data.pubkey !== "string" || !isKeyId(data.key_id)) {
    throw new HubCallError(answer.status, "key_lookup_failed", `the hub at ${hub.url} answered ${answer.status} without a usable key record for ${keyId}; retry later`);
  }
  const state: KeyState = data.state === "active" || data.state === "pending" || data.state === "revoked" ? data.state : "revoked";
  return { key_id: data.key_id, agent_id: typeof data.agent_id === "string" ? data.agent_id : agentId, pubkey: data.pubkey, state };
}

/**
 * POST …/token/refresh {key_id, nonce, sig}: a new JWT, which ends every older token of the agent
 * (today's hub keeps one). The nonce is 32 fresh bytes; the hub refuses one used before (409).
 */
export async function refreshHubToken(hub: HubClient, agentId: string, signer: HubSigner, nowMs = Date.now()): Promise<HubToken> {
  const nonce = toBase64(randomBytes(32));
  const path = hubAgentPath(agentId, "/token/refresh");
  const body = await hubJson(hub, "POST", path, { body: { key_id: signer.keyId, nonce, sig: await signChallenge(signer, nonce) } });
  return tokenOfAnswer(body, `POST ${path}`, nowMs);
}

/** POST …/verify: the key that was registered or added signs its challenge; after registration the answer holds a JWT. */
export async function verifyHubKey(hub: HubClient, agentId: string, keyId: string, challenge: string, signer: HubSigner): Promise<Record<string, unknown>> {
  return hubJson(hub, "POST", hubAgentPath(agentId, "/verify"), { body: { key_id: keyId, challenge, sig: await signChallenge(signer, challenge) } });
}

/** POST …/keys {pubkey} (with the JWT): the hub assigns the key id; the key is pending until verified. */
export async function addHubKey(hub: HubClient, agentId: string, pubkey: string): Promise<{ keyId: string; challenge: string }> {
  const path = hubAgentPath(agentId, "/keys");
  const body = await hubJson(hub, "POST", path, { body: { pubkey } });
  if (!isKeyId(body.key_id) || typeof body.challenge !== "string") throw badAnswer("POST", path, "no key_id and challenge");
  return { keyId: body.key_id, challenge: body.challenge };
}

/** GET …/policy (with the JWT): contacts_only, open, … */
export async function readMessagePolicy(hub: HubClient, agentId: string): Promise<string> {
  const path = policyPath(agentId);
  const body = await hubJson(hub, "GET", path);
  if (typeof body.message_policy !== "string") throw badAnswer("GET", path, "no message_policy");
  return body.message_policy;
}

/** PATCH …/policy {"message_policy":"open"} (with the JWT): anyone may message the agent. Returns the policy now. */
export async function openMessagePolicy(hub: HubClient, agentId: string): Promise<string> {
  const body = await hubJson(hub, "PATCH", policyPath(agentId), { body: { message_policy: "open" } });
  return typeof body.message_policy === "string" ? body.message_policy : "open";
}
