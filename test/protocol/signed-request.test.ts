// Signed HTTP requests and WebSocket connects: the signing inputs must bind every part of the request,
// and carry distinct tags so a signature made for one purpose never passes as another (or as an envelope).
import { describe, expect, it } from "vitest";
import {
  REQUEST_HEADERS,
  connectSigningInput,
  decodeUtf8,
  draftEnvelope,
  formatPublicKey,
  fromBase64,
  parsePublicKey,
  publicKeyFromSeed,
  requestSigningInput,
  signWithSeed,
  signedRequestHeaders,
  signingInput,
  utf8,
  verifyWebCrypto,
} from "../../protocol/index.ts";
import type { RequestToSign } from "../../protocol/index.ts";

const base: RequestToSign = {
  method: "PUT",
  pathWithQuery: "/inbox/ag_ff73a0647bbc",
  timestamp: 1700000000,
  nonce: "00112233445566778899aabbccddeeff",
  body: utf8('{"keys":[]}'),
};

const seed = new Uint8Array(32).fill(9);
const publicKeyText = formatPublicKey(publicKeyFromSeed(seed));
const sign = (m: Uint8Array) => signWithSeed(seed, m);

function firstLine(bytes: Uint8Array): string {
  return decodeUtf8(bytes)!.split("\n")[0]!;
}

describe("requestSigningInput", () => {
  it("is deterministic", async () => {
    expect(await requestSigningInput({ ...base, body: base.body.slice() })).toEqual(await requestSigningInput(base));
  });

  it("changes with every signed part", async () => {
    const variants: RequestToSign[] = [
      { ...base, method: "POST" },
      { ...base, pathWithQuery: "/inbox/ag_ff73a0647bbc?x=1" },
      { ...base, pathWithQuery: "/inbox/ag_000000000000" },
      { ...base, timestamp: 1700000001 },
      { ...base, nonce: "ffeeddccbbaa99887766554433221100" },
      { ...base, body: utf8('{"keys":[1]}') },
      { ...base, body: new Uint8Array(0) },
    ];
    const texts = new Set(await Promise.all([base, ...variants].map(async (r) => decodeUtf8(await requestSigningInput(r)))));
    expect(texts.size).toBe(variants.length + 1);
  });

  it("binds the body by its sha256, so the input stays small for large bodies", async () => {
    const input = decodeUtf8(await requestSigningInput({ ...base, body: new Uint8Array(1 << 20) }))!;
    expect(input.split("\n").at(-1)).toMatch(/^[0-9a-f]{64}$/);
    expect(input.length).toBeLessThan(300);
  });
});

describe("signing inputs cannot collide across purposes", () => {
  const envelopeInput = async () => signingInput(await draftEnvelope({ from: "ag_a", to: "ag_b", type: "message", payload: {} }));

  it("each starts with its own tag line", async () => {
    expect(firstLine(await requestSigningInput(base))).toBe("clawrelay-request/1");
    expect(firstLine(connectSigningInput("ag_ff73a0647bbc", "nonce"))).toBe("clawrelay-connect/1");
    expect(firstLine(await envelopeInput())).toBe("a2a/0.1");
  });

  it("keeps its tag even when the caller-chosen fields imitate another input", async () => {
    // Fields with embedded newlines and other tags cannot move the first line.
    const forgedConnect = connectSigningInput("clawrelay-request/1\nPUT", "a2a/0.1\nx");
    const forgedRequest = await requestSigningInput({ ...base, method: "clawrelay-connect/1\nag_x", pathWithQuery: "a2a/0.1" });
    expect(firstLine(forgedConnect)).toBe("clawrelay-connect/1");
    expect(firstLine(forgedRequest)).toBe("clawrelay-request/1");
    expect(forgedConnect).not.toEqual(forgedRequest);
  });

  it("a connect signature does not verify as a request signature", async () => {
    const key = publicKeyFromSeed(seed);
    const connectSig = sign(connectSigningInput("ag_a", base.nonce));
    expect(await verifyWebCrypto(key, connectSigningInput("ag_a", base.nonce), connectSig)).toBe(true);
    expect(await verifyWebCrypto(key, await requestSigningInput(base), connectSig)).toBe(false);
  });
});

describe("signedRequestHeaders", () => {
  it("produces the four headers, signed over requestSigningInput", async () => {
    const headers = await signedRequestHeaders(publicKeyText, base.method, base.pathWithQuery, base.body, sign, 1700000000);
    expect(Object.keys(headers).sort()).toEqual(Object.values(REQUEST_HEADERS).sort());
    expect(headers[REQUEST_HEADERS.key]).toBe(publicKeyText);
    expect(headers[REQUEST_HEADERS.timestamp]).toBe("1700000000");
    const nonce = headers[REQUEST_HEADERS.nonce]!;
    expect(nonce).toMatch(/^[0-9a-f]{32}$/);

    const signature = fromBase64(headers[REQUEST_HEADERS.signature]!)!;
    expect(signature.length).toBe(64);
    const key = parsePublicKey(headers[REQUEST_HEADERS.key])!;
    const signed = { ...base, timestamp: 1700000000, nonce };
    expect(await verifyWebCrypto(key, await requestSigningInput(signed), signature)).toBe(true);
    expect(await verifyWebCrypto(key, await requestSigningInput({ ...signed, pathWithQuery: "/inbox/ag_000000000000" }), signature)).toBe(false);
    expect(await verifyWebCrypto(key, await requestSigningInput({ ...signed, body: utf8("{}") }), signature)).toBe(false);
  });

  it("uses a fresh nonce per request", async () => {
    const a = await signedRequestHeaders(publicKeyText, "GET", "/x", new Uint8Array(0), sign, 1);
    const b = await signedRequestHeaders(publicKeyText, "GET", "/x", new Uint8Array(0), sign, 1);
    expect(a[REQUEST_HEADERS.nonce]).not.toBe(b[REQUEST_HEADERS.nonce]);
    expect(a[REQUEST_HEADERS.signature]).not.toBe(b[REQUEST_HEADERS.signature]);
  });

  it("defaults the timestamp to now", async () => {
    const before = Math.floor(Date.now() / 1000);
    const headers = await signedRequestHeaders(publicKeyText, "GET", "/x", new Uint8Array(0), sign);
    expect(Number(headers[REQUEST_HEADERS.timestamp])).toBeGreaterThanOrEqual(before);
    expect(Number(headers[REQUEST_HEADERS.timestamp])).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });
});
