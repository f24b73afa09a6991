// Byte/text conversions shared by the Worker and the local agent.
// Only web-standard globals (TextEncoder, atob, btoa) so this runs in workerd and Node alike.

const UTF8 = new TextEncoder();
// ignoreBOM keeps a leading BOM in the text, so decoding then encoding gives back the same bytes.
const UTF8_STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
// A JSON reader's view: a leading BOM is not part of the text.
const UTF8_TEXT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function utf8(text: string): Uint8Array {
  return UTF8.encode(text);
}

/** Decodes UTF-8, or returns null when the bytes are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return UTF8_STRICT.decode(bytes);
  } catch {
    return null;
  }
}

/** UTF-8 text as a JSON reader takes it (a leading BOM dropped), or null when the bytes are not UTF-8. */
export function decodeUtf8Text(bytes: Uint8Array): string | null {
  try {
    return UTF8_TEXT.decode(bytes);
  } catch {
    return null;
  }
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  // Chunked so a 1 MiB body does not overflow the argument limit of fromCharCode.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

const BASE64_STD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Strict standard-alphabet base64 with padding; null on anything else. */
export function fromBase64(text: string): Uint8Array | null {
  if (!BASE64_STD.test(text)) return null;
  // One byte string, one spelling: stray bits before the padding would let a key travel as several
  // texts, and agent ids are hashed over the text. The bits the padding leaves unused must be zero.
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  if (padding > 0 && BASE64_ALPHABET.indexOf(text[text.length - padding - 1]!) & (padding === 2 ? 0x0f : 0x03)) return null;
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Unpadded base64url (RFC 4648 §5, as JWK uses it); null when it does not decode. */
export function fromBase64Url(text: string): Uint8Array | null {
  const std = text.replace(/-/g, "+").replace(/_/g, "/");
  return /[+/=]/.test(text) ? null : fromBase64(std + "=".repeat((4 - (std.length % 4)) % 4));
}

export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

export function randomBytes(length: number): Uint8Array {
  const out = new Uint8Array(length);
  crypto.getRandomValues(out);
  return out;
}

/** Constant-time equality for secrets of equal length (length itself is not secret here). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
