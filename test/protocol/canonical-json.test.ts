// protocol/canonical-json.ts and protocol/posted-payload.ts: the one-scan check that a payload's bytes are
// its JCS form gives the same verdict as the slow path (fatal UTF-8 decode, strict parse, then
// canonicalize, then compare) on generated texts and bytes, canonical and not: every JCS text passes, and whatever passes is its own JCS. An
// envelope as `clawrelay send` posts it is found and hashed from its bytes. Fixed seeds; the describe
// names the number of generated inputs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_JSON_DEPTH,
  canonicalJsonEnd,
  decodeUtf8,
  draftEnvelope,
  envelopeText,
  jcs,
  sha256Hex,
  signEnvelope,
  splitCanonicalPayload,
  strictJsonProblem,
  utf8,
  withPayloadFrom,
} from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";

/** The slow path's verdict: strict JSON whose JCS form is the text itself. */
function isOwnJcs(text: string): boolean {
  if (strictJsonProblem(text) !== null) return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON at all: the slow path refuses it too.
    return false;
  }
  try {
    return jcs(value) === text;
  } catch {
    // No JCS form (a number past the doubles, read as Infinity): the slow path refuses it too.
    return false;
  }
}

const fastVerdict = (text: string) => canonicalJsonEnd(utf8(text), 0, MAX_JSON_DEPTH) === utf8(text).length;

// Well-formed strings only: the relay's text is decoded from UTF-8 (canonical-json.ts says why).
const json = fc.jsonValue({ maxDepth: 4, stringUnit: "grapheme" });
/** Ways a sender writes the same value other than JCS: spaces, unsorted keys, other escapes and spellings. */
const REWRITES: [string, (text: string) => string][] = [
  ["spaces after separators", (t) => t.replaceAll(",", ", ").replaceAll(":", ": ")],
  ["an escaped slash", (t) => t.replace("/", "\\/")],
  ["an escaped letter", (t) => t.replace('"a', '"\\u0061')],
  ["an upper-case hex escape", (t) => t.replace("\\u001f", "\\u001F")],
  ["a long escape for a newline", (t) => t.replace("\\n", "\\u000a")],
  ["a fraction on an integer", (t) => t.replace(/(\d)(?=[,\]}]|$)/, "$1.0")],
  ["a trailing zero on a fraction", (t) => t.replace(/(\.\d+)/, "$10")],
  ["a leading zero", (t) => t.replace(/:(\d)/, ":0$1")],
  ["an exponent", (t) => t.replace(/:(\d+)(?=[,}])/, ":$1e0")],
  ["a leading newline", (t) => `\n${t}`],
];

describe("canonicalJsonEnd agrees with strict parse + canonicalize (2,000 values, 3,000 rewrites, 3,000 numbers, 3,000 changed bytes, 2,000 fragments)", () => {
  it("passes the JCS text of every generated value", () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = jcs(value);
        expect(fastVerdict(text)).toBe(true);
      }),
      { seed: 0x3c5, numRuns: 2000 },
    );
  });

  it("gives the slow path's verdict on JSON.stringify's text (keys in insertion order), with and without indentation", () => {
    fc.assert(
      fc.property(json, fc.boolean(), (value, indent) => {
        const text = JSON.stringify(value, null, indent ? 1 : undefined);
        expect(fastVerdict(text)).toBe(isOwnJcs(text));
      }),
      { seed: 0x3c6, numRuns: 1000 },
    );
  });

  it("gives the slow path's verdict on JCS text rewritten as other senders write it", () => {
    fc.assert(
      fc.property(json, fc.constantFrom(...REWRITES), (value, [, rewrite]) => {
        const text = rewrite(jcs(value));
        expect(fastVerdict(text)).toBe(isOwnJcs(text));
      }),
      { seed: 0x3c7, numRuns: 2000 },
    );
  });

  it("gives the decode-then-slow-path verdict on JCS bytes with one byte changed (invalid UTF-8, overlong forms, surrogates among them)", () => {
    const valueWithText = fc.record({ a: fc.string({ unit: "grapheme", maxLength: 12 }), b: json });
    fc.assert(
      fc.property(valueWithText, fc.nat(), fc.integer({ min: 0, max: 255 }), (value, where, byte) => {
        const bytes = utf8(jcs(value));
        bytes[where % bytes.length] = byte;
        const text = decodeUtf8(bytes);
        const slow = text !== null && isOwnJcs(text);
        expect(canonicalJsonEnd(bytes, 0, MAX_JSON_DEPTH) === bytes.length).toBe(slow);
      }),
      { seed: 0x3ca, numRuns: 3000 },
    );
    // Unicode's Table 3-7 edges, each inside a string.
    const inString = (...middle: number[]) => new Uint8Array([0x22, ...middle, 0x22]);
    const accepted = [[0xc2, 0x80], [0xdf, 0xbf], [0xe0, 0xa0, 0x80], [0xed, 0x9f, 0xbf], [0xee, 0x80, 0x80], [0xf0, 0x90, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf]];
    const refused = [[0xc0, 0x80], [0xc1, 0xbf], [0xe0, 0x9f, 0xbf], [0xed, 0xa0, 0x80], [0xf0, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0x80], [0xe1, 0x80]];
    for (const sequence of accepted) expect([sequence, canonicalJsonEnd(inString(...sequence), 0, 1)]).toEqual([sequence, sequence.length + 2]);
    for (const sequence of refused) expect([sequence, canonicalJsonEnd(inString(...sequence), 0, 1)]).toEqual([sequence, -1]);
  });

  it("gives the slow path's verdict on fragments of JSON's alphabet (syntax it must refuse, numbers it must judge)", () => {
    const fragment = fc.string({ unit: fc.constantFrom(..."{}[]\":,0123456789.-+eEtrufalsn\\/ab é"), maxLength: 24 });
    fc.assert(
      fc.property(fragment, (text) => {
        expect(fastVerdict(text)).toBe(isOwnJcs(text));
      }),
      { seed: 0x3c8, numRuns: 2000 },
    );
  });

  it("gives the slow path's verdict on ordinary numbers in every spelling (toString, toFixed, toPrecision, toExponential, a trailing zero)", () => {
    const number = fc.oneof(fc.double({ min: -1e7, max: 1e7, noNaN: true }), fc.integer({ min: -1e9, max: 1e9 }).map((n) => n / 1000), fc.integer().map((n) => n / 1e7), fc.integer());
    const spelling = fc.constantFrom<(n: number, digits: number) => string>(
      (n) => String(n),
      (n, d) => n.toFixed(d % 8),
      (n, d) => n.toPrecision(d),
      (n, d) => n.toExponential(d % 8),
      (n) => (String(n).includes(".") ? `${n}0` : `${n}.0`),
    );
    fc.assert(
      fc.property(number, fc.integer({ min: 1, max: 21 }), spelling, (n, digits, spell) => {
        const text = `[${spell(n, digits)}]`;
        expect([text, fastVerdict(text)]).toEqual([text, isOwnJcs(text)]);
      }),
      { seed: 0x3c9, numRuns: 3000 },
    );
  });

  it("judges numbers as Number::toString spells them, at the 15-digit and 1e-6 edges", () => {
    const spellings = ["0", "-0", "1", "-1", "01", "1.0", "1.5", "-0.5", "0.000001", "0.0000001", "1e-7", "1e+21", "1e21", "1E+21", "100000000000000000000", "123456789012345", "1234567890123456", "12345678901234567", "0.1", "0.30000000000000004", "1.", ".5", "-", "2e3", "9007199254740993"];
    for (const spelled of spellings) expect([spelled, fastVerdict(spelled)]).toEqual([spelled, isOwnJcs(spelled)]);
    // A number of 200,000 digits (within a body's 256 KiB) is judged, not a stack overflow.
    const long = `[1${"1".repeat(200_000)}]`;
    expect(fastVerdict(long)).toBe(isOwnJcs(long));
  });

  it("refuses escapes JCS does not write, duplicate and unsorted keys, and depth past the limit", () => {
    for (const text of ['"\\/"', '"\\u0008"', '"\\u00e9"', '"\\ud83d\\ude00"', '{"a":1,"a":2}', '{"b":1,"a":2}', '{"\\u0062":1,"a":2}', "[1,2,]", "[1 ,2]", '"a\nb"']) {
      expect([text, fastVerdict(text)]).toEqual([text, false]);
    }
    for (const text of ['"\\u001f\\b\\t\\n\\f\\r\\"\\\\"', '{"\\n":1,"a":2}', '{"a":{"b":[true,false,null]},"é":"x"}']) expect([text, fastVerdict(text)]).toEqual([text, true]);
    // UTF-16 order, not UTF-8's: a character past U+FFFF (a surrogate pair, 0xD8xx) sorts before U+E000.
    expect([fastVerdict('{"\u{1f600}":1,"\ue000":2}'), fastVerdict('{"\ue000":2,"\u{1f600}":1}')]).toEqual([true, false]);
    // Around the length where the scan of a string changes method, escapes and raw controls at every place.
    for (let length = 40; length <= 60; length++) {
      for (let at = 0; at < length; at += 7) {
        const plain = "x".repeat(length);
        const withEscape = `"${plain.slice(0, at)}\\n${plain.slice(at)}"`;
        const withRaw = `"${plain.slice(0, at)}\n${plain.slice(at)}"`;
        const withQuote = `"${plain.slice(0, at)}\\"${plain.slice(at)}"`;
        expect([withEscape, fastVerdict(withEscape), fastVerdict(withQuote)]).toEqual([withEscape, true, true]);
        expect([withRaw, fastVerdict(withRaw), fastVerdict(`"${plain.slice(0, at)}\\/${plain.slice(at)}"`)]).toEqual([withRaw, false, false]);
      }
    }
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(canonicalJsonEnd(utf8(nested(MAX_JSON_DEPTH)), 0, MAX_JSON_DEPTH)).toBe(2 * MAX_JSON_DEPTH);
    expect(canonicalJsonEnd(utf8(nested(MAX_JSON_DEPTH + 1)), 0, MAX_JSON_DEPTH)).toBe(-1);
  });
});

describe("an envelope posted as `clawrelay send` posts it", () => {
  const sign = () => new Uint8Array(64);
  const envelopeOf = async (payload: Record<string, unknown>): Promise<Envelope> =>
    signEnvelope(await draftEnvelope({ from: "ag_0123456789ab", to: "ag_ba9876543210", type: "message", payload }), "k_test", sign);

  it("has its payload found, hashed from its bytes to payload_hash, and parsed only when read", async () => {
    const envelope = await envelopeOf({ z: [1, 2.5, "ü"], a: { y: null, b: "\u0007" }, text: "hi / there" });
    const text = envelopeText(envelope);
    expect(JSON.parse(text)).toEqual(envelope);
    const bytes = utf8(text);
    const split = splitCanonicalPayload(bytes)!;
    expect(split).not.toBeNull();
    expect(`sha256:${await sha256Hex(bytes.subarray(split.start, split.end))}`).toBe(envelope.payload_hash);
    const parsed = withPayloadFrom({ ...(JSON.parse(split.rest) as Envelope) }, bytes, split);
    expect(parsed.payload).toEqual(envelope.payload);
    expect(JSON.parse(JSON.stringify(parsed))).toEqual(envelope);
  });

  it("is not found when the payload is not in JCS form, is not an object, or is there twice", async () => {
    const envelope = await envelopeOf({ b: 1, a: 2 });
    const split = (text: string) => splitCanonicalPayload(utf8(text));
    expect(split(JSON.stringify(envelope))).toBeNull();
    expect(split(JSON.stringify(envelope, null, 2))).toBeNull();
    const text = envelopeText(envelope);
    expect(split(text)).not.toBeNull();
    expect(split(text.replace('"payload":{', '"payload":[{').replace(/}}$/, "}]}"))).toBeNull();
    expect(split(text.replace('{"v"', '{"payload":{},"v"'))).toBeNull();
    expect(split(text.replace('"payload"', '"p\\u0061yload"'))).toBeNull();
  });
});
