// The stand-in hub's registry: bearer tokens and who they authenticate, anonymous registration (webhook
// era only), challenges, keys, token refresh, message policy and contact requests. Tokens are HS256 JWTs
// with the hub's claims {agent_id, exp, iss}; the webhook era takes any it signed (stateless), today's
// hub only the agent's CURRENT one on the routes that read the database. Imported by agentline-hub.ts;
// covered by test/node/agentline-hub.test.ts.
import { randomBytes } from "node:crypto";
import { HubError, METHOD_NOT_ALLOWED, invalidBody, missingHeader } from "./agentline-hub-errors.ts";
import { answer, agentOr404, field, hex, isoOrNull, isoTime, jsonObject, nowSec } from "./agentline-hub-world.ts";
import type { Answer, ContactRequest, HubAgent, HubKey, HubRequest, HubWorld } from "./agentline-hub-world.ts";
import { agentIdFor, pubkeyFault, readJwt, signJwt, verifyBytes } from "./agentline-hub-wire.ts";

const CHALLENGE_TTL_MS = 5 * 60_000;
const PUBKEY_CODES: Record<string, string> = {
  "pubkey must start with 'ed25519:'": "pubkey_must_start_with_ed25519",
  "pubkey base64 is invalid": "pubkey_base64_invalid",
  "Ed25519 public key must be 32 bytes": "pubkey_must_be_32_bytes",
};

/** Routes that read the agent row check the token is its current one ("db"); the rest only the signature. */
export type AuthMode = "jwt" | "db";

export interface Registry {
  /** The agent a request's bearer token names, under the generation's rules. */
  authenticate(req: HubRequest, mode: AuthMode): string;
  /** The path's agent must be the token's (403 "Agent ID mismatch"). */
  owns(req: HubRequest, agentId: string, mode: AuthMode): string;
  /** A token for the agent (the same string within one second); `current` makes it the one today's hub accepts. */
  mint(agentId: string, current: boolean): { agent_token: string; expires_at: number };
  route(req: HubRequest, id: string, tail: string[]): Promise<Answer | null>;
  /** A hub-made notice "from" an agent (contact request answered, contact removed); the webhook era pushes it to /wake. */
  notice?: (from: string, to: string, type: string, payload: Record<string, unknown>) => Promise<void>;
}

export function pubkeyError(pubkey: string): HubError | null {
  const fault = pubkeyFault(pubkey);
  return fault === null ? null : new HubError(400, PUBKEY_CODES[fault]!);
}

export function createRegistry(world: HubWorld): Registry {
  const challenges: { agent_id: string; key_id: string; challenge: string; expires: number; used: boolean }[] = [];
  const nonces = new Set<string>();
  const webhookEra = world.generation === "webhook-era";

  function authenticate(req: HubRequest, mode: AuthMode): string {
    const header = req.headers.authorization;
    if (header === undefined) {
      if (webhookEra) throw missingHeader("authorization");
      throw new HubError(401, "invalid_authorization_header");
    }
    if (!header.startsWith("Bearer ")) throw new HubError(401, "invalid_authorization_header");
    const token = header.slice("Bearer ".length);
    const claims = readJwt(token, world.secret, nowSec());
    if (claims === "expired") throw new HubError(401, "token_expired");
    if (claims === null) throw new HubError(401, "invalid_token");
    const agentId = claims.agent_id as string;
    if (webhookEra || mode === "jwt") return agentId;
    const agent = agentOr404(world, agentId);
    if (agent.current_token !== null && agent.current_token !== token) throw new HubError(401, "invalid_token");
    return agentId;
  }

  function owns(req: HubRequest, agentId: string, mode: AuthMode): string {
    const me = authenticate(req, mode);
    if (me !== agentId) throw new HubError(403, "agent_id_mismatch");
    return me;
  }

  function mint(agentId: string, current: boolean): { agent_token: string; expires_at: number } {
    const expires_at = nowSec() + world.clockAheadSec + world.tokenTtlSec;
    const agent_token = signJwt({ agent_id: agentId, exp: expires_at, iss: "botcord" }, world.secret);
    const agent = world.agents.get(agentId);
    if (current && agent && !webhookEra) agent.current_token = agent_token;
    return { agent_token, expires_at };
  }

  function challengeFor(agentId: string, keyId: string): string {
    const challenge = randomBytes(32).toString("base64");
    challenges.push({ agent_id: agentId, key_id: keyId, challenge, expires: Date.now() + CHALLENGE_TTL_MS, used: false });
    return challenge;
  }

  function newKey(agent: HubAgent, pubkey: string): HubKey {
    const key: HubKey = { key_id: `k_${hex(6)}`, pubkey, state: "pending", created_at: Date.now() };
    agent.keys.set(key.key_id, key);
    return key;
  }

  /** POST /registry/agents (webhook era): idempotent per public key, a fresh challenge each time. */
  async function register(req: HubRequest): Promise<Answer> {
    const body = await jsonObject(req);
    const [display_name, pubkey] = [field(body, "display_name"), field(body, "pubkey")];
    const bad = pubkeyError(pubkey);
    if (bad) throw bad;
    const agent_id = agentIdFor(pubkey);
    const bio = typeof body.bio === "string" ? body.bio : null;
    const existing = world.agents.get(agent_id);
    if (existing) {
      const key = [...existing.keys.values()].find((k) => k.pubkey === pubkey);
      if (!key) throw new HubError(409, "Agent ID collision: a different pubkey already occupies this agent_id");
      existing.display_name = display_name || existing.display_name;
      if (bio !== null) existing.bio = bio;
      return answer({ agent_id, key_id: key.key_id, challenge: challengeFor(agent_id, key.key_id) }, 201);
    }
    const agent: HubAgent = { agent_id, display_name, bio, message_policy: "contacts_only", contacts: new Set(), keys: new Map(), endpoint: null, current_token: null, owner: null, claim_code: null, avatar_url: null };
    world.agents.set(agent_id, agent);
    const key = newKey(agent, pubkey);
    return answer({ agent_id, key_id: key.key_id, challenge: challengeFor(agent_id, key.key_id) }, 201);
  }

  async function verify(req: HubRequest, agentId: string): Promise<Answer> {
    const body = await jsonObject(req);
    const [key_id, challenge, sig] = [field(body, "key_id"), field(body, "challenge"), field(body, "sig")];
    const issued = challenges.find((c) => c.agent_id === agentId && c.key_id === key_id && c.challenge === challenge);
    if (!issued) throw new HubError(404, "challenge_not_found");
    if (issued.used) throw new HubError(400, "challenge_already_used");
    if (Date.now() > issued.expires) throw new HubError(400, "challenge_expired");
    const key = world.agents.get(agentId)?.keys.get(key_id);
    if (!key) throw new HubError(404, "key_not_found");
    if (!verifyBytes(key.pubkey, Buffer.from(challenge, "base64"), sig)) throw new HubError(401, "signature_verification_failed");
    issued.used = true;
    key.state = "active";
    // Today's /verify mints a token without making it the agent's current one (fact 19).
    const token = mint(agentId, false);
    if (webhookEra) return answer(token);
    const code = world.agents.get(agentId)?.claim_code;
    return answer({ ...token, claim_url: code ? `https://botcord.chat/agents/claim/${code}` : null });
  }

  async function addKey(req: HubRequest, agentId: string): Promise<Answer> {
    owns(req, agentId, "jwt");
    const pubkey = field(await jsonObject(req), "pubkey");
    const bad = pubkeyError(pubkey);
    if (bad) throw bad;
    const key = newKey(agentOr404(world, agentId), pubkey);
    return answer({ key_id: key.key_id, challenge: challengeFor(agentId, key.key_id) }, 201);
  }

  async function refresh(req: HubRequest, agentId: string): Promise<Answer> {
    const body = await jsonObject(req);
    const [key_id, nonce, sig] = [field(body, "key_id"), field(body, "nonce"), field(body, "sig")];
    if (!webhookEra) agentOr404(world, agentId);
    const key = world.agents.get(agentId)?.keys.get(key_id);
    if (!key) throw new HubError(404, "key_not_found");
    if (key.state !== "active") throw new HubError(403, "key_not_active");
    if (nonces.has(`${agentId}\n${nonce}`)) throw new HubError(409, "nonce_already_used");
    if (!verifyBytes(key.pubkey, Buffer.from(nonce, "base64"), sig)) throw new HubError(401, "signature_verification_failed");
    nonces.add(`${agentId}\n${nonce}`);
    const token = mint(agentId, true);
    return answer(webhookEra ? token : { ...token, claim_url: null });
  }

  async function setPolicy(req: HubRequest, agentId: string): Promise<Answer> {
    owns(req, agentId, "db");
    const policy = (await jsonObject(req)).message_policy;
    if (policy !== "open" && policy !== "contacts_only") throw invalidBody([{ type: "enum", loc: ["body", "message_policy"], msg: "Input should be 'open' or 'contacts_only'", input: policy }]);
    agentOr404(world, agentId).message_policy = policy;
    return answer({ message_policy: policy });
  }

  const requestView = (r: ContactRequest) => ({ id: r.id, from_agent_id: r.from_agent_id, to_agent_id: r.to_agent_id, state: r.state, message: r.message, created_at: isoTime(r.created_at), resolved_at: isoOrNull(r.resolved_at) });

  async function resolve(req: HubRequest, agentId: string, id: string, decision: "accepted" | "rejected"): Promise<Answer> {
    owns(req, agentId, "db");
    const request = world.contactRequests.find((r) => String(r.id) === id && r.to_agent_id === agentId);
    if (!request) throw new HubError(404, "contact_request_not_found");
    if (request.state !== "pending") throw new HubError(400, `Contact request is already ${request.state}`);
    request.state = decision;
    request.resolved_at = Date.now();
    if (decision === "accepted") {
      agentOr404(world, request.to_agent_id).contacts.add(request.from_agent_id);
      world.agents.get(request.from_agent_id)?.contacts.add(request.to_agent_id);
    }
    await registry.notice?.(request.to_agent_id, request.from_agent_id, "contact_request_response", { state: decision, request_id: request.id });
    return answer(requestView(request));
  }

  /** DELETE …/contacts/{other}: both directions go, and the other agent hears of it. */
  async function removeContact(req: HubRequest, agentId: string, other: string): Promise<Answer> {
    owns(req, agentId, "db");
    const agent = agentOr404(world, agentId);
    if (!agent.contacts.has(other)) throw new HubError(404, "Contact not found");
    agent.contacts.delete(other);
    world.agents.get(other)?.contacts.delete(agentId);
    await registry.notice?.(agentId, other, "contact_removed", { removed_by: agentId });
    return answer(null, 204);
  }

  async function route(req: HubRequest, id: string, tail: string[]): Promise<Answer | null> {
    const rest = `${req.method} ${tail.join("/")}`;
    if (id === "") {
      if (req.method === "POST") return webhookEra ? register(req) : Promise.reject(METHOD_NOT_ALLOWED());
      return req.method === "GET" ? Promise.reject(new HubError(403, "Agent discovery is currently disabled")) : null;
    }
    if (rest === "POST verify") return verify(req, id);
    if (rest === "POST keys") return addKey(req, id);
    if (rest === "POST token/refresh") return refresh(req, id);
    if (rest === "GET policy") return answer({ message_policy: agentOr404(world, id).message_policy });
    if (rest === "PATCH policy") return setPolicy(req, id);
    if (req.method === "GET" && tail[0] === "keys" && tail.length === 2) {
      const key = world.agents.get(id)?.keys.get(tail[1]!);
      if (!key) throw new HubError(404, "key_not_found");
      return answer({ key_id: key.key_id, pubkey: key.pubkey, state: key.state, created_at: isoTime(key.created_at) });
    }
    if (req.method === "GET" && tail[0] === "contact-requests" && (tail[1] === "received" || tail[1] === "sent") && tail.length === 2) {
      owns(req, id, "db");
      const mine = world.contactRequests.filter((r) => (tail[1] === "received" ? r.to_agent_id : r.from_agent_id) === id);
      return answer({ requests: mine.reverse().map(requestView) });
    }
    if (req.method === "DELETE" && tail[0] === "contacts" && tail.length === 2) return removeContact(req, id, tail[1]!);
    if (req.method === "POST" && tail[0] === "contact-requests" && tail.length === 3 && (tail[2] === "accept" || tail[2] === "reject")) {
      return resolve(req, id, tail[1]!, tail[2] === "accept" ? "accepted" : "rejected");
    }
    return null;
  }

  const registry: Registry = { authenticate, owns, mint, route };
  return registry;
}
