// The stand-in hub's registry: agents, their keys (hub-assigned ids, pending until a challenge is
// signed), single-use challenges, bearer tokens, refresh nonces and message policy, with the routes
// that serve them. Imported by agentline-hub.ts only; covered by test/node/agentline-hub.test.ts.
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { agentIdFor, isObject, isPublicKeyText, verifyBytes } from "./agentline-hub-wire.ts";
import type { KnownKey } from "./agentline-hub-wire.ts";

export type MessagePolicy = "open" | "contacts_only";
export interface HubKey { key_id: string; pubkey: string; state: "pending" | "active" | "revoked"; created_at: number }
export interface HubEndpoint {
  endpoint_id: string; url: string; webhook_token: string; state: "active" | "unverified" | "unreachable";
  registered_at: number; recent_errors: string[];
}
export interface HubAgent {
  agent_id: string; display_name: string; message_policy: MessagePolicy; contacts: Set<string>;
  keys: Map<string, HubKey>; endpoint: HubEndpoint | null;
}
export type Answer = [number, unknown];
type Body = Record<string, unknown>;

const CHALLENGE_TTL_MS = 10 * 60_000;
const BAD_PUBKEY = "Invalid public key: expected ed25519:<base64 of 32 bytes>";

/** A refusal; the server answers it as {detail, retryable} like the real hub. */
export class HubError extends Error {
  readonly status: number;
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
  }
}

export const hex = (bytes: number): string => randomBytes(bytes).toString("hex");
export const iso = (ms: number): string => new Date(ms).toISOString();

export function field(body: Body, name: string): string {
  const value = body[name];
  if (typeof value !== "string" || value === "") throw new HubError(422, `${name} is required (a non-empty string)`);
  return value;
}

/** Reads a JSON object body; `keep` sees the raw text, then the value, so refusals can be logged too. */
export async function readJson(req: IncomingMessage, keep: (body: unknown) => void): Promise<Body> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  keep(raw);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new HubError(422, "Body is not JSON");
  }
  keep(value);
  if (!isObject(value)) throw new HubError(422, "Body must be a JSON object");
  return value;
}

export interface Registry {
  agents: Map<string, HubAgent>;
  agentOr404(agent_id: string): HubAgent;
  /** The token's agent (401 when unknown or expired); with an id, the token must be that agent's (403). */
  authed(req: IncomingMessage, agent_id?: string): HubAgent;
  keyOf(key_id: string): KnownKey | undefined;
  /** Answers /registry/agents[/{id}/{verify,keys,keys/{key_id},token/refresh,policy}]; null for other paths. */
  route(method: string, id: string, tail: string[], req: IncomingMessage, json: () => Promise<Body>): Promise<Answer | null>;
}

export function createRegistry(tokenTtlSec: number): Registry {
  const agents = new Map<string, HubAgent>();
  const challenges = new Map<string, { agent_id: string; key_id: string; expires: number; used: boolean }>();
  const tokens = new Map<string, { agent_id: string; expires: number }>();
  const nonces = new Set<string>(); // `${agent_id}\n${nonce}`

  function agentOr404(agent_id: string): HubAgent {
    const agent = agents.get(agent_id);
    if (!agent) throw new HubError(404, "Agent not found");
    return agent;
  }

  function authed(req: IncomingMessage, agent_id?: string): HubAgent {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const grant = token === undefined ? undefined : tokens.get(token);
    if (!grant || Date.now() >= grant.expires) throw new HubError(401, "Invalid or expired token");
    if (agent_id !== undefined && grant.agent_id !== agent_id) throw new HubError(403, "Token does not belong to this agent");
    return agentOr404(grant.agent_id);
  }

  function keyOf(key_id: string): KnownKey | undefined {
    for (const agent of agents.values()) {
      const key = agent.keys.get(key_id);
      if (key) return { owner: agent.agent_id, pubkey: key.pubkey, state: key.state };
    }
    return undefined;
  }

  function challengeFor(agent_id: string, key: HubKey): { key_id: string; challenge: string } {
    const challenge = randomBytes(32).toString("base64");
    challenges.set(challenge, { agent_id, key_id: key.key_id, expires: Date.now() + CHALLENGE_TTL_MS, used: false });
    return { key_id: key.key_id, challenge };
  }

  function tokenFor(agent_id: string): Answer {
    const agent_token = hex(32); // opaque: only this hub ever reads it
    const expires = Date.now() + tokenTtlSec * 1000;
    tokens.set(agent_token, { agent_id, expires });
    return [200, { agent_token, expires_at: Math.floor(expires / 1000) }];
  }

  /** The same public key answers with the same key id (registration is idempotent); a new one is pending. */
  function keyFor(agent: HubAgent, pubkey: string): HubKey {
    if (!isPublicKeyText(pubkey)) throw new HubError(400, BAD_PUBKEY);
    const existing = [...agent.keys.values()].find((k) => k.pubkey === pubkey);
    if (existing) return existing;
    const key: HubKey = { key_id: `k_${hex(6)}`, pubkey, state: "pending", created_at: Date.now() };
    agent.keys.set(key.key_id, key);
    return key;
  }

  function register(body: Body): Answer {
    const [pubkey, display_name] = [field(body, "pubkey"), field(body, "display_name")];
    if (!isPublicKeyText(pubkey)) throw new HubError(400, BAD_PUBKEY); // before the id is derived from it
    const agent_id = agentIdFor(pubkey);
    const agent: HubAgent = agents.get(agent_id) ?? { agent_id, display_name, message_policy: "contacts_only", contacts: new Set(), keys: new Map(), endpoint: null };
    agents.set(agent_id, agent);
    return [201, { agent_id, ...challengeFor(agent_id, keyFor(agent, pubkey)) }];
  }

  function verifyChallenge(agent: HubAgent, body: Body): Answer {
    const [key_id, challenge, sig] = [field(body, "key_id"), field(body, "challenge"), field(body, "sig")];
    const issued = challenges.get(challenge);
    const key = agent.keys.get(key_id);
    if (!issued || !key || issued.agent_id !== agent.agent_id || issued.key_id !== key_id) throw new HubError(404, "Challenge not found");
    if (issued.used) throw new HubError(400, "Challenge already used");
    if (Date.now() > issued.expires) throw new HubError(400, "Challenge expired");
    if (key.state === "revoked") throw new HubError(403, "Key is revoked");
    if (!verifyBytes(key.pubkey, Buffer.from(challenge, "base64"), sig)) throw new HubError(401, "Signature verification failed");
    issued.used = true;
    key.state = "active";
    return tokenFor(agent.agent_id);
  }

  function addKey(agent: HubAgent, body: Body): Answer {
    const pubkey = field(body, "pubkey");
    const taken = [...agents.values()].some((a) => a !== agent && [...a.keys.values()].some((k) => k.pubkey === pubkey));
    if (taken) throw new HubError(409, "Public key already registered to another agent");
    return [201, challengeFor(agent.agent_id, keyFor(agent, pubkey))];
  }

  function refresh(agent: HubAgent, body: Body): Answer {
    const [key_id, nonce, sig] = [field(body, "key_id"), field(body, "nonce"), field(body, "sig")];
    const key = agent.keys.get(key_id);
    if (!key) throw new HubError(404, "Key not found");
    if (key.state !== "active") throw new HubError(403, "Key is not active");
    if (!verifyBytes(key.pubkey, Buffer.from(nonce, "base64"), sig)) throw new HubError(401, "Signature verification failed");
    if (nonces.has(`${agent.agent_id}\n${nonce}`)) throw new HubError(409, "Nonce already used");
    nonces.add(`${agent.agent_id}\n${nonce}`);
    return tokenFor(agent.agent_id);
  }

  function setPolicy(agent: HubAgent, body: Body): Answer {
    const policy = body.message_policy;
    if (policy !== "open" && policy !== "contacts_only") throw new HubError(422, "message_policy must be open or contacts_only");
    agent.message_policy = policy;
    return [200, { message_policy: policy }];
  }

  async function route(method: string, id: string, tail: string[], req: IncomingMessage, json: () => Promise<Body>): Promise<Answer | null> {
    const rest = `${method} ${tail.join("/")}`;
    if (id === "") return method === "POST" ? register(await json()) : null;
    if (rest === "POST verify") return verifyChallenge(agentOr404(id), await json());
    if (rest === "POST keys") return addKey(authed(req, id), await json());
    if (rest === "POST token/refresh") return refresh(agentOr404(id), await json());
    if (rest === "GET policy") return [200, { message_policy: authed(req, id).message_policy }];
    if (rest === "PATCH policy") return setPolicy(authed(req, id), await json());
    if (method === "GET" && tail[0] === "keys" && tail.length === 2) {
      const key = agents.get(id)?.keys.get(tail[1] ?? "");
      if (!key) throw new HubError(404, "Key not found");
      return [200, { key_id: key.key_id, pubkey: key.pubkey, state: key.state, created_at: iso(key.created_at) }];
    }
    return null;
  }

  return { agents, agentOr404, authed, keyOf, route };
}
