// The upgrade proof (protocol/upgrade-proof.ts): built without awaiting a hash, it must be exactly the
// signed-request input the relay checks (requestSigningInput over GET and an empty body), or every proven
// upgrade would be refused as a forgery and the agent would wait behind anonymous sockets again.
import { describe, expect, it } from "vitest";
import {
  EMPTY_BODY_SHA256_HEX,
  REQUEST_HEADERS,
  formatPublicKey,
  fromBase64,
  parsePublicKey,
  publicKeyFromSeed,
  requestSigningInput,
  sha256Hex,
  signWithSeed,
  upgradeProofHeaders,
  upgradeSigningInput,
  verifyWebCrypto,
} from "../../protocol/index.ts";

const seed = new Uint8Array(32).fill(7);
const publicKeyText = formatPublicKey(publicKeyFromSeed(seed));
const path = "/inbox/ag_ff73a0647bbc/connect";

describe("upgradeSigningInput", () => {
  it("is the hash of no bytes", async () => {
    expect(EMPTY_BODY_SHA256_HEX).toBe(await sha256Hex(new Uint8Array(0)));
  });

  it("equals requestSigningInput for GET with an empty body", async () => {
    const nonce = "00112233445566778899aabbccddeeff";
    const expected = await requestSigningInput({ method: "get", pathWithQuery: path, timestamp: 1700000000, nonce, body: new Uint8Array(0) });
    expect(upgradeSigningInput(path, 1700000000, nonce)).toEqual(expected);
  });
});

describe("upgradeProofHeaders", () => {
  it("carries the four headers, verifiable as a signed GET of the path, with a fresh nonce each time", async () => {
    const headers = upgradeProofHeaders(publicKeyText, path, (m) => signWithSeed(seed, m), 1700000123);
    expect(Object.keys(headers).sort()).toEqual(Object.values(REQUEST_HEADERS).sort());
    expect(headers[REQUEST_HEADERS.timestamp]).toBe("1700000123");
    const input = await requestSigningInput({ method: "GET", pathWithQuery: path, timestamp: 1700000123, nonce: headers[REQUEST_HEADERS.nonce]!, body: new Uint8Array(0) });
    expect(await verifyWebCrypto(parsePublicKey(publicKeyText)!, input, fromBase64(headers[REQUEST_HEADERS.signature]!)!)).toBe(true);
    // Signed for this path only: another inbox's connect does not verify.
    const other = await requestSigningInput({ method: "GET", pathWithQuery: "/inbox/ag_000000000000/connect", timestamp: 1700000123, nonce: headers[REQUEST_HEADERS.nonce]!, body: new Uint8Array(0) });
    expect(await verifyWebCrypto(parsePublicKey(publicKeyText)!, other, fromBase64(headers[REQUEST_HEADERS.signature]!)!)).toBe(false);
    expect(upgradeProofHeaders(publicKeyText, path, (m) => signWithSeed(seed, m))[REQUEST_HEADERS.nonce]).not.toBe(headers[REQUEST_HEADERS.nonce]);
  });
});
