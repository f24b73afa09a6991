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
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  return text.length;
}

function nextNonSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++;
  return i;
}

/**
 * Scans the text once, without building values: a stack of open containers, a key set per object.
 * For text already parsed leniently (a webhook body); parseStrictJson runs it before JSON.parse.
 */
export function assertStrictJson(text: string, maxDepth = MAX_JSON_DEPTH): void {
  const stack: (Set<string> | null)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "{" || c === "[") {
      if (stack.length >= maxDepth) throw invalidJson(`the JSON is nested more than ${maxDepth} levels deep`);
      stack.push(c === "{" ? new Set() : null);
    } else if (c === "}" || c === "]") {
      stack.pop();
    } else if (c === '"') {
      const end = stringEnd(text, i);
      const keys = stack[stack.length - 1];
      if (keys && text[nextNonSpace(text, end)] === ":") {
        let key: string;
        try {
          key = JSON.parse(text.slice(i, end)) as string;
        } catch {
          throw invalidJson("the body is not valid JSON (a malformed object key)");
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
