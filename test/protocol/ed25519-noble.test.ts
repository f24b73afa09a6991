// Our Ed25519 verification (WebCrypto plus ed25519.ts's small-order check, and the pure-JS path) held
// equal to @noble/ed25519's verify under its strict branch ({zip215: false}: canonical S, A and R,
// small-order A refused) on generated inputs: honest signatures, one-byte edits of signature, key or
// message, S pushed past L, R's y pushed past p, small-order keys, random bytes. The one place the two
// rules part — noble's equation is cofactored, ours is not, so a key or R with a torsion component can
// pass noble alone — is never generated here: ed25519-torsion.test.ts crafts those and pins our answer.
import * as ed from "@noble/ed25519";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { publicKeyFromSeed, signWithSeed, verifyPureJs, verifyWebCrypto } from "../../protocol/index.ts";
import { L, P, SMALL_ORDER_KEYS, forgeUnderSmallOrderKey, le, leBytes } from "./ed25519-craft.ts";

const nobleVerify = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean => {
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
};

interface Case {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
}

const flipped = (bytes: Uint8Array, at: number, bit: number): Uint8Array => {
  const out = bytes.slice();
  out[at % out.length]! ^= 1 << bit;
  return out;
};

const honest = fc.record({ seed: fc.uint8Array({ minLength: 32, maxLength: 32 }), message: fc.uint8Array({ maxLength: 200 }) }).map(({ seed, message }): Case => ({
  publicKey: publicKeyFromSeed(seed),
  message,
  signature: signWithSeed(seed, message),
}));

/** One input changed: a bit of the signature, of the key or of the message; S + L; R's y + p. */
const edited = fc.tuple(honest, fc.constantFrom("signature", "key", "message", "s-plus-l", "r-y-plus-p"), fc.nat(), fc.integer({ min: 0, max: 7 })).map(([c, what, at, bit]): Case => {
  if (what === "signature") return { ...c, signature: flipped(c.signature, at, bit) };
  if (what === "key") return { ...c, publicKey: flipped(c.publicKey, at, bit) };
  if (what === "message") return { ...c, message: c.message.length === 0 ? Uint8Array.of(at & 0xff) : flipped(c.message, at, bit) };
  if (what === "s-plus-l") return { ...c, signature: Uint8Array.from([...c.signature.subarray(0, 32), ...leBytes(le(c.signature.subarray(32)) + L)]) };
  // y + p fits in 255 bits only when y < 19: otherwise the same edit of the top bits, which the rules refuse too.
  const y = le(c.signature.subarray(0, 32)) & ((1n << 255n) - 1n);
  const sign = c.signature[31]! & 0x80;
  const r = leBytes(y < 19n ? y + P : (1n << 255n) - 1n);
  r[31]! |= sign;
  return { ...c, signature: Uint8Array.from([...r, ...c.signature.subarray(32)]) };
});

/** A small-order key with a signature that satisfies the equation for it, and random keys and signatures. */
const hostile = fc.oneof(
  fc.tuple(fc.constantFrom(...SMALL_ORDER_KEYS), fc.boolean()).map(([key, forged]): Case => {
    const forgery = forgeUnderSmallOrderKey(key.bytes, key.order);
    return { publicKey: key.bytes, message: forgery.message, signature: forged ? forgery.signature : new Uint8Array(64) };
  }),
  fc.record({ publicKey: fc.uint8Array({ minLength: 32, maxLength: 32 }), message: fc.uint8Array({ maxLength: 64 }), signature: fc.uint8Array({ minLength: 64, maxLength: 64 }) }),
);

/** Runs of each generator, fixed seeds; the test names the total. */
const RUNS = { honest: 150, edited: 300, hostile: 150 } as const;

async function agree({ publicKey, message, signature }: Case): Promise<boolean> {
  const noble = nobleVerify(publicKey, message, signature);
  const ours = await verifyWebCrypto(publicKey, message, signature);
  expect({ webCrypto: ours, pureJs: verifyPureJs(publicKey, message, signature) }).toEqual({ webCrypto: noble, pureJs: noble });
  return noble;
}

describe(`verifyWebCrypto and verifyPureJs answer as noble's verify({zip215: false}) (${RUNS.honest + RUNS.edited + RUNS.hostile} generated inputs)`, () => {
  it("on honest signatures: all three accept", async () => {
    await fc.assert(fc.asyncProperty(honest, async (c) => {
      expect(await agree(c)).toBe(true);
    }), { seed: 0xed01, numRuns: RUNS.honest });
  });

  it("on one edit of signature, key or message, S + L and R's y + p: the same answer, a refusal", async () => {
    let accepted = 0;
    await fc.assert(fc.asyncProperty(edited, async (c) => {
      if (await agree(c)) accepted++;
    }), { seed: 0xed02, numRuns: RUNS.edited });
    // Every edit breaks the signature (a key has one encoding, S and R one each): none is accepted.
    expect(accepted).toBe(0);
  });

  it("on small-order keys (with signatures that satisfy their equation) and random bytes: the same answer, a refusal", async () => {
    await fc.assert(fc.asyncProperty(hostile, async (c) => {
      expect(await agree(c)).toBe(false);
    }), { seed: 0xed03, numRuns: RUNS.hostile });
  });
});
