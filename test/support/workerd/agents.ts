// Test identities and signed requests, made with the protocol module as a real client would. One
// exception: newAgent() is synchronous, so the ag_ id and default key id (SHA-256, async in the protocol)
// are worked out with node:crypto here — an independent computation of the same rule, held to the
// protocol's agentIdFor/defaultKeyIdFor by test/protocol/identity.test.ts (and every claim checks it).
import { createHash } from "node:crypto";
import { env, exports } from "cloudflare:workers";
import {
  draftEnvelope,
  formatPublicKey,
  generateSeed,
  publicKeyFromSeed,
  signEnvelope,
  signWithSeed,
  signedRequestHeaders,
  toBase64,
  utf8,
} from "../../../protocol/index.ts";
import type { Envelope, EnvelopeDraft } from "../../../protocol/index.ts";

export const RELAY = "https://relay.test";

export interface TestAgent {
  id: string;
  seed: Uint8Array;
  publicKey: string;
  keyId: string;
  receiptSeed: Uint8Array;
  receiptKeyId: string;
  receiptPublicKey: string;
  sign(message: Uint8Array): Uint8Array;
}

const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");
/** The rule of docs/protocol.md, "Agent ids": ag_ + 12 hex of sha256 over the base64 text. */
export const testAgentIdFor = (publicKey: string) => "ag_" + sha256Hex(publicKey.slice("ed25519:".length)).slice(0, 12);
export const testKeyIdFor = (publicKey: string) => "k_" + sha256Hex(publicKey).slice(0, 12);

export function newAgent(): TestAgent {
  const seed = generateSeed();
  const publicKey = formatPublicKey(publicKeyFromSeed(seed));
  const receiptSeed = generateSeed();
  const receiptPublicKey = formatPublicKey(publicKeyFromSeed(receiptSeed));
  return {
    id: testAgentIdFor(publicKey),
    seed,
    publicKey,
    keyId: testKeyIdFor(publicKey),
    receiptSeed,
    receiptKeyId: testKeyIdFor(receiptPublicKey),
    receiptPublicKey,
    sign: (message) => signWithSeed(seed, message),
  };
}

export function relayFetch(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(new Request(RELAY + path, init));
}

/** A request signed with `signer` (default: the agent's own key), as clawrelay's clients sign them. */
export async function signedFetch(
  agent: TestAgent,
  method: string,
  pathWithQuery: string,
  body?: unknown,
  signer: { publicKey: string; sign(m: Uint8Array): Uint8Array } = agent,
): Promise<Response> {
  const bytes = body === undefined ? new Uint8Array(0) : utf8(JSON.stringify(body));
  const headers = await signedRequestHeaders(signer.publicKey, method, pathWithQuery, bytes, (m) => signer.sign(m));
  return relayFetch(pathWithQuery, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: bytes }),
  });
}

export interface ClaimedInbox {
  agent: TestAgent;
  token: string;
  response: Record<string, unknown>;
}

/** Claims an inbox whose hub is the stand-in hub; extra fields go into the claim body. */
export async function claimInbox(agent: TestAgent = newAgent(), extra: Record<string, unknown> = {}): Promise<ClaimedInbox> {
  const response = await signedFetch(agent, "PUT", `/inbox/${agent.id}`, {
    keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }],
    receipt_key: { key_id: agent.receiptKeyId, private_key: toBase64(agent.receiptSeed) },
    hub_url: env.TEST_HUB_URL,
    ...extra,
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status !== 201) throw new Error(`claim failed: ${response.status} ${JSON.stringify(json)}`);
  return { agent, token: String(json.webhook_token), response: json };
}

export async function envelopeFrom(
  sender: TestAgent,
  to: string,
  overrides: Partial<EnvelopeDraft> = {},
): Promise<Envelope> {
  const draft = await draftEnvelope({ from: sender.id, to, type: "message", payload: { text: "hello" }, ...overrides });
  return signEnvelope(draft, sender.keyId, (m) => sender.sign(m));
}

export function postEnvelope(envelope: unknown, to?: string): Promise<Response> {
  const target = to ?? (envelope as Envelope).to;
  return relayFetch(`/inbox/${target}/envelopes`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(envelope),
  });
}

export function postHook(inbox: ClaimedInbox, subpath: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Response> {
  return relayFetch(`/inbox/${inbox.agent.id}/hooks/${subpath}`, {
    method: "POST",
    headers: { authorization: `Bearer ${inbox.token}`, "content-type": "application/json", ...headers },
    body,
  });
}

/** Publishes the agent's key at the stand-in hub, as if registered there. */
export async function registerAtHub(agent: TestAgent, state = "active", claimedOwner?: string): Promise<void> {
  await fetch(`${env.TEST_HUB_URL}/__test/keys`, {
    method: "PUT",
    body: JSON.stringify({ owner: agent.id, key_id: agent.keyId, pubkey: agent.publicKey, state, ...(claimedOwner ? { agent_id: claimedOwner } : {}) }),
  });
}

/** A new agent whose key the stand-in hub knows (active). */
export async function registeredAgent(): Promise<TestAgent> {
  const agent = newAgent();
  await registerAtHub(agent);
  return agent;
}

export async function hubReceipts(agentId: string): Promise<Envelope[]> {
  return (await (await fetch(`${env.TEST_HUB_URL}/__test/receipts/${agentId}`)).json()) as Envelope[];
}

export async function hubLookups(agentId: string, keyId: string): Promise<number> {
  return ((await (await fetch(`${env.TEST_HUB_URL}/__test/lookups/${agentId}/${keyId}`)).json()) as { count: number }).count;
}

export async function errorCode(response: Response): Promise<string> {
  const body = (await response.json()) as { error?: { code?: string; message?: string } };
  if (!body.error?.code || !body.error.message) throw new Error(`not the JSON error shape: ${JSON.stringify(body)}`);
  return body.error.code;
}

export interface PollResult {
  messages: import("../../../protocol/index.ts").DeliveryFrame[];
  count: number;
  has_more: boolean;
  next_after: number;
  /** Messages waiting for the agent (queued, including those in flight on its socket). */
  backlog: number;
  /** Messages on the dead-letter shelf. */
  dead: number;
}

/** GET /messages signed by the agent; `query` like "after=3&ack=false". */
export async function poll(agent: TestAgent, query = "ack=false"): Promise<PollResult> {
  const res = await signedFetch(agent, "GET", `/inbox/${agent.id}/messages?${query}`);
  if (res.status !== 200) throw new Error(`poll failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as PollResult;
}

/** The stored bytes of a delivered message, decoded from its frame. */
export function frameBytes(frame: { body: string; encoding: "utf8" | "base64" }): Uint8Array {
  if (frame.encoding === "utf8") return utf8(frame.body);
  return Uint8Array.from(atob(frame.body), (c) => c.charCodeAt(0));
}

export interface QueueListing {
  messages: import("../../../protocol/index.ts").QueueItem[];
  count: number;
  has_more: boolean;
  next_after: number;
  summary: import("../../../protocol/index.ts").QueueSummary;
  /** What the alarm's jobs failed at, by job name (worker/housekeeping.ts). */
  housekeeping_failures: Record<string, { count: number; last_at: number; last_error: string }>;
}

/** GET /queue signed by the agent (the owner's view); `query` like "state=dead&limit=2". */
export async function listQueue(agent: TestAgent, query = ""): Promise<QueueListing> {
  const res = await signedFetch(agent, "GET", `/inbox/${agent.id}/queue${query ? `?${query}` : ""}`);
  if (res.status !== 200) throw new Error(`queue listing failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as QueueListing;
}

export interface ShownMessage {
  message: import("../../../protocol/index.ts").QueueItem;
  body: string;
  encoding: "utf8" | "base64";
}

/** GET /queue/{id} signed by the agent: one stored message with its body. */
export async function showMessage(agent: TestAgent, id: number): Promise<ShownMessage> {
  const res = await signedFetch(agent, "GET", `/inbox/${agent.id}/queue/${id}`);
  if (res.status !== 200) throw new Error(`showing message ${id} failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as ShownMessage;
}
