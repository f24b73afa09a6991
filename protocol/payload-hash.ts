// payload_hash = "sha256:" + hex(sha256(JCS(payload))), JCS = RFC 8785 (docs/protocol.md, "Envelopes").
// JCS is the canonicalize package (the design card's choice; iterative, so ~3,000 nested levels cost
// no stack) and SHA-256 is WebCrypto's (sha256.ts). Covered by test/protocol/hash-and-jcs.test.ts.
import canonicalize from "canonicalize";
import { RelayError } from "./errors.ts";
import { sha256Hex } from "./sha256.ts";

/**
 * The JCS text of `value`. What JCS cannot express (a lone surrogate, NaN, Infinity, a cycle, nothing
 * at all) is a RelayError(400, invalid_json): input from outside is refused by the strict parse
 * (strict-json.ts) before it gets here, so reaching this is a caller's value, never a 500.
 */
export function jcs(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (err) {
    throw new RelayError(400, "invalid_json", `the value has no JCS (RFC 8785) form: ${(err as Error).message}; send well-formed JSON (no lone surrogates, finite numbers)`);
  }
  if (text === undefined) throw new RelayError(400, "invalid_json", "the value has no JCS (RFC 8785) form: it is not JSON data (undefined, a function or a symbol)");
  return text;
}

export async function payloadHash(payload: unknown): Promise<string> {
  return "sha256:" + (await sha256Hex(jcs(payload)));
}
