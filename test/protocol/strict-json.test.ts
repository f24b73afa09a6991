// protocol/strict-json.ts: duplicate keys, excessive depth and lone UTF-16 surrogates (in keys and in
// values, written as \u escapes or raw) are a 400 invalid_json saying what to fix; everything JSON.parse
// takes otherwise parses as JSON.parse does. The scan is a loop: 100,000 levels are refused, not a
// RangeError. Fixed seeds; the describe names the number of generated inputs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, RelayError, containerEnd, parseStrictJson, strictJsonProblem } from "../../protocol/index.ts";

function refusal(text: string): RelayError {
  try {
    parseStrictJson(text);
  } catch (err) {
    return err as RelayError;
  }
  throw new Error(`accepted ${JSON.stringify(text).slice(0, 200)}`);
}

const isWellFormed = (text: string) => (text as string & { isWellFormed(): boolean }).isWellFormed();

describe("lone surrogates", () => {
  const refused: [string, string][] = [
    ["an escaped high one in a value", '{"a":"x\\ud800y"}'],
    ["an escaped low one in a value", '["\\uDC00"]'],
    ["a pair in the wrong order", '"\\udc00\\ud800"'],
    ["a high one before an escaped backslash", '{"a":"\\ud800\\\\udc00"}'],
    ["an escaped one in a key", '{"\\ud800":1}'],
    ["one in the second of two keys", '{"a":1,"b\\udbff":2}'],
    ["a raw high one in a value", '{"a":"x\ud800"}'],
    ["a raw low one in a key", '{"\udc00":1}'],
    ["a raw high one before an escaped low one", '"\ud83d\\ude00"'],
    ["one deep inside", `${'{"a":['.repeat(20)}"\\ud800"${"]}".repeat(20)}`],
  ];
  for (const [name, text] of refused) {
    it(`refuses ${name} with 400 invalid_json saying what to fix`, () => {
      const err = refusal(text);
      expect(err).toBeInstanceOf(RelayError);
      expect([err.status, err.code]).toEqual([400, "invalid_json"]);
      expect(err.message).toMatch(/lone UTF-16 surrogate/);
      expect(err.message).toMatch(/well-formed Unicode/);
    });
  }

  it("says whether it was in a key or a string", () => {
    expect(refusal('{"\\ud800":1}').message).toContain("an object key");
    expect(refusal('{"a":"\\ud800"}').message).toContain("a string");
  });

  it("takes well-formed text: escaped and raw pairs, an escaped backslash before 'ud800', upper-case escapes", () => {
    for (const text of ['{"a":"\\ud83d\\ude00"}', '{"a":"\ud83d\ude00"}', '{"\\uD83D\\uDE00":1}', '{"a":"\\\\ud800"}', '"\\u00e9\\uFFFD"', '["\\\\\\\\ud800"]']) {
      expect(parseStrictJson(text)).toEqual(JSON.parse(text));
    }
  });
});

describe("depth and duplicates", () => {
  it("refuses 65 levels and takes 64; 100,000 levels are a refusal, not a RangeError", () => {
    expect(() => parseStrictJson("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).not.toThrow();
    for (const depth of [MAX_JSON_DEPTH + 1, 3000, 100_000]) {
      const err = refusal('{"a":'.repeat(depth) + "1" + "}".repeat(depth));
      expect([err.code, err.message]).toEqual(["invalid_json", `the JSON is nested more than ${MAX_JSON_DEPTH} levels deep; send at most ${MAX_JSON_DEPTH} levels of objects and arrays`]);
    }
  });

  it("refuses a key twice in one object, spelled alike or not, and names it", () => {
    expect(refusal('{"a":1,"a":2}').message).toContain('"a" twice');
    expect(refusal('{"é":1,"\\u00e9":2}').message).toContain('"é" twice');
    expect(parseStrictJson('{"a":{"a":1},"b":{"a":2}}')).toEqual({ a: { a: 1 }, b: { a: 2 } });
  });
});

describe("where a problem is (what the hub page reader sets aside by)", () => {
  it("gives the offsets of the containers open at the problem, and containerEnd the end of one", () => {
    const text = '{"messages":[{"hub_msg_id":"h1"},{"hub_msg_id":"h2","x":"\\ud800"}],"has_more":false}';
    const problem = strictJsonProblem(text)!;
    expect(problem.openAt).toEqual([0, 12, text.indexOf('{"hub_msg_id":"h2"')]);
    expect(text.slice(problem.openAt[2], containerEnd(text, problem.openAt[2]!))).toBe('{"hub_msg_id":"h2","x":"\\ud800"}');
    expect(strictJsonProblem('{"messages":[]}')).toBeNull();
  });
});

/** Code units that make lone surrogates likely, pairs, and plain characters; no quote or backslash. */
const unit = fc.constantFrom("a", "é", "\ud83d", "\ude00", "\ud800", "\udfff", "\uffff", " ", "\u2028");
const piece = fc.string({ unit, maxLength: 6 });
/** A JSON value of such strings, with keys of such strings too. */
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small" }, piece, fc.integer(), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(piece, tie("node"), { maxKeys: 4 })),
})).node as fc.Arbitrary<unknown>;

/** Whether every string in the value, keys included, is well-formed UTF-16. */
function wellFormed(v: unknown): boolean {
  const stack = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === "string" && !isWellFormed(x)) return false;
    if (Array.isArray(x)) stack.push(...x);
    else if (typeof x === "object" && x !== null) for (const [k, item] of Object.entries(x)) stack.push(k, item);
  }
  return true;
}

/** JSON text with strings written raw (JSON.stringify escapes lone surrogates; this does not). */
function rawText(v: unknown): string {
  if (typeof v === "string") return `"${v}"`;
  if (Array.isArray(v)) return `[${v.map(rawText).join(",")}]`;
  if (typeof v === "object" && v !== null) return `{${Object.entries(v).map(([k, item]) => `${rawText(k)}:${rawText(item)}`).join(",")}}`;
  return JSON.stringify(v);
}

const RUNS = 1000;

describe(`generated values with lone surrogates, written escaped and raw (${2 * RUNS} generated inputs)`, () => {
  it("are refused exactly when a key or a string is not well-formed, and otherwise parse as JSON.parse does", () => {
    for (const [seed, write] of [[0x5111, (v: unknown) => JSON.stringify(v)], [0x5112, rawText]] as const) {
      fc.assert(
        fc.property(value, (v) => {
          const text = write(v);
          if (wellFormed(v)) expect(parseStrictJson(text)).toEqual(JSON.parse(text));
          else expect(refusal(text).message).toMatch(/lone UTF-16 surrogate/);
        }),
        { seed, numRuns: RUNS },
      );
    }
  });
});
