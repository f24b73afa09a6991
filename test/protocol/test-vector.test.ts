// The Agentline test vector (docs/protocol.md lists its values), checked independently with node:crypto and Python: if any of these change,
// clawrelay stops interoperating with real Agentline hubs and clients.
import { describe, expect, it } from "vitest";
import {
  agentIdFor,
  decodeUtf8,
  draftEnvelope,
  formatPublicKey,
  fromBase64,
  importSigningKey,
  jcs,
  parseEnvelope,
  parsePublicKey,
  payloadHash,
  publicKeyFromSeed,
  signEnvelope,
  signatureBytes,
  signingInput,
  signWithSeed,
  verifyPureJs,
  verifyWebCrypto,
} from "../../protocol/index.ts";
import { VECTOR } from "../support/workerd/test-vector.ts";

const { seed: SEED_B64, publicKey: PUBKEY, agentId: AGENT_ID, hashHello: HASH_HELLO, hashEmpty: HASH_EMPTY, envelopeSig: SIG } = VECTOR;

const seed = fromBase64(SEED_B64)!;
const draft = () =>
  draftEnvelope({
    msg_id: "00000000-0000-4000-8000-000000000001",
    ts: 1700000000,
    from: AGENT_ID,
    to: "ag_000000000000",
    type: "message",
    reply_to: null,
    ttl_sec: 3600,
    payload: { text: "hello" },
  });

describe("Agentline test vector", () => {
  it("seed decodes to bytes 0x00..0x1f", () => {
    expect(Array.from(seed)).toEqual(Array.from({ length: 32 }, (_, i) => i));
  });

  it("derives the public key text", () => {
    expect(formatPublicKey(publicKeyFromSeed(seed))).toBe(PUBKEY);
    expect(parsePublicKey(PUBKEY)).toEqual(publicKeyFromSeed(seed));
  });

  it("derives the agent id from the base64 text, with or without the ed25519: prefix", async () => {
    expect(await agentIdFor(PUBKEY)).toBe(AGENT_ID);
    expect(await agentIdFor(PUBKEY.slice("ed25519:".length))).toBe(AGENT_ID);
  });

  it("hashes payloads", async () => {
    expect(await payloadHash({ text: "hello" })).toBe(HASH_HELLO);
    expect(await payloadHash({})).toBe(HASH_EMPTY);
  });

  it("canonicalizes with JCS (RFC 8785): sorted keys at every depth, arrays in order", () => {
    expect(jcs({ z: { y: 1, x: 2 }, a: [3, 4] })).toBe('{"a":[3,4],"z":{"x":2,"y":1}}');
  });

  it("builds the nine-line signing input", async () => {
    const unsigned = await draft();
    expect(unsigned.payload_hash).toBe(HASH_HELLO);
    expect(decodeUtf8(signingInput(unsigned))).toBe(
      ["a2a/0.1", "00000000-0000-4000-8000-000000000001", "1700000000", AGENT_ID, "ag_000000000000", "message", "", "3600", HASH_HELLO].join("\n"),
    );
  });

  it("signs to the vector's sig.value with the pure-JS signer", async () => {
    const envelope = await signEnvelope(await draft(), "k_test", (m) => signWithSeed(seed, m));
    expect(envelope.sig).toEqual({ alg: "ed25519", key_id: "k_test", value: SIG });
  });

  it("signs to the same value with the WebCrypto signer (Ed25519 is deterministic)", async () => {
    const envelope = await signEnvelope(await draft(), "k_test", await importSigningKey(seed));
    expect(envelope.sig.value).toBe(SIG);
  });

  it("verifies on both paths, and the signed envelope parses", async () => {
    const envelope = parseEnvelope(JSON.parse(JSON.stringify(await signEnvelope(await draft(), "k_test", (m) => signWithSeed(seed, m)))));
    const sig = signatureBytes(envelope)!;
    const key = parsePublicKey(PUBKEY)!;
    expect(sig).toEqual(fromBase64(SIG));
    expect(verifyPureJs(key, signingInput(envelope), sig)).toBe(true);
    expect(await verifyWebCrypto(key, signingInput(envelope), sig)).toBe(true);
  });

  it("stops verifying once any signed field changes", async () => {
    const envelope = await signEnvelope(await draft(), "k_test", (m) => signWithSeed(seed, m));
    const sig = fromBase64(SIG)!;
    const key = parsePublicKey(PUBKEY)!;
    for (const changed of [{ ...envelope, ts: 1700000001 }, { ...envelope, reply_to: "x" }, { ...envelope, ttl_sec: 3601 }]) {
      expect(verifyPureJs(key, signingInput(changed), sig)).toBe(false);
      expect(await verifyWebCrypto(key, signingInput(changed), sig)).toBe(false);
    }
  });
});
