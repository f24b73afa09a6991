// The pure-JS Ed25519 path, over noble's point arithmetic, under the rule ed25519.ts states (strict
// RFC 8032, cofactorless, no small-order keys): key generation and signing from a seed for the local
// agent and the tests, and a verifier for callers without WebCrypto Ed25519. noble's own verify is
// cofactored (even with zip215:false), so verifyPureJs computes the RFC 8032 equation itself.
// The Worker imports none of it: nothing here runs at load time, so its bundle drops noble.
import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";
import { isSmallOrderPoint, passesEncodingRules } from "./ed25519.ts";

/** The group order, 2^252 + 27742317777372353535851937790883648493. */
const L = 7237005577332262213973186563042994240857116359379907606001950938285454250989n;

/** noble with its SHA-512 plugged in (set on first use, not at load time). */
function noble(): typeof ed {
  ed.hashes.sha512 ??= sha512;
  return ed;
}

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return noble().getPublicKey(seed);
}

export function generateSeed(): Uint8Array {
  return noble().utils.randomSecretKey();
}

export function signWithSeed(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return noble().sign(message, seed);
}

/** Pure-JS verification under the shared rule. */
export function verifyPureJs(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (!passesEncodingRules(signature, publicKey) || isSmallOrderPoint(publicKey)) return false;
  try {
    const { Point } = noble();
    const A = Point.fromBytes(publicKey, false);
    const r = signature.subarray(0, 32);
    const s = littleEndian(signature.subarray(32));
    const k = littleEndian(sha512(ed.etc.concatBytes(r, publicKey, message))) % L;
    const sB = s === 0n ? Point.ZERO : Point.BASE.multiply(s, false);
    const kA = k === 0n ? Point.ZERO : A.multiply(k, false);
    const expectedR = sB.subtract(kA).toBytes();
    return expectedR.every((byte, i) => byte === r[i]);
  } catch {
    return false;
  }
}
