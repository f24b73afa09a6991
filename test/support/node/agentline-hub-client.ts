// What tests do at the stand-in hub as an agent would, over its own HTTP API: make an agent (webhook
// era: anonymous registration and its challenge; today: an owner's bind code claimed with two proofs),
// sign and send envelopes (a2a/0.1, or a2a/0.2 with topic and goal signed), refresh a token as another
// client would. Imported by agentline-hub.ts and the tests; covered by test/node/agentline-hub.test.ts.
import { randomBytes, randomUUID } from "node:crypto";
import type { HubUser } from "./agentline-hub-world.ts";
import { publicKeyText, signBytes, signEnvelope } from "./agentline-hub-wire.ts";
import type { Envelope, EnvelopeFields } from "./agentline-hub-wire.ts";

export interface HubReply { status: number; body: unknown; headers: Record<string, string> }

export interface SendOptions {
  /** Envelope topic: an unsigned extra field in a2a/0.1, signed line 10 in a2a/0.2. */
  topic?: string;
  goal?: string;
  mentions?: string[];
  v?: "a2a/0.1" | "a2a/0.2";
  /** `?topic=` on /hub/send (changes the session key and the record's topic, adds no text line). */
  queryTopic?: string;
  type?: string;
  replyTo?: string | null;
  /** The whole payload (default {text}). */
  payload?: Record<string, unknown>;
  ttlSec?: number;
  msgId?: string;
}

export interface HubTestAgent {
  agentId: string;
  keyId: string;
  seed: Uint8Array;
  publicKey: string;
  displayName: string;
  /** The token this test client holds (a refresh by "another client" does not change it). */
  token: string;
  /** Today: the owner who installed it. */
  owner: HubUser | null;
  /** A signed envelope from this agent. */
  envelope(to: string, text: string, options?: SendOptions): Envelope;
  /** Signs and posts to /hub/send with `token`. */
  send(to: string, text: string, options?: SendOptions): Promise<HubReply>;
}

export async function hubCall(base: string, method: string, path: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}): Promise<HubReply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(base + path, { method, headers, ...(options.body === undefined ? {} : { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) }) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body, headers: Object.fromEntries(res.headers) };
}

function expect2xx(reply: HubReply, what: string): Record<string, unknown> {
  if (reply.status < 200 || reply.status > 299) throw new Error(`stand-in hub refused ${what}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as Record<string, unknown>;
}

const signNonce = (seed: Uint8Array, nonce: string) => signBytes(seed, Buffer.from(nonce, "base64"));

function testAgent(base: string, fields: Omit<HubTestAgent, "envelope" | "send">): HubTestAgent {
  const agent: HubTestAgent = {
    ...fields,
    envelope: (to, text, options = {}) => {
      const v = options.v ?? "a2a/0.1";
      const envelopeFields: EnvelopeFields = {
        v, msg_id: options.msgId ?? randomUUID(), ts: Math.floor(Date.now() / 1000), from: agent.agentId, to, type: options.type ?? "message",
        reply_to: options.replyTo ?? null, ttl_sec: options.ttlSec ?? 3600, payload: options.payload ?? { text },
        ...(options.topic !== undefined || v !== "a2a/0.1" ? { topic: options.topic ?? null } : {}),
        ...(options.goal !== undefined || v !== "a2a/0.1" ? { goal: options.goal ?? null } : {}),
        ...(options.mentions ? { mentions: options.mentions } : {}),
      };
      return signEnvelope(agent.seed, agent.keyId, envelopeFields);
    },
    send: (to, text, options = {}) => {
      const query = options.queryTopic === undefined ? "" : `?topic=${encodeURIComponent(options.queryTopic)}`;
      return hubCall(base, "POST", `/hub/send${query}`, { body: agent.envelope(to, text, options), token: agent.token });
    },
  };
  return agent;
}

/** Webhook era: POST /registry/agents, then /verify signed over the decoded challenge. */
export async function registerAgent(base: string, displayName: string, seed: Uint8Array, bio: string | null): Promise<HubTestAgent> {
  const publicKey = publicKeyText(seed);
  const registered = expect2xx(await hubCall(base, "POST", "/registry/agents", { body: { display_name: displayName, pubkey: publicKey, ...(bio === null ? {} : { bio }) } }), `to register ${displayName}`);
  const [agentId, keyId, challenge] = [String(registered.agent_id), String(registered.key_id), String(registered.challenge)];
  const verified = expect2xx(await hubCall(base, "POST", `/registry/agents/${agentId}/verify`, { body: { key_id: keyId, challenge, sig: signNonce(seed, challenge) } }), `to verify ${displayName}`);
  return testAgent(base, { agentId, keyId, seed, publicKey, displayName, token: String(verified.agent_token), owner: null });
}

/** Today: the owner's bind code, claimed with the host's and the agent's proofs (two different keys). */
export async function installAgent(base: string, displayName: string, seed: Uint8Array, bio: string | null, owner: HubUser): Promise<HubTestAgent> {
  const issued = expect2xx(await hubCall(base, "POST", "/api/users/me/agents/openclaw/install", { body: { name: displayName, ...(bio === null ? {} : { bio }) }, token: owner.token }), `a bind code for ${displayName}`);
  const [bindCode, nonce] = [String(issued.bind_code), String(issued.nonce)];
  const hostSeed = randomBytes(32);
  const proof = (keySeed: Uint8Array) => ({ pubkey: publicKeyText(keySeed), proof: { nonce, sig: signNonce(keySeed, nonce) } });
  const claimed = expect2xx(await hubCall(base, "POST", "/openclaw/install-claim", { body: { bind_code: bindCode, host: proof(hostSeed), agent: proof(seed) } }), `the install claim of ${displayName}`);
  const agent = claimed.agent as Record<string, unknown>;
  return testAgent(base, { agentId: String(agent.id), keyId: String(agent.key_id), seed, publicKey: publicKeyText(seed), displayName, token: String(agent.token), owner });
}

/** POST …/token/refresh signed by `keyId` over a fresh nonce: the new token (today: every older one dies). */
export async function refreshToken(base: string, agentId: string, keyId: string, seed: Uint8Array): Promise<string> {
  const nonce = randomBytes(32).toString("base64");
  const body = expect2xx(await hubCall(base, "POST", `/registry/agents/${agentId}/token/refresh`, { body: { key_id: keyId, nonce, sig: signNonce(seed, nonce) } }), `to refresh ${agentId}'s token`);
  return String(body.agent_token);
}
