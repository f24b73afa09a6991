// Builders for hand-made Ed25519 signatures, used by the ed25519-*.test.ts agreement tables.
// They work on raw scalars so a test can sign under points (mixed-order keys, torsion R) that
// no honest signer would produce; noble supplies only the point arithmetic.
import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";
import { publicKeyFromSeed, verifyPureJs, verifyWebCrypto } from "../../protocol/index.ts";

// The protocol plugs SHA-512 into noble on first use only; these builders call noble directly.
ed.hashes.sha512 ??= sha512;

export const L = 2n ** 252n + 27742317777372353535851937790883648493n;
export const P = 2n ** 255n - 19n;

export function le(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

export function leBytes(n: bigint, length = 32): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}

export function hex(text: string): Uint8Array {
  return ed.etc.hexToBytes(text);
}

/** k = SHA-512(R || A || M) mod L, as both RFC 8032 verifiers compute it. */
export function challenge(r: Uint8Array, a: Uint8Array, message: Uint8Array): bigint {
  return le(sha512(ed.etc.concatBytes(r, a, message))) % L;
}

/** Multiplies without noble's range checks; scalars here may be 0 or come from any residue. */
export function mul(point: ed.Point, scalar: bigint): ed.Point {
  const n = ((scalar % L) + L) % L;
  return n === 0n ? ed.Point.ZERO : point.multiply(n, false);
}

export function signature(r: Uint8Array, s: bigint): Uint8Array {
  return ed.etc.concatBytes(r, leBytes(s));
}

export interface Signer {
  scalar: bigint;
  point: ed.Point;
  publicKey: Uint8Array;
}

export function signerFromSeed(seed: Uint8Array): Signer {
  const { scalar, point } = ed.utils.getExtendedPublicKey(seed);
  return { scalar, point, publicKey: publicKeyFromSeed(seed) };
}

/**
 * S = r + k·a with k over the given R and A bytes. With rBytes = [r]B and keyBytes = [a]B this is an
 * honest signature; any other rBytes/keyBytes give a signature that satisfies only the equations
 * the caller arranged for.
 */
export function signRaw(a: bigint, r: bigint, rBytes: Uint8Array, keyBytes: Uint8Array, message: Uint8Array): Uint8Array {
  return signature(rBytes, (r + challenge(rBytes, keyBytes, message) * a) % L);
}

/** An order-8 point (the literature's 26e8958f… encoding, e.g. "Taming the many EdDSAs", 2020). */
export const T8_BYTES = hex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05");
export const T8 = ed.Point.fromBytes(T8_BYTES);

/** Small-order encodings, canonical ones first, then non-canonical forms of the same points. */
export const SMALL_ORDER_KEYS: ReadonlyArray<{ name: string; bytes: Uint8Array; order: bigint }> = [
  { name: "identity (y=1)", bytes: hex("0100000000000000000000000000000000000000000000000000000000000000"), order: 1n },
  { name: "order 2 (y=p-1)", bytes: hex("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), order: 2n },
  { name: "order 4 (y=0)", bytes: hex("0000000000000000000000000000000000000000000000000000000000000000"), order: 4n },
  { name: "order 4 (y=0, x odd)", bytes: hex("0000000000000000000000000000000000000000000000000000000000000080"), order: 4n },
  { name: "order 8 (26e8…)", bytes: T8_BYTES, order: 8n },
  { name: "order 8 (c717…)", bytes: hex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"), order: 8n },
  { name: "non-canonical identity (y=p+1)", bytes: hex("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), order: 1n },
  { name: "non-canonical identity (x=0, sign bit set)", bytes: hex("0100000000000000000000000000000000000000000000000000000000000080"), order: 1n },
  { name: "non-canonical order 4 (y=p)", bytes: hex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"), order: 4n },
];

/**
 * A signature that satisfies the cofactorless equation [S]B = R + [k]A for a small-order A whose
 * order divides `order`: R = [s]B with s chosen until k ≡ 0 (mod order), so [k]A vanishes.
 * Returns the message it found alongside.
 */
export function forgeUnderSmallOrderKey(keyBytes: Uint8Array, order: bigint): { message: Uint8Array; signature: Uint8Array } {
  const s = 0x1234567n;
  const rBytes = mul(ed.Point.BASE, s).toBytes();
  for (let i = 0; i < 1000; i++) {
    const message = new TextEncoder().encode(`forged ${i}`);
    if (challenge(rBytes, keyBytes, message) % order === 0n) return { message, signature: signature(rBytes, s) };
  }
  throw new Error("no message with k ≡ 0 mod order in 1000 tries: the challenge hash is not behaving like SHA-512");
}

/** Both verification paths' answers, side by side so a disagreement shows in the assertion diff. */
export async function verdicts(publicKey: Uint8Array, message: Uint8Array, sig: Uint8Array): Promise<{ pureJs: boolean; webCrypto: boolean }> {
  return { pureJs: verifyPureJs(publicKey, message, sig), webCrypto: await verifyWebCrypto(publicKey, message, sig) };
}
