/// <reference types="vite/client" />
// The worked examples of docs/protocol.md, recomputed with the protocol's own functions: the signed
// request ("Signed requests", "Worked example") and the envelope reference values ("Envelopes"). Each
// expected string is asserted twice — equal to what the code computes, and present in the document — so
// the test fails when either the code or the document drifts.
import { describe, expect, it } from "vitest";
import doc from "../../docs/protocol.md?raw";
import {
  REQUEST_HEADERS,
  agentIdFor,
  decodeUtf8,
  defaultKeyIdFor,
  draftEnvelope,
  formatPublicKey,
  fromBase64,
  importSigningKey,
  parsePublicKey,
  payloadHash,
  publicKeyFromSeed,
  requestSigningInput,
  signEnvelope,
  signWithSeed,
  signedRequestHeaders,
  signingInput,
  toBase64,
  toHex,
  utf8,
  verifyWebCrypto,
} from "../../protocol/index.ts";
import type { RequestToSign } from "../../protocol/index.ts";
import { sha256 } from "@noble/hashes/sha2.js";
import { verifySignedRequest } from "../../worker/access/request-auth.ts";
import { VECTOR } from "../support/workerd/test-vector.ts";

const { seed: SEED_B64, publicKey: PUBLIC_KEY, agentId: AGENT_ID } = VECTOR;
const DEFAULT_KEY_ID = "k_6368d976ac0b";

const EXAMPLE: RequestToSign = {
  method: "GET",
  pathWithQuery: "/inbox/ag_ff73a0647bbc/messages?after=41&limit=50&timeout=25",
  timestamp: 1700000000,
  nonce: "0123456789abcdef0123456789abcdef",
  body: new Uint8Array(0),
};
const EMPTY_BODY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
const SIGNING_INPUT = [
  "clawrelay-request/1",
  "GET",
  "/inbox/ag_ff73a0647bbc/messages?after=41&limit=50&timeout=25",
  "1700000000",
  "0123456789abcdef0123456789abcdef",
  EMPTY_BODY_SHA256,
].join("\n");
const SIGNING_INPUT_BYTES = 193;
const SIGNING_INPUT_SHA256 = "a9d25e06416ffd513d89d9f2aaf2c7c1802455431ce91ada692e78e5d7d690d3";
const SIGNATURE = "fZ2t0Grbj4K7DBDCTPFgfYXDR7df/KhOhRYFjaogaTbFkTEEReZXrcVeH6gZhm6iYFgnN0b9dVEodOoNtRwwDg==";

const ENVELOPE_INPUT = [
  "a2a/0.1",
  "00000000-0000-4000-8000-000000000001",
  "1700000000",
  AGENT_ID,
  "ag_000000000000",
  "message",
  "",
  "3600",
  VECTOR.hashHello,
].join("\n");
const HASH_EMPTY_PAYLOAD = VECTOR.hashEmpty;
const ENVELOPE_SIG = VECTOR.envelopeSig;

const seed = fromBase64(SEED_B64)!;
const sign = (message: Uint8Array) => signWithSeed(seed, message);
const codeBlock = (text: string, lang = "text") => "```" + lang + "\n" + text + "\n```";

/** The four header lines in the document's order, built from the protocol's header names. */
function headerLines(headers: Record<string, string>): string {
  return [REQUEST_HEADERS.key, REQUEST_HEADERS.timestamp, REQUEST_HEADERS.nonce, REQUEST_HEADERS.signature]
    .map((name) => `${name}: ${headers[name]}`)
    .join("\n");
}

describe("docs/protocol.md, Identities", () => {
  it("derives the key text, agent id and default key id from the seed", async () => {
    expect(formatPublicKey(publicKeyFromSeed(seed))).toBe(PUBLIC_KEY);
    expect(await agentIdFor(PUBLIC_KEY)).toBe(AGENT_ID);
    expect(toHex(sha256(utf8(PUBLIC_KEY.slice("ed25519:".length)))).slice(0, 12)).toBe(AGENT_ID.slice(3));
    expect(await defaultKeyIdFor(PUBLIC_KEY)).toBe(DEFAULT_KEY_ID);
    for (const value of [SEED_B64, PUBLIC_KEY, AGENT_ID, DEFAULT_KEY_ID]) expect(doc).toContain(value);
  });
});

describe("docs/protocol.md, Signed requests: the worked example", () => {
  it("builds the six-line signing input, with no trailing newline", async () => {
    const input = await requestSigningInput(EXAMPLE);
    expect(decodeUtf8(input)).toBe(SIGNING_INPUT);
    expect(input.length).toBe(SIGNING_INPUT_BYTES);
    expect(input[input.length - 1]).not.toBe(0x0a);
    expect(toHex(sha256(EXAMPLE.body))).toBe(EMPTY_BODY_SHA256);
    expect(toHex(sha256(input))).toBe(SIGNING_INPUT_SHA256);
    expect(doc).toContain(codeBlock(SIGNING_INPUT));
    expect(doc).toContain(`${SIGNING_INPUT_BYTES} bytes`);
    expect(doc).toContain(SIGNING_INPUT_SHA256);
    expect(doc).toContain(EMPTY_BODY_SHA256);
  });

  it("signs to the documented signature with the pure-JS and the WebCrypto signer", async () => {
    const input = await requestSigningInput(EXAMPLE);
    expect(toBase64(signWithSeed(seed, input))).toBe(SIGNATURE);
    expect(toBase64(await (await importSigningKey(seed))(input))).toBe(SIGNATURE);
    expect(doc).toContain(codeBlock(SIGNATURE));
  });

  it("verifies with verifyWebCrypto, and stops verifying when any line changes", async () => {
    const key = parsePublicKey(PUBLIC_KEY)!;
    const signature = fromBase64(SIGNATURE)!;
    expect(await verifyWebCrypto(key, await requestSigningInput(EXAMPLE), signature)).toBe(true);
    const changed: RequestToSign[] = [
      { ...EXAMPLE, method: "PUT" },
      { ...EXAMPLE, pathWithQuery: "/inbox/ag_ff73a0647bbc/messages?after=42&limit=50&timeout=25" },
      { ...EXAMPLE, timestamp: EXAMPLE.timestamp + 1 },
      { ...EXAMPLE, nonce: "0123456789abcdef0123456789abcdee" },
      { ...EXAMPLE, body: utf8("{}") },
    ];
    for (const request of changed) expect(await verifyWebCrypto(key, await requestSigningInput(request), signature)).toBe(false);
    expect(await verifyWebCrypto(key, utf8(SIGNING_INPUT + "\n"), signature)).toBe(false);
  });

  it("documents the request with exactly these four header values", () => {
    const headers = {
      [REQUEST_HEADERS.key]: PUBLIC_KEY,
      [REQUEST_HEADERS.timestamp]: String(EXAMPLE.timestamp),
      [REQUEST_HEADERS.nonce]: EXAMPLE.nonce,
      [REQUEST_HEADERS.signature]: SIGNATURE,
    };
    const requestLine = `${EXAMPLE.method} ${EXAMPLE.pathWithQuery} HTTP/1.1\nHost: relay.example`;
    expect(doc).toContain(codeBlock(`${requestLine}\n${headerLines(headers)}`, "http"));
  });

  it("matches what signedRequestHeaders sends (its nonce is random, the rest is the same)", async () => {
    const headers = await signedRequestHeaders(PUBLIC_KEY, EXAMPLE.method, EXAMPLE.pathWithQuery, EXAMPLE.body, sign, EXAMPLE.timestamp);
    expect(Object.keys(headers).sort()).toEqual(Object.values(REQUEST_HEADERS).sort());
    expect(headers[REQUEST_HEADERS.key]).toBe(PUBLIC_KEY);
    expect(headers[REQUEST_HEADERS.timestamp]).toBe(String(EXAMPLE.timestamp));
    const nonce = headers[REQUEST_HEADERS.nonce]!;
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
    const input = await requestSigningInput({ ...EXAMPLE, nonce });
    expect(await verifyWebCrypto(parsePublicKey(PUBLIC_KEY)!, input, fromBase64(headers[REQUEST_HEADERS.signature]!)!)).toBe(true);
  });

  it("is accepted by the relay's own check, which signs url.pathname + url.search", async () => {
    const headers = {
      [REQUEST_HEADERS.key]: PUBLIC_KEY,
      [REQUEST_HEADERS.timestamp]: String(EXAMPLE.timestamp),
      [REQUEST_HEADERS.nonce]: EXAMPLE.nonce,
      [REQUEST_HEADERS.signature]: SIGNATURE,
    };
    const request = new Request(`https://relay.example${EXAMPLE.pathWithQuery}`, { method: EXAMPLE.method, headers });
    await expect(verifySignedRequest(request, EXAMPLE.body, EXAMPLE.timestamp)).resolves.toMatchObject({ publicKey: PUBLIC_KEY, nonce: EXAMPLE.nonce });
    // The host is not signed: the same headers pass on another origin.
    const elsewhere = new Request(`http://127.0.0.1:8787${EXAMPLE.pathWithQuery}`, { method: EXAMPLE.method, headers });
    await expect(verifySignedRequest(elsewhere, EXAMPLE.body, EXAMPLE.timestamp)).resolves.toMatchObject({ publicKey: PUBLIC_KEY });
  });

  it("signs the query raw, as sent: a percent-encoded spelling of the same query is another request", async () => {
    const raw = "/inbox/ag_ff73a0647bbc/messages?after=%34%31&limit=50&timeout=25";
    const headersFor = async (pathWithQuery: string) => {
      const input = await requestSigningInput({ ...EXAMPLE, pathWithQuery });
      return {
        [REQUEST_HEADERS.key]: PUBLIC_KEY,
        [REQUEST_HEADERS.timestamp]: String(EXAMPLE.timestamp),
        [REQUEST_HEADERS.nonce]: EXAMPLE.nonce,
        [REQUEST_HEADERS.signature]: toBase64(sign(input)),
      };
    };
    const sent = `https://relay.example${raw}`;
    expect(new URL(sent).pathname + new URL(sent).search).toBe(raw);
    await expect(verifySignedRequest(new Request(sent, { headers: await headersFor(raw) }), EXAMPLE.body, EXAMPLE.timestamp)).resolves.toBeTruthy();
    await expect(verifySignedRequest(new Request(sent, { headers: await headersFor(EXAMPLE.pathWithQuery) }), EXAMPLE.body, EXAMPLE.timestamp)).rejects.toMatchObject({
      status: 401,
      code: "invalid_request_signature",
    });
  });
});

describe("docs/protocol.md, Envelopes: the reference values", () => {
  it("builds the nine-line input and signs it to the documented sig.value", async () => {
    const draft = await draftEnvelope({
      msg_id: "00000000-0000-4000-8000-000000000001",
      ts: 1700000000,
      from: AGENT_ID,
      to: "ag_000000000000",
      type: "message",
      reply_to: null,
      ttl_sec: 3600,
      payload: { text: "hello" },
    });
    expect(decodeUtf8(signingInput(draft))).toBe(ENVELOPE_INPUT);
    expect(await payloadHash({})).toBe(HASH_EMPTY_PAYLOAD);
    const envelope = await signEnvelope(draft, "k_test", sign);
    expect(envelope.sig.value).toBe(ENVELOPE_SIG);
    expect(doc).toContain(codeBlock(ENVELOPE_INPUT));
    expect(doc).toContain(draft.payload_hash);
    expect(doc).toContain(HASH_EMPTY_PAYLOAD);
    expect(doc).toContain(ENVELOPE_SIG);
  });
});
