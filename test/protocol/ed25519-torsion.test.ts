// Torsion cases, where cofactored verifiers (noble's own verify, ZIP-215) and the cofactorless
// RFC 8032 equation disagree. Both clawrelay paths must take the cofactorless side, and both must
// refuse small-order public keys, which would let one signature pass for messages nobody signed.
import * as ed from "@noble/ed25519";
import { describe, expect, it } from "vitest";
import { formatPublicKey, isSmallOrderPoint, parsePublicKey, utf8 } from "../../protocol/index.ts";
import {
  SMALL_ORDER_KEYS,
  T8,
  T8_BYTES,
  challenge,
  forgeUnderSmallOrderKey,
  le,
  mul,
  signRaw,
  signerFromSeed,
  verdicts,
} from "./ed25519-craft.ts";

const signer = signerFromSeed(new Uint8Array(32).fill(0x17));
const r = 0x5eedn;
const R = mul(ed.Point.BASE, r);

/** What a cofactored verifier says; used to show each crafted case really separates the two rules. */
function cofactoredAccepts(publicKey: Uint8Array, message: Uint8Array, sig: Uint8Array): boolean {
  return ed.verify(sig, message, publicKey, { zip215: false });
}

describe("small-order public keys", () => {
  for (const key of SMALL_ORDER_KEYS) {
    it(`refuses ${key.name}`, async () => {
      const { message, signature } = forgeUnderSmallOrderKey(key.bytes, key.order);
      // The forgery satisfies [S]B = R + [k]A once the key is decoded leniently, so only the refusal stops it.
      const A = ed.Point.fromBytes(key.bytes, true);
      const lhs = mul(ed.Point.BASE, le(signature.subarray(32)));
      expect(lhs.equals(ed.Point.fromBytes(signature.subarray(0, 32)).add(mul(A, challenge(signature.subarray(0, 32), key.bytes, message))))).toBe(true);

      expect(isSmallOrderPoint(key.bytes)).toBe(true);
      expect(parsePublicKey("ed25519:" + btoa(String.fromCharCode(...key.bytes)))).toBeNull();
      expect(await verdicts(key.bytes, message, signature)).toEqual({ pureJs: false, webCrypto: false });
    });
  }
});

describe("mixed-order public key A' = A + T8", () => {
  const mixed = signer.point.add(T8);
  const mixedBytes = mixed.toBytes();
  // Signed with A's scalar, the cofactorless check leaves [k]T8 over, which vanishes only when 8 | k.
  function messageWith(kMod8Zero: boolean): Uint8Array {
    const rBytes = R.toBytes();
    for (let i = 0; i < 1000; i++) {
      const m = utf8(`mixed ${i}`);
      if ((challenge(rBytes, mixedBytes, m) % 8n === 0n) === kMod8Zero) return m;
    }
    throw new Error("no suitable message in 1000 tries: the challenge hash is not behaving like SHA-512");
  }

  it("is not small-order, so it parses as a key", () => {
    expect(mixed.isSmallOrder()).toBe(false);
    expect(mixed.isTorsionFree()).toBe(false);
    expect(parsePublicKey(formatPublicKey(mixedBytes))).toEqual(mixedBytes);
  });

  it("rejects A's signature when k is not a multiple of 8 (a cofactored verifier accepts it)", async () => {
    const m = messageWith(false);
    const sig = signRaw(signer.scalar, r, R.toBytes(), mixedBytes, m);
    expect(cofactoredAccepts(mixedBytes, m, sig)).toBe(true);
    expect(await verdicts(mixedBytes, m, sig)).toEqual({ pureJs: false, webCrypto: false });
  });

  it("accepts A's signature when k is a multiple of 8 (the cofactorless equation then holds exactly)", async () => {
    const m = messageWith(true);
    const sig = signRaw(signer.scalar, r, R.toBytes(), mixedBytes, m);
    expect(await verdicts(mixedBytes, m, sig)).toEqual({ pureJs: true, webCrypto: true });
  });
});

describe("torsion in R", () => {
  const message = utf8("torsion in R");

  it("rejects R' = R + T8 with S = r + k'·a (a cofactored verifier accepts it)", async () => {
    const rPrime = R.add(T8).toBytes();
    const sig = signRaw(signer.scalar, r, rPrime, signer.publicKey, message);
    expect(cofactoredAccepts(signer.publicKey, message, sig)).toBe(true);
    expect(await verdicts(signer.publicKey, message, sig)).toEqual({ pureJs: false, webCrypto: false });
  });

  it("rejects R = T8 (small order) with S = k·a (a cofactored verifier accepts it)", async () => {
    const sig = signRaw(signer.scalar, 0n, T8_BYTES, signer.publicKey, message);
    expect(cofactoredAccepts(signer.publicKey, message, sig)).toBe(true);
    expect(await verdicts(signer.publicKey, message, sig)).toEqual({ pureJs: false, webCrypto: false });
  });

  it("rejects a valid signature whose R was moved by T8 without re-signing", async () => {
    const honest = signRaw(signer.scalar, r, R.toBytes(), signer.publicKey, message);
    const moved = new Uint8Array([...R.add(T8).toBytes(), ...honest.subarray(32)]);
    expect(await verdicts(signer.publicKey, message, honest)).toEqual({ pureJs: true, webCrypto: true });
    expect(await verdicts(signer.publicKey, message, moved)).toEqual({ pureJs: false, webCrypto: false });
  });
});
