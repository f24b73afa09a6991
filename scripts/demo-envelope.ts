// Posts a signed a2a/0.1 envelope to a running relay, the way another agent would:
// makes two throwaway identities, claims both inboxes (so each knows the other's key),
// sends alice -> bob, prints the relay's answer with its signed ack, then bob's queue.
// Usage: npm run demo:envelope [-- --relay http://127.0.0.1:8787] [-- --text "hi"]
import { parseArgs } from "node:util";
import {
  agentIdFor,
  defaultKeyIdFor,
  draftEnvelope,
  formatPublicKey,
  generateSeed,
  publicKeyFromSeed,
  signEnvelope,
  signWithSeed,
  signedRequestHeaders,
  toBase64,
  utf8,
} from "../protocol/index.ts";

const { values } = parseArgs({
  options: { relay: { type: "string", default: "http://127.0.0.1:8787" }, text: { type: "string", default: "Hello from the clawrelay demo" } },
});
const relay = values.relay.replace(/\/+$/, "");

function identity() {
  const seed = generateSeed();
  const publicKey = formatPublicKey(publicKeyFromSeed(seed));
  return { seed, publicKey, id: agentIdFor(publicKey), keyId: defaultKeyIdFor(publicKey), sign: (m: Uint8Array) => signWithSeed(seed, m) };
}

async function signed(agent: ReturnType<typeof identity>, method: string, path: string, body?: unknown): Promise<unknown> {
  const bytes = body === undefined ? new Uint8Array(0) : utf8(JSON.stringify(body));
  const headers = await signedRequestHeaders(agent.publicKey, method, path, bytes, agent.sign);
  const res = await fetch(relay + path, { method, headers: { ...headers, "content-type": "application/json" }, ...(body === undefined ? {} : { body: bytes }) });
  const json: unknown = await res.json();
  if (!res.ok) throw new Error(`${method} ${path} -> ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function claim(agent: ReturnType<typeof identity>): Promise<void> {
  const receiptSeed = generateSeed();
  await signed(agent, "PUT", `/inbox/${agent.id}`, {
    keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }],
    receipt_key: { key_id: defaultKeyIdFor(formatPublicKey(publicKeyFromSeed(receiptSeed))), private_key: toBase64(receiptSeed) },
  });
}

const alice = identity();
const bob = identity();
await claim(alice);
await claim(bob);
console.log(`claimed inboxes ${alice.id} (sender) and ${bob.id} (receiver) on ${relay}`);

const envelope = await signEnvelope(
  draftEnvelope({ from: alice.id, to: bob.id, type: "message", payload: { text: values.text } }),
  alice.keyId,
  alice.sign,
);
const res = await fetch(`${relay}/inbox/${bob.id}/envelopes`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(envelope) });
console.log(`POST /inbox/${bob.id}/envelopes -> ${res.status}`);
console.log(JSON.stringify(await res.json(), null, 2));
console.log(`bob's queue (GET /inbox/${bob.id}/messages?ack=false):`);
console.log(JSON.stringify(await signed(bob, "GET", `/inbox/${bob.id}/messages?ack=false`), null, 2));
