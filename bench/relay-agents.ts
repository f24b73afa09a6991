// Identities and signed calls against the relay from Node, made with the protocol module as a real client
// makes them (like scripts/demo-envelope.ts): the senders, receivers and directory agents of the scenarios.
import { agentIdFor, defaultKeyIdFor, draftEnvelope, formatPublicKey, generateSeed, importSigningKey, publicKeyFromSeed, signEnvelope, signedRequestHeaders, toBase64, utf8 } from "../protocol/index.ts";
import type { HttpClient } from "./http-client.ts";

/** Hub of every bench inbox: the discard port on loopback, so a key look-up that reached a hub would fail here, not leave the machine. */
export const LOOPBACK_HUB_URL = "http://127.0.0.1:9";
const PAYLOAD_TEXT = "Benchmark message from another agent: please look at the attached thread and reply. ".repeat(2);

/** `receiptKey` as a claim carries it, worked out once (a timed claim does no pure-JS maths); `sign`: Node's Ed25519, far cheaper than pure JS. */
export type BenchAgent = { id: string; publicKey: string; keyId: string; receiptKey: { key_id: string; private_key: string }; sign(message: Uint8Array): Promise<Uint8Array> };

export const benchAgent = async (publicKey: string, sign: BenchAgent["sign"], receiptKey: BenchAgent["receiptKey"]): Promise<BenchAgent> => ({ id: await agentIdFor(publicKey), publicKey, keyId: await defaultKeyIdFor(publicKey), receiptKey, sign });

export async function newAgent(): Promise<BenchAgent> {
  const [seed, receiptSeed] = [generateSeed(), generateSeed()];
  const receiptKey = { key_id: await defaultKeyIdFor(formatPublicKey(publicKeyFromSeed(receiptSeed))), private_key: toBase64(receiptSeed) };
  return benchAgent(formatPublicKey(publicKeyFromSeed(seed)), await importSigningKey(seed), receiptKey);
}

export async function signedCall<T>(client: HttpClient, agent: BenchAgent, method: string, path: string, status: number, body?: unknown): Promise<T> {
  const bytes = body === undefined ? new Uint8Array(0) : utf8(JSON.stringify(body));
  const headers = await signedRequestHeaders(agent.publicKey, method, path, bytes, agent.sign);
  const answer = await client.request(method, path, { ...headers, "content-type": "application/json" }, body === undefined ? undefined : bytes);
  if (answer.status !== status) throw new Error(`${method} ${path} -> ${answer.status} (expected ${status}): ${answer.body.slice(0, 300)}`);
  return (answer.body ? JSON.parse(answer.body) : null) as T;
}

export async function claimInbox(client: HttpClient, agent: BenchAgent, settings: Record<string, unknown> = { rate_per_minute: 10_000 }): Promise<string> {
  const claim = { keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }], receipt_key: agent.receiptKey, hub_url: LOOPBACK_HUB_URL, ...settings };
  return (await signedCall<{ webhook_token: string }>(client, agent, "PUT", `/inbox/${agent.id}`, 201, claim)).webhook_token;
}

const messages = (client: HttpClient, agent: BenchAgent, query: string) => signedCall<{ count: number; next_after: number; backlog: number }>(client, agent, "GET", `/inbox/${agent.id}/messages?${query}`, 200);

export async function emptyInbox(client: HttpClient, agent: BenchAgent): Promise<void> {
  for (let page = await messages(client, agent, "after=0&ack=true&limit=100"); page.count > 0; ) page = await messages(client, agent, `after=${page.next_after}&ack=true&limit=100`);
}

export const inboxBacklog = async (client: HttpClient, agent: BenchAgent) => (await messages(client, agent, "ack=false&limit=1")).backlog;

export async function presignEnvelopes(senders: readonly BenchAgent[], to: string, count: number): Promise<{ msgId: string; body: string }[]> {
  const out: { msgId: string; body: string }[] = [];
  for (let i = 0; i < count; i++) {
    const sender = senders[i % senders.length]!;
    const envelope = await signEnvelope(await draftEnvelope({ from: sender.id, to, type: "message", payload: { text: PAYLOAD_TEXT, seq: i } }), sender.keyId, sender.sign);
    out.push({ msgId: envelope.msg_id, body: JSON.stringify(envelope) });
  }
  return out;
}
