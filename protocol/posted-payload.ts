// A posted envelope whose payload is written in its JCS form costs the relay neither canonicalize nor a
// JSON.parse of the payload: payload_hash is then sha256 of the payload's own bytes. The sender side
// (`envelopeText`, what `clawrelay send` posts) writes it so; the relay side (`splitCanonicalPayload`)
// finds the top-level "payload" member and checks its value with canonical-json.ts. Anything else (a
// payload with spaces or unsorted keys, Python's json.dumps, an escaped "payload" key) is not found
// here and goes today's way, with today's answers. Used by local-agent/relay/relay-api.ts,
// bench/relay-cpu.ts and worker/intake/request-body.ts; covered by test/protocol/canonical-json.test.ts.
import { canonicalJsonEnd } from "./canonical-json.ts";
import type { Envelope } from "./envelope.ts";
import { jcs } from "./payload-hash.ts";
import { MAX_JSON_DEPTH, containerEnd, jsonStringEnd } from "./strict-json.ts";

/** The envelope as JSON text with its payload in JCS form (the other members as JSON.stringify writes them). */
export function envelopeText(envelope: Envelope): string {
  const { payload, ...signed } = envelope;
  return `${JSON.stringify(signed).slice(0, -1)},"payload":${jcs(payload)}}`;
}

/** Where a canonical payload sits in an envelope's text, and the text with `{}` in its place. */
export interface CanonicalPayload {
  start: number;
  end: number;
  /** The envelope's text with the payload's value replaced by `{}`: small, parsed the ordinary way. */
  rest: string;
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipSpace(text: string, from: number): number {
  let i = from;
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Index past a scalar (number, true, false, null) at `from`: up to the next separator; the parse of `rest` judges it. */
function scalarEnd(text: string, from: number): number {
  let i = from;
  for (let c = text.charCodeAt(i); i < text.length && c !== 0x2c && c !== 0x7d && !isSpace(c); c = text.charCodeAt(++i));
  return i;
}

/**
 * The top-level "payload" member's value when the text is an object that has one, written as JCS
 * writes it; null otherwise (and when "payload" is there twice: the ordinary parse refuses that).
 * Everything outside the payload is left to the ordinary strict parse of `rest`.
 */
export function splitCanonicalPayload(text: string): CanonicalPayload | null {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return null;
  let found: { start: number; end: number } | null = null;
  for (i = skipSpace(text, i + 1); text.charCodeAt(i) !== 0x7d; ) {
    if (text.charCodeAt(i) !== 0x22) return null;
    const keyEnd = jsonStringEnd(text, i);
    const isPayload = text.startsWith('"payload"', i) && keyEnd === i + 9;
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) return null;
    i = skipSpace(text, i + 1);
    const c = text.charCodeAt(i);
    let end: number;
    if (isPayload) {
      if (found || c !== 0x7b) return null;
      // The payload is one level in: the envelope's own object is the first of MAX_JSON_DEPTH.
      end = canonicalJsonEnd(text, i, MAX_JSON_DEPTH - 1);
      if (end < 0) return null;
      found = { start: i, end };
    } else end = c === 0x7b || c === 0x5b ? containerEnd(text, i) : c === 0x22 ? jsonStringEnd(text, i) : scalarEnd(text, i);
    i = skipSpace(text, end);
    if (text.charCodeAt(i) === 0x2c) i = skipSpace(text, i + 1);
    else if (text.charCodeAt(i) !== 0x7d) return null;
  }
  return found && { ...found, rest: `${text.slice(0, found.start)}{}${text.slice(found.end)}` };
}

/**
 * Gives `envelope` (parsed from the rest, its payload `{}`) the payload from the text, parsed when first
 * read: stored as sent, an ordinary message's payload is never read on the relay, and 256 KiB of JSON
 * costs ~0.6 ms to parse. A receipt's payload is read (outbox filing), and is parsed then.
 */
export function withPayloadFrom(envelope: Envelope, text: string, split: CanonicalPayload): Envelope {
  let payload: Record<string, unknown> | null = null;
  return Object.defineProperty(envelope, "payload", {
    enumerable: true,
    get: () => (payload ??= JSON.parse(text.slice(split.start, split.end)) as Record<string, unknown>),
  });
}
