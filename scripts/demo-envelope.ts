// Posts a signed a2a/0.1 envelope to a running relay, the way another agent would:
// makes two throwaway identities, claims both inboxes (so each knows the other's key),
// sends alice -> bob, prints the relay's answer with its signed ack, then bob's queue.
// Usage: npm run demo:envelope [-- --relay http://127.0.0.1:8787] [-- --text "hi"]
// The default relay is npm start's (port $CLAWRELAY_DEV_PORT, else 8787). A failure is one line, no stack.
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

const DEFAULT_RELAY = `http://127.0.0.1:${process.env.CLAWRELAY_DEV_PORT ?? 8787}`;

/** A failure this script explains itself: printed as one line, exit 1. */
class DemoError extends Error {}

function parseFlags() {
  try {
    return parseArgs({ options: { relay: { type: "string" }, text: { type: "string", default: "Hello from the clawrelay demo" } } }).values;
  } catch (err) {
    process.stderr.write(`demo:envelope: ${(err as Error).message.split("\n")[0]}\nusage: npm run demo:envelope [-- --relay URL] [-- --text TEXT]\n`);
    process.exit(2);
  }
}

const values = parseFlags();
const relay = (values.relay ?? DEFAULT_RELAY).replace(/\/+$/, "");
if (!/^https?:\/\/[^/]/.test(relay) || !URL.canParse(relay)) {
  process.stderr.write(`demo:envelope: --relay must be an http(s) URL, e.g. http://127.0.0.1:8787 (not "${relay}")\n`);
  process.exit(2);
}
const noRelay = values.relay === undefined ? `no relay at ${relay} — start one with \`npm start\` (or set CLAWRELAY_DEV_PORT)` : `no relay at ${relay} — is it running? check --relay`;

/** fetch, with "nothing listens there" and "that is not a relay" said in words. */
async function relayFetch(path: string, init: RequestInit): Promise<{ status: number; ok: boolean; json: unknown }> {
  let res: Response;
  try {
    res = await fetch(relay + path, { ...init, signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new DemoError(cause?.code === "ECONNREFUSED" ? noRelay : `${noRelay} (${cause?.message ?? (err as Error).message})`);
  }
  const text = await res.text();
  try {
    return { status: res.status, ok: res.ok, json: JSON.parse(text) as unknown };
  } catch {
    throw new DemoError(`${relay} answered ${init.method ?? "GET"} ${path} with ${res.status} and no JSON: it is not a clawrelay relay; check --relay or CLAWRELAY_DEV_PORT`);
  }
}

async function identity() {
  const seed = generateSeed();
  const publicKey = formatPublicKey(publicKeyFromSeed(seed));
  return { seed, publicKey, id: await agentIdFor(publicKey), keyId: await defaultKeyIdFor(publicKey), sign: (m: Uint8Array) => signWithSeed(seed, m) };
}

type Identity = Awaited<ReturnType<typeof identity>>;

async function signed(agent: Identity, method: string, path: string, body?: unknown): Promise<unknown> {
  const bytes = body === undefined ? new Uint8Array(0) : utf8(JSON.stringify(body));
  const headers = await signedRequestHeaders(agent.publicKey, method, path, bytes, agent.sign);
  const res = await relayFetch(path, { method, headers: { ...headers, "content-type": "application/json" }, ...(body === undefined ? {} : { body: bytes }) });
  if (!res.ok) throw new DemoError(`${method} ${path} -> ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

async function claim(agent: Identity): Promise<void> {
  const receiptSeed = generateSeed();
  await signed(agent, "PUT", `/inbox/${agent.id}`, {
    keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }],
    receipt_key: { key_id: await defaultKeyIdFor(formatPublicKey(publicKeyFromSeed(receiptSeed))), private_key: toBase64(receiptSeed) },
  });
}

async function demo(): Promise<void> {
  const alice = await identity();
  const bob = await identity();
  await claim(alice);
  await claim(bob);
  console.log(`claimed inboxes ${alice.id} (sender) and ${bob.id} (receiver) on ${relay}`);

  const envelope = await signEnvelope(
    await draftEnvelope({ from: alice.id, to: bob.id, type: "message", payload: { text: values.text ?? "" } }),
    alice.keyId,
    alice.sign,
  );
  const res = await relayFetch(`/inbox/${bob.id}/envelopes`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(envelope) });
  console.log(`POST /inbox/${bob.id}/envelopes -> ${res.status}`);
  console.log(JSON.stringify(res.json, null, 2));
  console.log(`bob's queue (GET /inbox/${bob.id}/messages?ack=false):`);
  console.log(JSON.stringify(await signed(bob, "GET", `/inbox/${bob.id}/messages?ack=false`), null, 2));
}

try {
  await demo();
} catch (err) {
  const known = err instanceof DemoError;
  process.stderr.write(`demo:envelope: ${known ? err.message : `unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`}\n`);
  process.exit(1);
}
