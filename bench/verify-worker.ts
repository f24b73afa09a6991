// The Worker the relay and sources scenarios time from Node (bench/verify-timing.ts): each request runs `n`
// operations back to back, built from the protocol module and the webhook-source verifiers as the relay runs them.
import { verifyWebCrypto } from "../protocol/ed25519.ts";
import { publicKeyFromSeed, signWithSeed, verifyPureJs } from "../protocol/ed25519-pure.ts";
import { toBase64, toHex, utf8 } from "../protocol/encoding.ts";
import { draftEnvelope, signingInput } from "../protocol/envelope.ts";
import { jcs, payloadHash } from "../protocol/payload-hash.ts";
import { sha256 } from "../protocol/sha256.ts";
import { strictJsonProblem } from "../protocol/strict-json.ts";
import { canonicalJsonEnd } from "../protocol/canonical-json.ts";
import { payloadOf } from "./bench-payload.ts";
import { verifyGithub } from "../worker/sources/github.ts";
import { importHmacKey, signedContent } from "../worker/sources/hmac.ts";
import type { HmacKey } from "../worker/sources/hmac.ts";
import type { SourceRequest, Verdict } from "../worker/sources/source-kinds.ts";
import { hashTokenSecret } from "../worker/sources/source-secrets.ts";
import { verifySlack } from "../worker/sources/slack.ts";
import { standardWebhooksKey, verifyStandardWebhooks } from "../worker/sources/standard-webhooks.ts";
import { verifyStripe } from "../worker/sources/stripe.ts";
import { verifyToken } from "../worker/sources/token.ts";
import { INTAKE_PAYLOAD_BYTES, SOURCE_BODY_BYTES, VERIFY_OPERATIONS } from "./verify-operations.ts";
import type { VerifyOperation } from "./verify-operations.ts";

type Operation = () => boolean | Verdict | Promise<boolean | Verdict>;
// Fixed seed, id and time: the fixtures need no randomness, so they are the same on every run.
const SEED = new Uint8Array(32).fill(0x42);
const TS = 1_800_000_000;
let operations: Map<VerifyOperation, Operation> | null = null;
const hmacHex = async (key: HmacKey, data: Uint8Array) => toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, data)));

/** One fixture per operation, keys imported once (the relay keeps imported keys per source). */
async function buildOperations(): Promise<Map<VerifyOperation, Operation>> {
  const payload = { text: "A typical agent message: please summarise the attached thread.", meta: { thread: "t-42", n: 3 } };
  const unsigned = await draftEnvelope({ from: "ag_0123456789ab", to: "ag_ba9876543210", type: "message", msg_id: "4f9c1c1e-1f6a-4d1e-9d5c-3a7e2b9f0c11", ts: TS, payload });
  const [publicKey, message] = [publicKeyFromSeed(SEED), signingInput(unsigned)];
  const signature = signWithSeed(SEED, message);
  const body = utf8(JSON.stringify({ ref: "refs/heads/main", pad: "x".repeat(SOURCE_BODY_BYTES - 40) }));
  const secret = "a-webhook-secret-of-32-characters";
  const key = await importHmacKey(utf8(secret));
  const standardKey = await importHmacKey(standardWebhooksKey(`whsec_${toBase64(new Uint8Array(32).fill(7))}`)!);
  const request = (headers: Record<string, string>, pathSecret: string | null = null): SourceRequest => ({ headers: new Headers(headers), body, nowSec: TS, pathSecret });
  const github = request({ "x-hub-signature-256": `sha256=${await hmacHex(key, body)}`, "x-github-event": "push", "x-github-delivery": "d-1" });
  const stripe = request({ "stripe-signature": `t=${TS},v1=${await hmacHex(key, signedContent(`${TS}.`, body))}` });
  const slack = request({ "x-slack-request-timestamp": String(TS), "x-slack-signature": `v0=${await hmacHex(key, signedContent(`v0:${TS}:`, body))}` });
  const sw = toBase64(new Uint8Array(await crypto.subtle.sign("HMAC", standardKey, signedContent(`msg_1.${TS}.`, body))));
  const standard = request({ "webhook-id": "msg_1", "webhook-timestamp": String(TS), "webhook-signature": `v1,${sw}` });
  const token = request({}, secret);
  const tokenHashes = [await hashTokenSecret(secret)];
  // A 256 KiB payload's envelope, as it arrives (bytes), is parsed, and is stored (text again).
  const big = { ...unsigned, payload: payloadOf(INTAKE_PAYLOAD_BYTES) };
  const [bigText, bigJcs] = [JSON.stringify(big), utf8(jcs(big.payload))];
  const bigBytes = utf8(bigText);
  const utf8Strict = new TextDecoder("utf-8", { fatal: true });
  return new Map<VerifyOperation, Operation>([
    ["webcrypto", () => verifyWebCrypto(publicKey, message, signature)],
    ["purejs", () => verifyPureJs(publicKey, message, signature)],
    // What verifyEnvelope rebuilds per message before the signature check: JCS hash, nine-field input.
    ["hash-input", async () => signingInput({ ...unsigned, payload_hash: await payloadHash(unsigned.payload) }).length > 0],
    ["github", () => verifyGithub(github, [key])],
    ["stripe", () => verifyStripe(stripe, [key])],
    ["slack", () => verifySlack(slack, [key])],
    ["standard-webhooks", () => verifyStandardWebhooks(standard, [standardKey])],
    ["token", () => verifyToken(token, tokenHashes)],
    ["utf8-decode", () => utf8Strict.decode(bigBytes).length > 0],
    ["strict-scan", () => strictJsonProblem(bigText) === null],
    ["json-parse", () => typeof JSON.parse(bigText) === "object"],
    ["jcs", () => jcs(big.payload).length > 0],
    // What replaces decoding, the strict scan, JSON.parse and JCS of a payload posted in JCS form (protocol/posted-payload.ts).
    ["canonical-check", () => canonicalJsonEnd(bigJcs, 0, 63) === bigJcs.length],
    ["sha256", async () => (await sha256(bigJcs)).length === 32],
    ["re-serialise", () => utf8(JSON.stringify(big)).length > 0],
  ]);
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const op = url.searchParams.get("op") as VerifyOperation;
    const n = Number(url.searchParams.get("n") ?? "0");
    const operation = (operations ??= await buildOperations()).get(op);
    if (!operation || !Number.isSafeInteger(n) || n < 0) return Response.json({ error: `use ?op=${VERIFY_OPERATIONS.join("|")}&n=<count>` }, { status: 400 });
    let ok = 0;
    for (let i = 0; i < n; i++) {
      // Awaited only when it is a promise, as the relay runs each check.
      const result = operation();
      const done = result instanceof Promise ? await result : result;
      ok += done === true || (typeof done === "object" && "event" in done) ? 1 : 0;
    }
    return Response.json({ op, n, ok });
  },
};
