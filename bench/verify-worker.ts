// The Worker bench/verify-bench.ts times from Node: each request runs `n` operations back to back and
// returns. workerd freezes Date and performance.now() while JS runs (a Spectre mitigation), so the
// time can only be read outside: wall time of ?n=N minus ?n=0 is the cost of N operations.
// Bundled from bench/verify-worker.toml; imports the protocol module and the webhook-source verifiers
// exactly as the relay does.
import { verifyWebCrypto } from "../protocol/ed25519.ts";
import { publicKeyFromSeed, signWithSeed, verifyPureJs } from "../protocol/ed25519-pure.ts";
import { draftEnvelope, signingInput } from "../protocol/envelope.ts";
import type { UnsignedEnvelope } from "../protocol/envelope.ts";
import { payloadHash } from "../protocol/payload-hash.ts";
import { toBase64, toHex, utf8 } from "../protocol/encoding.ts";
import { verifyGithub } from "../worker/sources/github.ts";
import { importHmacKey, signedContent } from "../worker/sources/hmac.ts";
import type { HmacKey } from "../worker/sources/hmac.ts";
import type { SourceRequest, Verdict } from "../worker/sources/source-kinds.ts";
import { hashTokenSecret } from "../worker/sources/source-secrets.ts";
import { verifySlack } from "../worker/sources/slack.ts";
import { standardWebhooksKey, verifyStandardWebhooks } from "../worker/sources/standard-webhooks.ts";
import { verifyStripe } from "../worker/sources/stripe.ts";
import { verifyToken } from "../worker/sources/token.ts";

import { SOURCE_BODY_BYTES, VERIFY_OPERATIONS } from "./verify-operations.ts";
import type { VerifyOperation } from "./verify-operations.ts";

interface Fixture {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  unsigned: UnsignedEnvelope;
}

// Fixed seed, id and time: the fixture needs no randomness, so it is the same on every run.
const SEED = new Uint8Array(32).fill(0x42);
let fixture: Fixture | null = null;
let sourceFixture: Map<VerifyOperation, () => Promise<Verdict> | Verdict> | null = null;

function buildFixture(): Fixture {
  const unsigned = draftEnvelope({
    from: "ag_0123456789ab",
    to: "ag_ba9876543210",
    type: "message",
    msg_id: "4f9c1c1e-1f6a-4d1e-9d5c-3a7e2b9f0c11",
    ts: 1_800_000_000,
    payload: { text: "A typical agent message: please summarise the attached thread.", meta: { thread: "t-42", n: 3 } },
  });
  const message = signingInput(unsigned);
  return { publicKey: publicKeyFromSeed(SEED), message, signature: signWithSeed(SEED, message), unsigned };
}

async function hmacHex(key: HmacKey, data: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, data)));
}

/** One signed request per kind, its key imported once (the relay keeps imported keys per source). */
async function buildSourceFixture(): Promise<Map<VerifyOperation, () => Promise<Verdict> | Verdict>> {
  const ts = 1_800_000_000;
  const body = utf8(JSON.stringify({ ref: "refs/heads/main", pad: "x".repeat(SOURCE_BODY_BYTES - 40) }));
  const secret = "a-webhook-secret-of-32-characters";
  const key = await importHmacKey(utf8(secret));
  const standardSecret = `whsec_${toBase64(new Uint8Array(32).fill(7))}`;
  const standardKey = await importHmacKey(standardWebhooksKey(standardSecret)!);
  const request = (headers: Record<string, string>, pathSecret: string | null = null): SourceRequest => ({ headers: new Headers(headers), body, nowSec: ts, pathSecret });
  const github = request({ "x-hub-signature-256": `sha256=${await hmacHex(key, body)}`, "x-github-event": "push", "x-github-delivery": "d-1" });
  const stripe = request({ "stripe-signature": `t=${ts},v1=${await hmacHex(key, signedContent(`${ts}.`, body))}` });
  const slack = request({ "x-slack-request-timestamp": String(ts), "x-slack-signature": `v0=${await hmacHex(key, signedContent(`v0:${ts}:`, body))}` });
  const sw = new Uint8Array(await crypto.subtle.sign("HMAC", standardKey, signedContent(`msg_1.${ts}.`, body)));
  const standard = request({ "webhook-id": "msg_1", "webhook-timestamp": String(ts), "webhook-signature": `v1,${toBase64(sw)}` });
  const token = request({}, secret);
  return new Map<VerifyOperation, () => Promise<Verdict> | Verdict>([
    ["github", () => verifyGithub(github, [key])],
    ["stripe", () => verifyStripe(stripe, [key])],
    ["slack", () => verifySlack(slack, [key])],
    ["standard-webhooks", () => verifyStandardWebhooks(standard, [standardKey])],
    ["token", () => verifyToken(token, [hashTokenSecret(secret)])],
  ]);
}

async function run(op: VerifyOperation, n: number, f: Fixture): Promise<number> {
  let ok = 0;
  const source = sourceFixture?.get(op);
  if (source) {
    for (let i = 0; i < n; i++) ok += "event" in (await source()) ? 1 : 0;
    return ok;
  }
  for (let i = 0; i < n; i++) {
    if (op === "webcrypto") ok += (await verifyWebCrypto(f.publicKey, f.message, f.signature)) ? 1 : 0;
    else if (op === "purejs") ok += verifyPureJs(f.publicKey, f.message, f.signature) ? 1 : 0;
    // What verifyEnvelope rebuilds per message before the signature check: JCS hash, nine-field input.
    else ok += signingInput({ ...f.unsigned, payload_hash: payloadHash(f.unsigned.payload) }).length > 0 ? 1 : 0;
  }
  return ok;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const op = url.searchParams.get("op") as VerifyOperation | null;
    const n = Number(url.searchParams.get("n") ?? "0");
    if (!op || !VERIFY_OPERATIONS.includes(op) || !Number.isSafeInteger(n) || n < 0) {
      return Response.json({ error: `use ?op=${VERIFY_OPERATIONS.join("|")}&n=<count>` }, { status: 400 });
    }
    fixture ??= buildFixture();
    sourceFixture ??= await buildSourceFixture();
    return Response.json({ op, n, ok: await run(op, n, fixture) });
  },
};
