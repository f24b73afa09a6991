// How an agent proves it holds its key to the relay, outside envelopes:
// - HTTP requests (claim an inbox, poll messages) carry four x-clawrelay-* headers signed over
//   method, path+query, timestamp, nonce and the body's sha256;
// - a WebSocket answers the server's challenge nonce.
// Both inputs start with a distinct tag so a signature made for one can never pass as the other,
// nor as an envelope signature (whose input starts with "a2a/0.1").
import { sha256Hex } from "./sha256.ts";
import { randomBytes, toBase64, toHex, utf8 } from "./encoding.ts";

/** The relay operator's claim token on a first claim, when the relay admits new inboxes by token. */
export const CLAIM_TOKEN_HEADER = "x-clawrelay-claim-token";

export const REQUEST_HEADERS = {
  key: "x-clawrelay-key",
  timestamp: "x-clawrelay-timestamp",
  nonce: "x-clawrelay-nonce",
  signature: "x-clawrelay-signature",
} as const;

export interface RequestToSign {
  method: string;
  /** Path plus query string exactly as sent, e.g. "/inbox/ag_x/messages?after=3". */
  pathWithQuery: string;
  timestamp: number;
  nonce: string;
  body: Uint8Array;
}

export async function requestSigningInput(request: RequestToSign): Promise<Uint8Array> {
  return utf8(
    [
      "clawrelay-request/1",
      request.method.toUpperCase(),
      request.pathWithQuery,
      String(request.timestamp),
      request.nonce,
      await sha256Hex(request.body),
    ].join("\n"),
  );
}

export function connectSigningInput(agentId: string, challenge: string): Uint8Array {
  return utf8(["clawrelay-connect/1", agentId, challenge].join("\n"));
}

/** Headers for a signed request; `sign` holds the private key so this module never sees it. */
export async function signedRequestHeaders(
  publicKeyText: string,
  method: string,
  pathWithQuery: string,
  body: Uint8Array,
  sign: (message: Uint8Array) => Uint8Array | Promise<Uint8Array>,
  nowSec = Math.floor(Date.now() / 1000),
): Promise<Record<string, string>> {
  const nonce = toHex(randomBytes(16));
  const input = await requestSigningInput({ method, pathWithQuery, timestamp: nowSec, nonce, body });
  return {
    [REQUEST_HEADERS.key]: publicKeyText,
    [REQUEST_HEADERS.timestamp]: String(nowSec),
    [REQUEST_HEADERS.nonce]: nonce,
    [REQUEST_HEADERS.signature]: toBase64(await sign(input)),
  };
}
