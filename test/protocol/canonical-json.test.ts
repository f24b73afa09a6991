// protocol/canonical-json.ts and protocol/posted-payload.ts: the one-scan check that a payload is in its
// JCS form gives the same verdict as the slow path (strict parse, then canonicalize, then compare) on
// generated texts, canonical and not: every JCS text passes, and whatever passes is its own JCS. An
// envelope as `clawrelay send` posts it is found and hashed from its bytes. Fixed seeds; the describe
// names the number of generated inputs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  MAX_JSON_DEPTH,
  canonicalJsonEnd,
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
  return jcs(value) === text;
}

const fastVerdict = (text: string) => canonicalJsonEnd(text, 0, MAX_JSON_DEPTH) === text.length;

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

describe("canonicalJsonEnd agrees with strict parse + canonicalize (2,000 values, 3,000 rewrites, 3,000 numbers, 2,000 fragments)", () => {
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
  });

  it("refuses escapes JCS does not write, duplicate and unsorted keys, and depth past the limit", () => {
    for (const text of ['"\\/"', '"\\u0008"', '"\\u00e9"', '"\\ud83d\\ude00"', '{"a":1,"a":2}', '{"b":1,"a":2}', '{"\\u0062":1,"a":2}', "[1,2,]", "[1 ,2]", '"a\nb"']) {
      expect([text, fastVerdict(text)]).toEqual([text, false]);
    }
    for (const text of ['"\\u001f\\b\\t\\n\\f\\r\\"\\\\"', '{"\\n":1,"a":2}', '{"a":{"b":[true,false,null]},"é":"x"}']) expect([text, fastVerdict(text)]).toEqual([text, true]);
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
    expect(canonicalJsonEnd(nested(MAX_JSON_DEPTH), 0, MAX_JSON_DEPTH)).toBe(2 * MAX_JSON_DEPTH);
    expect(canonicalJsonEnd(nested(MAX_JSON_DEPTH + 1), 0, MAX_JSON_DEPTH)).toBe(-1);
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
    const split = splitCanonicalPayload(text)!;
    expect(split).not.toBeNull();
    expect(`sha256:${await sha256Hex(utf8(text.slice(split.start, split.end)))}`).toBe(envelope.payload_hash);
    const parsed = withPayloadFrom({ ...(JSON.parse(split.rest) as Envelope) }, text, split);
    expect(parsed.payload).toEqual(envelope.payload);
    expect(JSON.parse(JSON.stringify(parsed))).toEqual(envelope);
  });

  it("is not found when the payload is not in JCS form, is not an object, or is there twice", async () => {
    const envelope = await envelopeOf({ b: 1, a: 2 });
    expect(splitCanonicalPayload(JSON.stringify(envelope))).toBeNull();
    expect(splitCanonicalPayload(JSON.stringify(envelope, null, 2))).toBeNull();
    const text = envelopeText(envelope);
    expect(splitCanonicalPayload(text.replace('"payload":{', '"payload":[{').replace(/}}$/, "}]}"))).toBeNull();
    expect(splitCanonicalPayload(text.replace('{"v"', '{"payload":{},"v"'))).toBeNull();
    expect(splitCanonicalPayload(text.replace('"payload"', '"p\\u0061yload"'))).toBeNull();
  });
});
