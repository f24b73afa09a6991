// The Worker bench/verify-bench.ts times from Node: each request runs `n` operations back to back and
// returns. workerd freezes Date and performance.now() while JS runs (a Spectre mitigation), so the
// time can only be read outside: wall time of ?n=N minus ?n=0 is the cost of N operations.
// Bundled from bench/verify-worker.toml; imports the protocol module exactly as the relay does.
import { verifyWebCrypto } from "../protocol/ed25519.ts";
import { publicKeyFromSeed, signWithSeed, verifyPureJs } from "../protocol/ed25519-pure.ts";
import { draftEnvelope, signingInput } from "../protocol/envelope.ts";
import type { UnsignedEnvelope } from "../protocol/envelope.ts";
import { payloadHash } from "../protocol/payload-hash.ts";

export const VERIFY_OPERATIONS = ["webcrypto", "purejs", "hash-input"] as const;
export type VerifyOperation = (typeof VERIFY_OPERATIONS)[number];

interface Fixture {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  unsigned: UnsignedEnvelope;
}

// Fixed seed, id and time: the fixture needs no randomness, so it is the same on every run.
const SEED = new Uint8Array(32).fill(0x42);
let fixture: Fixture | null = null;

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

async function run(op: VerifyOperation, n: number, f: Fixture): Promise<number> {
  let ok = 0;
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
    return Response.json({ op, n, ok: await run(op, n, fixture) });
  },
};
