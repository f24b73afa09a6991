// Ed25519 under ONE rule on every path: RFC 8032 with canonical encodings and the cofactorless
// equation (what BoringSSL/OpenSSL WebCrypto do), plus refusal of small-order public keys.
// The Worker verifies with WebCrypto (~14× faster than pure JS in workerd, `npm run bench`); the pure-JS
// path exists for callers without WebCrypto Ed25519 and is held to the same answers by
// test/protocol/ed25519-agreement.test.ts. noble's own verify is cofactored (even with zip215:false),
// so the pure-JS path computes the RFC 8032 equation from noble's point arithmetic instead.
import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";
import { toBase64Url } from "./encoding.ts";

ed.hashes.sha512 = sha512;

const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const P = 2n ** 255n - 19n;

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/** The checks both paths make before any curve arithmetic: sizes, S < L, R's y < p. */
function passesEncodingRules(signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  if (littleEndian(signature.subarray(32)) >= L) return false;
  const r = signature.slice(0, 32);
  r[31]! &= 0x7f;
  return littleEndian(r) < P;
}

/** True for encodings that are not a valid strict point, or are a point of order ≤ 8. */
export function isSmallOrderPoint(raw: Uint8Array): boolean {
  try {
    return ed.Point.fromBytes(raw, false).isSmallOrder();
  } catch {
    return true;
  }
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return ed.getPublicKey(seed);
}

export function generateSeed(): Uint8Array {
  return ed.utils.randomSecretKey();
}

export function signWithSeed(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return ed.sign(message, seed);
}

/** Pure-JS verification under the shared rule. */
export function verifyPureJs(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (!passesEncodingRules(signature, publicKey)) return false;
  try {
    const A = ed.Point.fromBytes(publicKey, false);
    if (A.isSmallOrder()) return false;
    const r = signature.subarray(0, 32);
    const s = littleEndian(signature.subarray(32));
    const k = littleEndian(sha512(ed.etc.concatBytes(r, publicKey, message))) % L;
    const sB = s === 0n ? ed.Point.ZERO : ed.Point.BASE.multiply(s, false);
    const kA = k === 0n ? ed.Point.ZERO : A.multiply(k, false);
    const expectedR = sB.subtract(kA).toBytes();
    return expectedR.every((byte, i) => byte === r[i]);
  } catch {
    return false;
  }
}

// Named structurally: Node's and workerd's type packages disagree on where CryptoKey lives.
type WebCryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const importedKeys = new Map<string, Promise<WebCryptoKey>>();
const IMPORTED_KEY_CACHE_LIMIT = 1024;

function importVerifyKey(publicKey: Uint8Array): Promise<WebCryptoKey> {
  const cacheKey = toBase64Url(publicKey);
  let key = importedKeys.get(cacheKey);
  if (!key) {
    if (importedKeys.size >= IMPORTED_KEY_CACHE_LIMIT) importedKeys.clear();
    // WebCrypto checks neither small order nor canonical encoding of the key; refuse those here,
    // once per key, so this path keeps the same rule as verifyPureJs.
    key = isSmallOrderPoint(publicKey)
      ? Promise.reject(new Error("small-order or non-canonical public key"))
      : crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    importedKeys.set(cacheKey, key);
    key.catch(() => importedKeys.delete(cacheKey));
  }
  return key;
}

/** WebCrypto verification under the shared rule (key checks cached per key). */
export async function verifyWebCrypto(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): Promise<boolean> {
  if (!passesEncodingRules(signature, publicKey)) return false;
  try {
    return await crypto.subtle.verify({ name: "Ed25519" }, await importVerifyKey(publicKey), signature, message);
  } catch {
    return false;
  }
}

/** A signer that keeps the private key inside WebCrypto (cheap per signature, seed read once). */
export async function importSigningKey(seed: Uint8Array): Promise<(message: Uint8Array) => Promise<Uint8Array>> {
  const jwk = { kty: "OKP", crv: "Ed25519", d: toBase64Url(seed), x: toBase64Url(publicKeyFromSeed(seed)) };
  const key = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["sign"]);
  return async (message) => new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, key, message));
}
