// Ed25519 under ONE rule on every path: RFC 8032 with canonical encodings and the cofactorless
// equation (what BoringSSL/OpenSSL WebCrypto do), plus refusal of small-order public keys.
// This file is the WebCrypto path and the rule's checks, free of any curve library so the Worker
// bundle carries none; the pure-JS path (ed25519-pure.ts, noble's point arithmetic) exists for callers
// without WebCrypto Ed25519 and is held to the same answers by test/protocol/ed25519-agreement.test.ts.
import { fromBase64Url } from "./encoding.ts";

const P = 2n ** 255n - 19n;
/** The curve constant d = -121665/121666 and a square root of -1, both mod p. */
const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;
const SQRT_M1 = 19681161376707505956807079304988542015446066515923890162744021073123829784752n;
/** L = 2^252 + 27742317777372353535851937790883648493 and p, little-endian. */
const L_BYTES = [0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10];
const P_BYTES = [0xed, ...new Array<number>(30).fill(0xff), 0x7f];

/** a < b for 32-byte little-endian numbers, `topMask` applied to a's last byte. */
function lessThan(a: Uint8Array, b: readonly number[], topMask = 0xff): boolean {
  for (let i = 31; i >= 0; i--) {
    const x = i === 31 ? a[i]! & topMask : a[i]!;
    if (x !== b[i]) return x < b[i]!;
  }
  return false;
}

/** The checks both paths make before any curve arithmetic: sizes, S < L, R's y < p. */
export function passesEncodingRules(signature: Uint8Array, publicKey: Uint8Array): boolean {
  return signature.length === 64 && publicKey.length === 32 && lessThan(signature.subarray(32), L_BYTES) && lessThan(signature, P_BYTES, 0x7f);
}

const mod = (a: bigint) => {
  const r = a % P;
  return r < 0n ? r + P : r;
};

function pow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  for (let b = mod(base), e = exponent; e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) result = (result * b) % P;
  return result;
}

/** RFC 8032 5.1.3 strict decoding (y < p, no "negative zero"); null when not a curve point. */
function decodePoint(raw: Uint8Array): [bigint, bigint] | null {
  if (raw.length !== 32 || !lessThan(raw, P_BYTES, 0x7f)) return null;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? raw[i]! & 0x7f : raw[i]!);
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  const v3 = (v * v * v) % P;
  let x = (u * v3 * pow(u * v3 * v3 * v, (P - 5n) / 8n)) % P;
  const vx2 = (v * x * x) % P;
  if (vx2 === mod(-u)) x = (x * SQRT_M1) % P;
  else if (vx2 !== u) return null;
  const negative = raw[31]! >> 7 === 1;
  if (x === 0n && negative) return null;
  return [((x & 1n) === 1n) === negative ? x : P - x, y];
}

/** [8]P = O, with doubling in extended coordinates (a = -1): the point's order divides the cofactor. */
function clearsUnderCofactor([x, y]: [bigint, bigint]): boolean {
  let [X, Y, Z] = [x, y, 1n];
  for (let i = 0; i < 3; i++) {
    const A = (X * X) % P;
    const B = (Y * Y) % P;
    const C = (2n * Z * Z) % P;
    const E = mod((X + Y) * (X + Y) - A - B);
    const G = mod(B - A);
    const F = mod(G - C);
    const H = mod(-A - B);
    [X, Y, Z] = [(E * F) % P, (G * H) % P, (F * G) % P];
  }
  return X === 0n && Y === Z;
}

const smallOrderVerdicts = new Map<string, boolean>();
const VERDICT_CACHE_LIMIT = 4096;

/**
 * True for encodings that are not a valid strict point, or are a point of order ≤ 8. Pure-JS field
 * arithmetic costs ~0.1 ms, so each key's verdict is kept (per isolate, by its bytes).
 */
export function isSmallOrderPoint(raw: Uint8Array): boolean {
  const cacheKey = String.fromCharCode(...raw);
  let verdict = smallOrderVerdicts.get(cacheKey);
  if (verdict === undefined) {
    const point = decodePoint(raw);
    verdict = point === null || clearsUnderCofactor(point);
    if (smallOrderVerdicts.size >= VERDICT_CACHE_LIMIT) smallOrderVerdicts.clear();
    smallOrderVerdicts.set(cacheKey, verdict);
  }
  return verdict;
}

// Named structurally: Node's and workerd's type packages disagree on where CryptoKey lives.
type WebCryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const importedKeys = new Map<string, Promise<WebCryptoKey>>();
const IMPORTED_KEY_CACHE_LIMIT = 1024;

function importVerifyKey(publicKey: Uint8Array): Promise<WebCryptoKey> {
  const cacheKey = String.fromCharCode(...publicKey);
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

/** RFC 8410 PKCS #8 for an Ed25519 seed: a fixed 16-byte prefix, then the 32 bytes. */
function pkcs8(seed: Uint8Array): Uint8Array {
  const out = new Uint8Array(48);
  out.set([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);
  out.set(seed, 16);
  return out;
}

/** A signer that keeps the private key inside WebCrypto (cheap per signature, seed read once). */
export async function importSigningKey(seed: Uint8Array): Promise<(message: Uint8Array) => Promise<Uint8Array>> {
  const key = await crypto.subtle.importKey("pkcs8", pkcs8(seed), { name: "Ed25519" }, false, ["sign"]);
  return async (message) => new Uint8Array(await crypto.subtle.sign({ name: "Ed25519" }, key, message));
}

/** The 32-byte public key of a seed, worked out by WebCrypto (publicKeyFromSeed is the pure-JS twin). */
export async function publicKeyOfSeed(seed: Uint8Array): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("pkcs8", pkcs8(seed), { name: "Ed25519" }, true, ["sign"]);
  const jwk = (await crypto.subtle.exportKey("jwk", key)) as { x?: string };
  const raw = fromBase64Url(jwk.x ?? "");
  if (!raw || raw.length !== 32) throw new Error("WebCrypto exported an Ed25519 key without its 32-byte public part");
  return raw;
}
