// Generators of bad input shared by test/worker/bad-input/*.test.ts, and the checks every answer to
// bad input must pass. Bodies are what a careless or hostile sender can put on the wire: broken JSON,
// JSON of the wrong types, nesting deep enough to overflow a recursive walker, huge strings.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { DIRECTORY_NAME } from "../../../worker/directory/routes.ts";

/** Cuts a text for a failure report: a counterexample may be a 300 KB string or 10,000 levels deep. */
function cut(text: string, max = 600): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

/**
 * fc.assert parameters: a fixed seed so every run is the same, and a report of a failure that stays
 * readable (fast-check's own would print a huge counterexample whole). Replay a failure with its path.
 */
export function settings<T>(seed: number, numRuns: number): fc.Parameters<T> {
  return {
    seed,
    numRuns,
    reporter: (details) => {
      if (!details.failed) return;
      let example: string;
      try {
        example = fc.stringify(details.counterexample);
      } catch {
        example = "(too deep to print)";
      }
      const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(`property failed after ${details.numRuns} runs (seed ${seed}, path "${details.counterexamplePath}", shrunk ${details.numShrinks} times)\ncounterexample: ${cut(example)}\nerror: ${cut(error, 1500)}`);
    },
  };
}

/** Error codes are stable snake_case identifiers (house style). */
export const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** `[[[…]]]` and `{"a":{"a":…}}` `depth` levels deep: JSON.parse copes, recursive code may not. */
export function deeplyNested(depth: number, kind: "array" | "object"): string {
  return kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

export const deepJsonText = fc.record({ depth: fc.constantFrom(64, 1000, 10_000), kind: fc.constantFrom("array" as const, "object" as const) }).map(({ depth, kind }) => deeplyNested(depth, kind));

/** A JSON value that is nested too deep for a naive recursive walker (parsed from deepJsonText). */
export const deepJsonValue = deepJsonText.map((text) => JSON.parse(text) as unknown);

/** Strings from empty to past every body limit (256 KiB by default), built fast with repeat(). */
export const hugeString = fc
  .record({ length: fc.constantFrom(0, 1, 4096, 70_000, 262_145, 300_000), unit: fc.constantFrom("a", "é", "\u0000", "\"", "\\", "😀") })
  .map(({ length, unit }) => unit.repeat(length));

const brokenJsonFixed = fc.constantFrom(
  "", " ", "{", "}", "[", "[1,]", "{'a':1}", '{"a":1,}', '{"a"}', "NaN", "Infinity", "undefined", "\u0000",
  '{"a":1}garbage', "\ufeff{}", "1e99999", "-", '"unterminated', '{"a":"\\x41"}', '{"a":"\\ud800"}', "[".repeat(5),
  '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"x":1}}}', "null", "true", "0", '"text"', "[]",
);

/** Text that is not JSON, or is JSON of a surprising kind: fixed nasties and mutated valid JSON. */
export const malformedJsonText = fc.oneof(
  brokenJsonFixed,
  fc.json({ maxDepth: 3 }).chain((text) =>
    fc.nat({ max: Math.max(0, text.length) }).chain((cut) =>
      fc.oneof(
        fc.constant(text.slice(0, cut)),
        fc.string({ unit: "binary", minLength: 1, maxLength: 3 }).map((junk) => text.slice(0, cut) + junk + text.slice(cut)),
      ),
    ),
  ),
  fc.string({ unit: "binary", maxLength: 40 }),
);

/** Text a base64 field could be given instead of canonical padded base64. */
export const badBase64 = fc.oneof(
  fc.constantFrom("", "=", "==", "A", "AA", "AAA", "A===", "AAAA=", "****", "AAAA AAAA", "AA==\n", "AB==", "-_-_", "QUJD\u0000", "😀😀😀😀"),
  fc.string({ maxLength: 60 }),
  fc.base64String({ maxLength: 60 }).map((s) => s.replace(/=/g, "")),
);

/** Any JSON value but a deep one: these may be JSON.stringify'd (which overflows on 10,000 levels). */
export const shallowJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: badBase64 },
);

/** Any JSON value, deep ones included: for parsers that take values; never stringify these. */
export const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof({ weight: 8, arbitrary: shallowJsonValue }, { weight: 1, arbitrary: deepJsonValue });

/** JSON text of any value, deep ones included (built as text, not by JSON.stringify). */
export const anyJsonText: fc.Arbitrary<string> = fc.oneof({ weight: 8, arbitrary: shallowJsonValue.map((v) => JSON.stringify(v)) }, { weight: 1, arbitrary: deepJsonText });

/** `{…}` from keys and ready JSON texts: how a generated (maybe deep) value goes into an object. */
export function objectText(entries: readonly (readonly [string, string])[]): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`;
}

/** `record` as JSON text with `field` set to the JSON text `valueText` (added if absent). */
export function withFieldText(record: Record<string, unknown>, field: string, valueText: string): string {
  const entries = Object.entries(record).map(([k, v]) => [k, k === field ? valueText : JSON.stringify(v)] as const);
  return objectText(field in record ? entries : [...entries, [field, valueText]]);
}

export type JsonType = "string" | "number" | "integer" | "boolean" | "null" | "array" | "object";

function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value as JsonType;
}

/** A JSON value whose type is none of `allowed`; "integer" means any safe integer is of the right type. */
export function wrongTyped(...allowed: JsonType[]): fc.Arbitrary<unknown> {
  const fractions = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n));
  const pool = fc.oneof(shallowJsonValue, allowed.includes("integer") ? fractions : fc.constant(null), fc.constantFrom(-1, 2 ** 53, 1e308, -0.5, 0));
  return pool.filter((value) => {
    const type = jsonTypeOf(value);
    if (type === "number") return !allowed.includes("number") && !(allowed.includes("integer") && Number.isSafeInteger(value));
    return !allowed.includes(type);
  });
}

/** A request body: broken JSON text, JSON text of any value, raw bytes, or nothing. */
export const anyBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  malformedJsonText,
  anyJsonText,
  hugeString,
  fc.uint8Array({ maxLength: 64 }),
);

/** A path segment: odd characters, valid and invalid percent-encodings, dot segments, long runs. */
export const pathSegment = fc.oneof(
  fc.constantFrom("%ZZ", "%", "a%2", "%C0%AF", "%FF", "%2F", "%2f", "%5C", "%00", "%2e%2e", "..", ".", "", "a b", "é", "%E2%80%AE", "~", "agentgram_inbox", "wake", ";", "@", "%25", "%%", "a%", "\\", "|", "'"),
  fc.string({ unit: fc.constantFrom("a", "Z", "0", "-", "_", ".", "~", "%", "2", "F", "/", " ", "é", "\u0001", "#", "?", "&", "=", '"'), maxLength: 12 }),
  fc.constantFrom(300, 3000, 20_000).map((n) => "a".repeat(n)),
);

// Printable ASCII only: workerd accepts Latin-1 header values but logs a warning for each.
const printableAscii = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });

/** Header values a Headers object accepts, huge ones included. */
export const headerValue = fc.oneof(
  printableAscii,
  badBase64.filter((s) => /^[\x20-\x7e]*$/.test(s)),
  fc.constantFrom("Bearer", "Bearer ", "Bearer crw_", "ed25519:", "ed25519:AAAA", "0", "-1", "99999999999999999999", "1e3", "0x10", "websocket"),
  fc.constantFrom(8_000, 60_000).map((n) => "b".repeat(n)),
);

export interface ErrorShapeProblem {
  problem: string;
}

/**
 * The answer to bad input: never a 5xx but a gateway's 502/504, and every JSON error in the one shape
 * {"error":{"code","message"}} with a snake_case code. Returns the problem, or null when it is right.
 */
export function answerProblem(status: number, contentType: string | null, text: string): string | null {
  if (status >= 500 && status !== 502 && status !== 504) return `status ${status}: ${text.slice(0, 300)}`;
  if (status < 400 || !contentType?.includes("json")) return null;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `status ${status} says JSON but the body is not: ${text.slice(0, 200)}`;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code !== "string" || typeof error.message !== "string" || !SNAKE_CASE.test(error.code)) {
    return `status ${status} is not {"error":{"code","message"}} with a snake_case code: ${text.slice(0, 200)}`;
  }
  return null;
}

/**
 * Reads the whole answer (before anything may evict the object) and checks it; the text is returned.
 * An answer to HEAD has no body to check.
 */
export async function expectWellFormedAnswer(res: Response, what: string, method = "GET"): Promise<string> {
  if (res.webSocket) {
    res.webSocket.accept();
    res.webSocket.close(1000, "bad-input test done");
    return "";
  }
  const text = await res.text();
  if (method.toUpperCase() === "HEAD") return text;
  const problem = answerProblem(res.status, res.headers.get("content-type"), text);
  if (problem) throw new Error(`${what}: ${problem}`);
  return text;
}

/** Messages stored in an inbox, in any state. */
export function storedCount(agentId: string): Promise<number> {
  return runInDurableObject(env.INBOX.getByName(agentId), (inbox) => inbox.store.queueStats().count);
}

/** Cards in the directory, read from its SQLite. */
export function directoryCardCount(): Promise<number> {
  return runInDurableObject(env.DIRECTORY.getByName(DIRECTORY_NAME), (_directory, state) => Number(state.storage.sql.exec("SELECT count(*) AS n FROM cards").one().n));
}

/** The inbox's config as stored, to prove a refused request changed nothing. */
export function configText(agentId: string): Promise<string> {
  return runInDurableObject(env.INBOX.getByName(agentId), (inbox) => JSON.stringify(inbox.config));
}

/** Offsets just past the opening quote of every string in JSON text (keys and values alike). */
export function stringStarts(text: string): number[] {
  const starts: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '"') continue;
    starts.push(i + 1);
    for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
  }
  return starts;
}

/** One UTF-16 surrogate code unit, spelled as a \u escape (either case) or raw: WTF-8 bytes on the wire, which UTF-8 has no room for. */
export const loneSurrogate = fc.record({
  unit: fc.oneof(fc.integer({ min: 0xd800, max: 0xdbff }), fc.integer({ min: 0xdc00, max: 0xdfff })),
  spelling: fc.constantFrom("escape" as const, "ESCAPE" as const, "raw" as const),
  /** Which string of the text gets it (taken modulo their number). */
  which: fc.nat(),
});
export type LoneSurrogate = typeof loneSurrogate extends fc.Arbitrary<infer T> ? T : never;

/** The bytes of JSON `text` with the surrogate put at the start of one of its strings. */
export function withLoneSurrogate(text: string, s: LoneSurrogate): Uint8Array {
  const starts = stringStarts(text);
  const at = starts[s.which % starts.length]!;
  const encode = (t: string) => new TextEncoder().encode(t);
  if (s.spelling !== "raw") {
    const hex = s.unit.toString(16);
    return encode(`${text.slice(0, at)}\\u${s.spelling === "escape" ? hex : hex.toUpperCase()}${text.slice(at)}`);
  }
  const wtf8 = [0xe0 | (s.unit >> 12), 0x80 | ((s.unit >> 6) & 0x3f), 0x80 | (s.unit & 0x3f)];
  return Uint8Array.from([...encode(text.slice(0, at)), ...wtf8, ...encode(text.slice(at))]);
}
