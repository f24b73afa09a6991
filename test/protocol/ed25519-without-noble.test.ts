// The parts of ed25519.ts that replaced noble in the Worker: the small-order check (strict decoding,
// then [8]P = O in its own field arithmetic), the signing key imported from PKCS #8 and the public key
// read back from WebCrypto. Each is held to noble's answer for the same input.
import * as ed from "@noble/ed25519";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  generateSeed,
  importSigningKey,
  isSmallOrderPoint,
  publicKeyFromSeed,
  publicKeyOfSeed,
  utf8,
  verifyPureJs,
} from "../../protocol/index.ts";
import { SMALL_ORDER_KEYS, T8, signerFromSeed } from "./ed25519-craft.ts";

function nobleSmallOrder(raw: Uint8Array): boolean {
  try {
    return ed.Point.fromBytes(raw, false).isSmallOrder();
  } catch {
    return true;
  }
}

describe("isSmallOrderPoint", () => {
  it("agrees with noble on random encodings (about half are not curve points)", () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (raw) => isSmallOrderPoint(raw) === nobleSmallOrder(raw)), { seed: 0x8e, numRuns: 500 });
  });

  it("agrees with noble on real keys, mixed-order keys and every crafted small-order key", () => {
    for (let i = 0; i < 20; i++) {
      const key = publicKeyFromSeed(generateSeed());
      expect(isSmallOrderPoint(key)).toBe(false);
      const mixed = ed.Point.fromBytes(key).add(T8).toBytes();
      expect(isSmallOrderPoint(mixed)).toBe(nobleSmallOrder(mixed));
      expect(isSmallOrderPoint(mixed)).toBe(false);
    }
    for (const key of SMALL_ORDER_KEYS) expect(isSmallOrderPoint(key.bytes), key.name).toBe(true);
  });

  it("refuses non-canonical y (y ≥ p), a negative zero x, and wrong lengths", () => {
    const yIsP = Uint8Array.from([0xed, ...new Array<number>(30).fill(0xff), 0x7f]);
    const negativeZero = Uint8Array.from([0x01, ...new Array<number>(30).fill(0), 0x80]);
    expect(isSmallOrderPoint(yIsP)).toBe(true);
    expect(isSmallOrderPoint(negativeZero)).toBe(true);
    expect(isSmallOrderPoint(new Uint8Array(31))).toBe(true);
    const valid = publicKeyFromSeed(new Uint8Array(32).fill(1));
    expect(isSmallOrderPoint(valid)).toBe(false);
    // The verdict is cached by the bytes, so a second call answers the same.
    expect(isSmallOrderPoint(valid)).toBe(false);
  });
});

describe("WebCrypto keys from a seed", () => {
  it("publicKeyOfSeed gives noble's public key, and importSigningKey signs what verifyPureJs accepts", async () => {
    for (let i = 0; i < 10; i++) {
      const seed = generateSeed();
      expect(await publicKeyOfSeed(seed)).toEqual(publicKeyFromSeed(seed));
      const message = utf8(`message ${i}`);
      const signature = await (await importSigningKey(seed))(message);
      expect(verifyPureJs(signerFromSeed(seed).publicKey, message, signature)).toBe(true);
      expect(signature).toEqual(ed.sign(message, seed));
    }
  });
});
