// JSON as the relay accepts it from outside: RFC 8259 text with no duplicate key in any object and no
// nesting deeper than MAX_JSON_DEPTH. JSON.parse keeps the last of two equal keys; a signature checked
// over one reading while another parser (the gateway, a hub) takes the first would be a signature over
// something else, so duplicates are refused, naming the key. Depth is capped so that no later
// recursive step (JCS, re-serialising) can exhaust the stack.
import { RelayError } from "./errors.ts";

export const MAX_JSON_DEPTH = 64;

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

/**
 * Scans the text once, without building values: a stack of open containers, a key set per object.
 * For text already parsed leniently (a webhook body); parseStrictJson runs it before JSON.parse.
 */
export function assertStrictJson(text: string, maxDepth = MAX_JSON_DEPTH): void {
  const stack: (Set<string> | null)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      if (stack.length >= maxDepth) throw invalidJson(`the JSON is nested more than ${maxDepth} levels deep`);
      stack.push(c === 0x7b ? new Set() : null);
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x22) {
      const end = stringEnd(text, i);
      const keys = stack[stack.length - 1];
      if (keys && text.charCodeAt(nextNonSpace(text, end)) === 0x3a) {
        // Only a key with an escape needs decoding to be compared (JSON.parse, below, checks the rest).
        let key = text.slice(i + 1, end - 1);
        if (key.includes("\\")) {
          try {
            key = JSON.parse(text.slice(i, end)) as string;
          } catch {
            throw invalidJson("the body is not valid JSON (a malformed object key)");
          }
        }
        if (keys.has(key)) throw invalidJson(`the JSON has the key "${key.slice(0, 64)}" twice in one object; each key may appear once`);
        keys.add(key);
      }
      i = end - 1;
    }
  }
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
