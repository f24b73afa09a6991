// The upgrade proof: the local agent signs its WebSocket upgrade (GET /inbox/{agent_id}/connect) with the
// signed-request headers (signed-request.ts), so the relay knows its owner's connection before the
// challenge and never makes it wait behind anonymous sockets (worker/delivery/upgrade-proof.ts). The in-band
// challenge and auth still follow, unchanged: an older relay ignores the headers. Built synchronously,
// because a WebSocket client is given its headers as it is made, and an upgrade has no body, whose
// SHA-256 is a constant. Imported by local-agent/relay/relay-client.ts; covered by
// test/protocol/upgrade-proof.test.ts (the same input as requestSigningInput's).
import { randomBytes, toBase64, toHex, utf8 } from "./encoding.ts";
import { REQUEST_HEADERS } from "./signed-request.ts";

/** SHA-256 of zero bytes, in hex: the body hash of every upgrade (it has no body). */
export const EMPTY_BODY_SHA256_HEX = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** requestSigningInput's input for GET `pathWithQuery` with no body, without awaiting a hash. */
export function upgradeSigningInput(pathWithQuery: string, timestamp: number, nonce: string): Uint8Array {
  return utf8(["clawrelay-request/1", "GET", pathWithQuery, String(timestamp), nonce, EMPTY_BODY_SHA256_HEX].join("\n"));
}

/** The four x-clawrelay-* headers of a signed upgrade, each connection its own nonce and timestamp. */
export function upgradeProofHeaders(
  publicKeyText: string,
  pathWithQuery: string,
  sign: (message: Uint8Array) => Uint8Array,
  nowSec = Math.floor(Date.now() / 1000),
): Record<string, string> {
  const nonce = toHex(randomBytes(16));
  return {
    [REQUEST_HEADERS.key]: publicKeyText,
    [REQUEST_HEADERS.timestamp]: String(nowSec),
    [REQUEST_HEADERS.nonce]: nonce,
    [REQUEST_HEADERS.signature]: toBase64(sign(upgradeSigningInput(pathWithQuery, nowSec, nonce))),
  };
}
