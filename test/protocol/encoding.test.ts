// Byte/text conversions: keys, signatures and stored bodies all pass through these, so leniency here
// (a second spelling of the same bytes, a silently replaced invalid byte) becomes leniency everywhere.
import { describe, expect, it } from "vitest";
import { constantTimeEqual, decodeUtf8, fromBase64, toBase64, toBase64Url, toHex, utf8 } from "../../protocol/index.ts";

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

describe("fromBase64", () => {
  it("round-trips every byte value and every padding length", () => {
    expect(fromBase64(toBase64(ALL_BYTES))).toEqual(ALL_BYTES);
    for (let n = 0; n <= 4; n++) expect(fromBase64(toBase64(ALL_BYTES.subarray(250, 250 + n)))).toEqual(ALL_BYTES.subarray(250, 250 + n));
  });

  it("round-trips a 1 MiB buffer (toBase64 is chunked past the fromCharCode argument limit)", () => {
    const big = Uint8Array.from({ length: 1 << 20 }, (_, i) => (i * 31) & 0xff);
    expect(fromBase64(toBase64(big))).toEqual(big);
  });

  it("decodes the standard alphabet with padding", () => {
    expect(fromBase64("+/+/")).toEqual(new Uint8Array([0xfb, 0xff, 0xbf]));
    expect(fromBase64("AAECAw==")).toEqual(new Uint8Array([0, 1, 2, 3]));
    expect(fromBase64("")).toEqual(new Uint8Array(0));
  });

  const rejected: Array<[string, string]> = [
    ["url-safe alphabet", "-_-_"],
    ["url-safe output of toBase64Url", toBase64Url(new Uint8Array([0xfb, 0xff, 0xbf]))],
    ["missing padding (2 chars)", "AAECAw"],
    ["missing padding (3 chars)", "AAECAwQ"],
    ["too much padding", "AAECAw==="],
    ["padding in the middle", "AA==AAAA"],
    ["lone padding char", "A==="],
    ["single char", "A"],
    ["whitespace", "AAEC Aw=="],
    ["trailing newline", "AAECAw==\n"],
    ["non-ASCII", "AAEC\u00e9w=="],
  ];
  for (const [name, text] of rejected) {
    it(`rejects ${name}`, () => {
      expect(fromBase64(text)).toBeNull();
    });
  }

  // Non-zero unused bits give a second spelling of the same bytes; key texts are hashed into agent
  // ids (docs/protocol.md, "Agent ids"), so one key must have one text.
  it("rejects non-canonical trailing bits", () => {
    expect(fromBase64("AAECAw==")).not.toBeNull();
    expect(fromBase64("AAECAx==")).toBeNull();
    expect(fromBase64("AAECAwQ=")).not.toBeNull();
    expect(fromBase64("AAECAwR=")).toBeNull();
  });
});

describe("decodeUtf8", () => {
  it("decodes valid UTF-8, including 4-byte sequences", () => {
    expect(decodeUtf8(utf8("héllo 🦀"))).toBe("héllo 🦀");
    expect(decodeUtf8(new Uint8Array(0))).toBe("");
  });

  const invalid: Array<[string, number[]]> = [
    ["a lone 0xff", [0x68, 0xff]],
    ["a truncated 2-byte sequence", [0x68, 0xc3]],
    ["a lone continuation byte", [0x80]],
    ["an overlong '/'", [0xc0, 0xaf]],
    ["an encoded UTF-16 surrogate", [0xed, 0xa0, 0x80]],
    ["a code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
  ];
  for (const [name, bytes] of invalid) {
    it(`returns null for ${name}`, () => {
      expect(decodeUtf8(new Uint8Array(bytes))).toBeNull();
    });
  }

  it("keeps a leading BOM, so decode then encode gives back the same bytes", () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]);
    const text = decodeUtf8(bytes);
    expect(text).toBe("\uFEFFhi");
    expect(utf8(text!)).toEqual(bytes);
  });

  it("keeps a BOM-only body", () => {
    expect(utf8(decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf]))!)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
  });
});

describe("constantTimeEqual", () => {
  it("is true only for identical bytes of equal length", () => {
    const a = utf8("webhook-token-0123456789");
    expect(constantTimeEqual(a, a.slice())).toBe(true);
    expect(constantTimeEqual(new Uint8Array(0), new Uint8Array(0))).toBe(true);
    const first = a.slice();
    first[0]! ^= 1;
    const last = a.slice();
    last[last.length - 1]! ^= 0x80;
    expect(constantTimeEqual(a, first)).toBe(false);
    expect(constantTimeEqual(a, last)).toBe(false);
    expect(constantTimeEqual(a, a.subarray(0, a.length - 1))).toBe(false);
    expect(constantTimeEqual(a.subarray(0, 1), a)).toBe(false);
  });
});

describe("toHex and toBase64Url", () => {
  it("spell bytes as lowercase hex and unpadded url-safe base64", () => {
    expect(toHex(new Uint8Array([0, 0xab, 0xff]))).toBe("00abff");
    expect(toBase64Url(new Uint8Array([0xfb, 0xff, 0xbf, 0x01]))).toBe("-_-_AQ");
  });
});
