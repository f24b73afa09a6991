// JSON as the relay accepts it from outside: RFC 8259 text with no duplicate key in any object, no
// nesting deeper than MAX_JSON_DEPTH and no lone UTF-16 surrogate in any key or value (I-JSON, RFC 7493;
// RFC 8785 cannot hash one). JSON.parse keeps the last of two equal keys; a signature checked over one
// reading while another parser (the gateway, a hub) takes the first would be a signature over something
// else, so duplicates are refused, naming the key. A lone surrogate has no UTF-8 form: encoders write
// U+FFFD for it, so "a\ud800" and "a\ufffd" would sign, hash and store as the same text while comparing
// as different ids. Depth is capped so that no later step has to cope with deep values. The scan is a
// loop over the text (never recursive), so a 10,000-deep body is refused, not a RangeError.
// Covered by test/protocol/strict-json.test.ts and test/worker/bad-input/surrogates.test.ts.
import { RelayError } from "./errors.ts";

export const MAX_JSON_DEPTH = 64;

/** What the scan found first: the message a refusal carries, where, and the containers open there. */
export interface StrictJsonProblem {
  message: string;
  /** Offset in the text of the offending character, key or bracket. */
  at: number;
  /** Offsets of the '{' or '[' of each container open at `at`, outermost first. */
  openAt: number[];
}

function invalidJson(message: string): RelayError {
  return new RelayError(400, "invalid_json", message);
}

/** Index just past the closing quote of the string starting at `start` (text[start] is '"'). */
function stringEnd(text: string, start: number): number {
  for (let from = start + 1; ; ) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    // Escaped when an odd number of backslashes stands right before it.
    let slashes = 0;
    while (quote - slashes - 1 > start && text.charCodeAt(quote - slashes - 1) === 0x5c) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function nextNonSpace(text: string, from: number): number {
  let i = from;
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++i));
  return i;
}

const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();
/** A \u escape of a surrogate: a high one (with the low one that may pair it), or a low one. */
const SURROGATE_ESCAPE = /\\u[dD][89abAB][0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?|\\u[dD][c-fC-F][0-9a-fA-F]{2}/g;

/**
 * Offset of the first lone surrogate, raw (a JS string can hold one, UTF-8 cannot) or written as a
 * \u escape, or -1. Native checks first: text without either costs two scans in C++.
 */
function firstLoneSurrogate(text: string): number {
  let first = -1;
  if (!isWellFormed(text)) {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0xd800 || c > 0xdfff) continue;
      const next = text.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
      else {
        first = i;
        break;
      }
    }
  }
  if (!text.includes("\\u")) return first;
  SURROGATE_ESCAPE.lastIndex = 0;
  for (let match = SURROGATE_ESCAPE.exec(text); match && (first < 0 || match.index < first); match = SURROGATE_ESCAPE.exec(text)) {
    // "\\ud800" is an escaped backslash and the letters ud800: an escape needs an even run of
    // backslashes before its own.
    let slashes = 0;
    while (match.index - slashes - 1 >= 0 && text.charCodeAt(match.index - slashes - 1) === 0x5c) slashes++;
    if (slashes % 2 === 1) {
      SURROGATE_ESCAPE.lastIndex = match.index + 1;
      continue;
    }
    const high = /[89abAB]/.test(match[0][3]!);
    if (!high || match[1] === undefined) return match.index;
  }
  return first;
}

/** An object's keys so far: a list while short (most objects have a handful; a Set each costs more), a Set past that. */
type Keys = string[] | Set<string>;
const KEY_LIST_MAX = 16;

/** False when `key` is in `keys` already; else adds it (a list grows into a Set). */
function addKey(keys: Keys, key: string, stack: (Keys | null)[]): boolean {
  if (keys instanceof Set) return keys.size !== keys.add(key).size;
  for (let i = 0; i < keys.length; i++) if (keys[i] === key) return false;
  keys.push(key);
  if (keys.length > KEY_LIST_MAX) stack[stack.length - 1] = new Set(keys);
  return true;
}

/**
 * Scans the text once, without building values: a stack of open containers, the keys seen per object.
 * Returns the first problem, or null. It checks what JSON.parse lets through; syntax is JSON.parse's.
 */
export function strictJsonProblem(text: string, maxDepth = MAX_JSON_DEPTH): StrictJsonProblem | null {
  const lone = firstLoneSurrogate(text);
  const keySets: (Keys | null)[] = [];
  const openAt: number[] = [];
  const problem = (message: string, at: number): StrictJsonProblem => ({ message, at, openAt: openAt.slice() });
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      if (keySets.length >= maxDepth) return problem(`the JSON is nested more than ${maxDepth} levels deep; send at most ${maxDepth} levels of objects and arrays`, i);
      keySets.push(c === 0x7b ? [] : null);
      openAt.push(i);
    } else if (c === 0x7d || c === 0x5d) {
      keySets.pop();
      openAt.pop();
    } else if (c === 0x22) {
      const end = stringEnd(text, i);
      const keys = keySets[keySets.length - 1];
      const isKey = !!keys && text.charCodeAt(nextNonSpace(text, end)) === 0x3a;
      if (lone >= i && lone < end) {
        return problem(`the JSON has a lone UTF-16 surrogate in ${isKey ? "an object key" : "a string"} (character ${lone}); text must be well-formed Unicode: write a character outside the BMP as its UTF-8 bytes or as a \\uD8xx\\uDCxx pair`, lone);
      }
      if (keys && isKey) {
        // Only a key with an escape needs decoding to be compared (JSON.parse checks the rest).
        let key = text.slice(i + 1, end - 1);
        if (key.includes("\\")) {
          try {
            key = JSON.parse(text.slice(i, end)) as string;
          } catch {
            return problem("the body is not valid JSON (a malformed object key)", i);
          }
        }
        if (!addKey(keys, key, keySets)) return problem(`the JSON has the key "${key.slice(0, 64)}" twice in one object; each key may appear once`, i);
      }
      i = end - 1;
    }
  }
  // Outside every string: not JSON at all, which JSON.parse says next.
  return lone >= 0 ? problem("the JSON has a lone UTF-16 surrogate outside a string", lone) : null;
}

/** Throws RelayError(400, invalid_json) saying what to fix. For text parsed elsewhere (a hook body). */
export function assertStrictJson(text: string, maxDepth = MAX_JSON_DEPTH): void {
  const problem = strictJsonProblem(text, maxDepth);
  if (problem) throw invalidJson(problem.message);
}

/** Parses JSON text strictly; throws RelayError(400, invalid_json) saying what to fix. */
export function parseStrictJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  assertStrictJson(text, maxDepth);
  try {
    return JSON.parse(text);
  } catch {
    throw invalidJson("the body is not valid JSON");
  }
}

/** Index just past the object or array whose bracket is at `start` (strings skipped, nothing checked). */
export function containerEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return i + 1;
    } else if (c === 0x22) i = stringEnd(text, i) - 1;
  }
  return text.length;
}
