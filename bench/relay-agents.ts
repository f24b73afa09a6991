// Identities and signed calls against the relay from Node, made with the protocol module as a real
// client makes them (like scripts/demo-envelope.ts). Used by relay-bench.ts, intake-bench.ts,
// delivery-bench.ts and directory-load.ts.
import {
  agentIdFor,
  defaultKeyIdFor,
  draftEnvelope,
  formatPublicKey,
  generateSeed,
  importSigningKey,
  publicKeyFromSeed,
  signEnvelope,
  signedRequestHeaders,
  toBase64,
  utf8,
} from "../protocol/index.ts";
import type { HttpClient } from "./http-client.ts";

/**
 * Hub of every bench inbox: the discard port on loopback. Senders are inboxes on the same relay, so no
 * key look-up should reach a hub; if one did, it would fail here instead of leaving the machine.
 */
export const LOOPBACK_HUB_URL = "http://127.0.0.1:9";

export interface BenchAgent {
  id: string;
  publicKey: string;
  keyId: string;
  /** The inbox's receipt key as a claim carries it: worked out once, so a timed claim does no pure-JS maths. */
  receiptKey: { key_id: string; private_key: string };
  /** Node's Ed25519 (WebCrypto or a KeyObject): far cheaper than pure JS, so pre-signing stays quick. */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

export function benchAgent(publicKey: string, sign: BenchAgent["sign"], receiptKey: BenchAgent["receiptKey"]): BenchAgent {
  return { id: agentIdFor(publicKey), publicKey, keyId: defaultKeyIdFor(publicKey), receiptKey, sign };
}

export async function newAgent(): Promise<BenchAgent> {
  const seed = generateSeed();
  const receiptSeed = generateSeed();
  const receiptKey = { key_id: defaultKeyIdFor(formatPublicKey(publicKeyFromSeed(receiptSeed))), private_key: toBase64(receiptSeed) };
  return benchAgent(formatPublicKey(publicKeyFromSeed(seed)), await importSigningKey(seed), receiptKey);
}

/** A request signed by `agent` (clawrelay's signed-request headers), JSON body if any. */
export async function signedRequest(client: HttpClient, agent: BenchAgent, method: string, path: string, body?: unknown) {
  const bytes = body === undefined ? new Uint8Array(0) : utf8(JSON.stringify(body));
  const headers = await signedRequestHeaders(agent.publicKey, method, path, bytes, agent.sign);
  return client.request(method, path, { ...headers, "content-type": "application/json" }, body === undefined ? undefined : bytes);
}

/**
 * Claims the agent's inbox (signed PUT -> 201) with `settings` on top; by default `rate_per_minute` at
 * its ceiling so the bench is not throttled.
 */
export async function claimInbox(client: HttpClient, agent: BenchAgent, settings: Record<string, unknown> = { rate_per_minute: 10_000 }): Promise<void> {
  const answer = await signedRequest(client, agent, "PUT", `/inbox/${agent.id}`, {
    keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }],
    receipt_key: agent.receiptKey,
    hub_url: LOOPBACK_HUB_URL,
    ...settings,
  });
  if (answer.status !== 201) throw new Error(`claiming ${agent.id} failed: ${answer.status} ${answer.body.slice(0, 300)}`);
}

async function poll(client: HttpClient, agent: BenchAgent, after: number): Promise<{ messages: { id: number }[]; count: number }> {
  const answer = await signedRequest(client, agent, "GET", `/inbox/${agent.id}/messages?after=${after}&ack=true&limit=1`);
  if (answer.status !== 200) throw new Error(`polling ${agent.id} after ${after} failed: ${answer.status} ${answer.body}`);
  return JSON.parse(answer.body) as { messages: { id: number }[]; count: number };
}

/** Acknowledges everything queued in the agent's inbox (pages of 100, each committing the cursor). */
export async function emptyInbox(client: HttpClient, agent: BenchAgent): Promise<void> {
  for (let after = 0; ; ) {
    const answer = await signedRequest(client, agent, "GET", `/inbox/${agent.id}/messages?after=${after}&ack=true&limit=100`);
    if (answer.status !== 200) throw new Error(`emptying ${agent.id} failed: ${answer.status} ${answer.body}`);
    const page = JSON.parse(answer.body) as { count: number; next_after: number };
    if (page.count === 0) return;
    after = page.next_after;
  }
}

/** Messages waiting in the agent's inbox (GET /messages without acknowledging anything). */
export async function inboxBacklog(client: HttpClient, agent: BenchAgent): Promise<number> {
  const answer = await signedRequest(client, agent, "GET", `/inbox/${agent.id}/messages?ack=false&limit=1`);
  if (answer.status !== 200) throw new Error(`polling ${agent.id} failed: ${answer.status} ${answer.body}`);
  return (JSON.parse(answer.body) as { backlog: number }).backlog;
}

/**
 * Empties the queue with two signed polls (ack=true commits the cursor up to `after`), checking on the
 * way that message `lastId` is the newest one stored: every accepted message got the next id.
 */
export async function drainQueue(client: HttpClient, agent: BenchAgent, lastId: number): Promise<void> {
  const last = await poll(client, agent, lastId - 1);
  if (last.messages[0]?.id !== lastId) throw new Error(`expected message ${lastId} to be the newest in ${agent.id}, got ${JSON.stringify(last.messages)}`);
  const rest = await poll(client, agent, lastId);
  if (rest.count !== 0) throw new Error(`${agent.id} still holds ${rest.count}+ messages after ${lastId}`);
}

export interface SignedEnvelope {
  msgId: string;
  body: string;
}

const PAYLOAD_TEXT = "Benchmark message from another agent: please look at the attached thread and reply. ".repeat(2);

/** `count` signed message envelopes to `to`, senders taken round-robin; signed now, sent within the 300 s window. */
export async function presignEnvelopes(senders: readonly BenchAgent[], to: string, count: number): Promise<SignedEnvelope[]> {
  const out: SignedEnvelope[] = [];
  for (let i = 0; i < count; i++) {
    const sender = senders[i % senders.length]!;
    const draft = draftEnvelope({ from: sender.id, to, type: "message", payload: { text: PAYLOAD_TEXT, seq: i } });
    const envelope = await signEnvelope(draft, sender.keyId, sender.sign);
    out.push({ msgId: envelope.msg_id, body: JSON.stringify(envelope) });
  }
  return out;
}
