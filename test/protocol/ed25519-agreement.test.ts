// The two Ed25519 paths (WebCrypto in workerd, pure JS over noble points) must give the same answer
// for every input, and that answer is strict RFC 8032: canonical S and R, cofactorless equation.
// Torsion cases (small-order and mixed-order points) live in ed25519-torsion.test.ts.
import { describe, expect, it } from "vitest";
import { signWithSeed, utf8 } from "../../protocol/index.ts";
import { L, challenge, hex, le, signRaw, signature, signerFromSeed, verdicts } from "./ed25519-craft.ts";

const seed = new Uint8Array(32).fill(0x42);
const signer = signerFromSeed(seed);
const A = signer.publicKey;
const message = utf8("clawrelay agreement");
const valid = signWithSeed(seed, message);
const R = valid.slice(0, 32);
const S = le(valid.subarray(32));

function flip(bytes: Uint8Array, index: number): Uint8Array {
  const out = bytes.slice();
  out[index]! ^= 0x01;
  return out;
}

// R = identity with S = k·a satisfies [S]B = R + [k]A exactly: a real RFC 8032 signature (nonce 0).
const IDENTITY = hex("0100000000000000000000000000000000000000000000000000000000000000");
// The identity again, with y = p + 1: the equation holds after reducing y, but the encoding is not canonical.
const IDENTITY_Y_P_PLUS_1 = hex("eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f");
// The identity with x = 0 but the sign bit set: RFC 8032 decoding rejects it.
const IDENTITY_NEGATIVE_ZERO = hex("0100000000000000000000000000000000000000000000000000000000000080");
// y = 2 gives no square root for x: not a curve point.
const NOT_ON_CURVE = hex("0200000000000000000000000000000000000000000000000000000000000000");

interface Case {
  name: string;
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
  expected: boolean;
}

const cases: Case[] = [
  { name: "valid signature", publicKey: A, message, signature: valid, expected: true },
  { name: "tampered message", publicKey: A, message: utf8("clawrelay agreement!"), signature: valid, expected: false },
  { name: "tampered R", publicKey: A, message, signature: flip(valid, 0), expected: false },
  { name: "tampered S", publicKey: A, message, signature: flip(valid, 32), expected: false },
  { name: "S + L (non-canonical scalar)", publicKey: A, message, signature: signature(R, S + L), expected: false },
  { name: "S = L", publicKey: A, message, signature: signature(R, L), expected: false },
  { name: "S = 2^256 - 1", publicKey: A, message, signature: signature(R, 2n ** 256n - 1n), expected: false },
  {
    name: "R = identity, S = k·a (valid under RFC 8032)",
    publicKey: A,
    message,
    signature: signRaw(signer.scalar, 0n, IDENTITY, A, message),
    expected: true,
  },
  {
    name: "R = identity encoded with y = p + 1",
    publicKey: A,
    message,
    signature: signRaw(signer.scalar, 0n, IDENTITY_Y_P_PLUS_1, A, message),
    expected: false,
  },
  {
    name: "R = identity encoded with the sign bit set",
    publicKey: A,
    message,
    signature: signRaw(signer.scalar, 0n, IDENTITY_NEGATIVE_ZERO, A, message),
    expected: false,
  },
  { name: "public key not on the curve", publicKey: NOT_ON_CURVE, message, signature: valid, expected: false },
  {
    name: "public key not on the curve, signature bound to it",
    publicKey: NOT_ON_CURVE,
    message,
    signature: signRaw(signer.scalar, 7n, signerFromSeed(new Uint8Array(32).fill(7)).publicKey, NOT_ON_CURVE, message),
    expected: false,
  },
  { name: "63-byte signature", publicKey: A, message, signature: valid.slice(0, 63), expected: false },
  { name: "65-byte signature", publicKey: A, message, signature: new Uint8Array([...valid, 0]), expected: false },
  { name: "empty signature", publicKey: A, message, signature: new Uint8Array(0), expected: false },
  { name: "31-byte public key", publicKey: A.slice(0, 31), message, signature: valid, expected: false },
  { name: "33-byte public key", publicKey: new Uint8Array([...A, 0]), message, signature: valid, expected: false },
];

describe("ed25519 agreement: encodings and the cofactorless equation", () => {
  it("the crafted identity-R signature really is S = k·a over its own R", () => {
    const sig = cases.find((c) => c.name.startsWith("R = identity, S"))!.signature;
    expect(le(sig.subarray(32))).toBe((challenge(IDENTITY, A, message) * signer.scalar) % L);
    expect(S + L < 2n ** 256n).toBe(true);
  });

  for (const c of cases) {
    it(c.name, async () => {
      expect(await verdicts(c.publicKey, c.message, c.signature)).toEqual({ pureJs: c.expected, webCrypto: c.expected });
    });
  }

  it("answers the same when asked twice (WebCrypto key cache)", async () => {
    expect(await verdicts(A, message, valid)).toEqual({ pureJs: true, webCrypto: true });
    expect(await verdicts(A, message, flip(valid, 40))).toEqual({ pureJs: false, webCrypto: false });
  });
});
