// HMAC-SHA256 for the webhook verifiers: WebCrypto, whose verify compares in constant time. Keys are
// imported once per source secret and kept (source-book.ts). Covered by test/worker/sources-*.test.ts.
import { utf8 } from "../../protocol/index.ts";

/** WebCrypto's key type, named through the API so the benchmark's Node build (no Workers types) reads it too. */
export type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

export function importHmacKey(secret: Uint8Array): Promise<HmacKey> {
  return crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

/** True when one of `signatures` is the HMAC of `data` under one of `keys`. */
export async function anySignatureMatches(keys: readonly HmacKey[], data: Uint8Array, signatures: readonly Uint8Array[]): Promise<boolean> {
  for (const key of keys) {
    for (const signature of signatures) {
      if (signature.length === 32 && (await crypto.subtle.verify("HMAC", key, signature, data))) return true;
    }
  }
  return false;
}

export function fromHex(text: string): Uint8Array | null {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** What the schemes sign: text parts and the raw body joined, without decoding the body. */
export function signedContent(...parts: (string | Uint8Array)[]): Uint8Array {
  const bytes = parts.map((part) => (typeof part === "string" ? utf8(part) : part));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let offset = 0;
  for (const b of bytes) {
    out.set(b, offset);
    offset += b.length;
  }
  return out;
}
