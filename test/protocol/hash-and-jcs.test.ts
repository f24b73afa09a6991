// The protocol's own SHA-256 and JCS, which replaced @noble/hashes and canonicalize in the Worker
// bundle: held to WebCrypto's SHA-256 and to the canonicalize package on generated input.
import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jcs, payloadHash, sha256, toHex, utf8 } from "../../protocol/index.ts";

const webCryptoSha256 = async (bytes: Uint8Array) => toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));

describe("sha256", () => {
  it("gives the FIPS 180-4 answers for the empty and the three-byte message", () => {
    expect(toHex(sha256(new Uint8Array(0)))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(toHex(sha256(utf8("abc")))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("agrees with WebCrypto at every length around the 64-byte block and padding boundaries", async () => {
    for (let length = 0; length <= 200; length++) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 131 + length) & 0xff);
      expect(toHex(sha256(bytes)), `length ${length}`).toBe(await webCryptoSha256(bytes));
    }
  });

  it("agrees with WebCrypto on random and large inputs", async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), async (bytes) => toHex(sha256(bytes)) === (await webCryptoSha256(bytes))), { seed: 0x5a256, numRuns: 300 });
    const big = Uint8Array.from({ length: 1_100_000 }, (_, i) => (i * 7) & 0xff);
    expect(toHex(sha256(big))).toBe(await webCryptoSha256(big));
  });
});

describe("jcs", () => {
  it("matches canonicalize on any JSON value", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => jcs(value) === canonicalize(value)), { seed: 0x1c5, numRuns: 2000 });
  });

  it("matches canonicalize on numbers' edge forms, key order by UTF-16 code units, and dropped members", () => {
    const value = { b: [1e21, 1e-7, -0, 0.1, 2 ** 53, undefined, () => 1], a: { "\u00e9": 1, e: 2, "\ud83d\ude00": 3, "\uff5e": 4 }, c: undefined, d: new Date(0), e: "\u2028\"\\\n" };
    expect(jcs(value)).toBe(canonicalize(value));
  });

  it("refuses what JCS cannot express, as canonicalize does", () => {
    for (const bad of [{ x: Number.NaN }, [Number.POSITIVE_INFINITY], { s: "\ud800" }]) {
      expect(() => jcs(bad)).toThrow();
      expect(() => canonicalize(bad)).toThrow();
    }
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => jcs(circular)).toThrow(/Circular/);
    expect(() => jcs(undefined)).toThrow(TypeError);
  });

  it("keeps the Agentline test vector's hashes", () => {
    expect(payloadHash({ text: "hello" })).toBe("sha256:cbbbdcd27692344de5dbab3abcaba413fb0f45307267de7081401576df1cb176");
    expect(payloadHash({})).toBe("sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    expect(jcs({ z: { y: 1, x: 2 }, a: [3, 4] })).toBe('{"a":[3,4],"z":{"x":2,"y":1}}');
  });
});
