// payload_hash = "sha256:" + hex(sha256(JCS(payload))), JCS = RFC 8785 (docs/protocol.md, "Envelopes").
import canonicalize from "canonicalize";
import { sha256 } from "@noble/hashes/sha2.js";
import { toHex, utf8 } from "./encoding.ts";

export function jcs(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value cannot be canonicalized as JSON");
  return text;
}

export function payloadHash(payload: unknown): string {
  return "sha256:" + toHex(sha256(utf8(jcs(payload))));
}
