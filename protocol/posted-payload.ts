// A posted envelope whose payload is written in its JCS form costs the relay neither canonicalize nor a
// JSON.parse of the payload: payload_hash is then sha256 of the payload's own bytes. The sender side
// (`envelopeText`, what `clawrelay send` posts) writes it so; the relay side (`splitCanonicalPayload`)
// finds the top-level "payload" member in the body's bytes and checks its value with canonical-json.ts,
// so the payload is never decoded to text unless something reads it. Anything else (a
// payload with spaces or unsorted keys, Python's json.dumps, an escaped "payload" key) is not found
// here and goes today's way, with today's answers. Used by local-agent/relay/relay-api.ts,
// bench/relay-cpu.ts and worker/intake/request-body.ts; covered by test/protocol/canonical-json.test.ts.
import { canonicalJsonEnd } from "./canonical-json.ts";
import type { Envelope } from "./envelope.ts";
import { jcs } from "./payload-hash.ts";
import { decodeUtf8, decodeUtf8Text } from "./encoding.ts";
import { MAX_JSON_DEPTH } from "./strict-json.ts";

/** The envelope as JSON text with its payload in JCS form (the other members as JSON.stringify writes them). */
export function envelopeText(envelope: Envelope): string {
  const { payload, ...signed } = envelope;
  return `${JSON.stringify(signed).slice(0, -1)},"payload":${jcs(payload)}}`;
}

/** Where a canonical payload sits in an envelope's bytes, and the envelope's text with `{}` in its place. */
export interface CanonicalPayload {
  start: number;
  end: number;
  /** The envelope's text with the payload's value replaced by `{}`: small, parsed the ordinary way. */
  rest: string;
}

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipSpace(bytes: Uint8Array, from: number): number {
  let i = from;
  while (isSpace(bytes[i])) i++;
  return i;
}

/** Index past the string whose quote is at `at` (UTF-8 has no '"' or '\\' inside a longer sequence); bytes.length when unclosed. */
function stringEnd(bytes: Uint8Array, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    if (bytes[i] === 0x5c) i++;
    else if (bytes[i] === 0x22) return i + 1;
  }
  return bytes.length;
}

/** Index past the value at `at`, nothing checked (the ordinary parse of `rest` judges it): a container, a string, or a scalar up to the next separator. */
function valueEnd(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === 0x22) return stringEnd(bytes, at);
  if (first !== 0x7b && first !== 0x5b) {
    let i = at;
    while (i < bytes.length && bytes[i] !== 0x2c && bytes[i] !== 0x7d && !isSpace(bytes[i])) i++;
    return i;
  }
  let depth = 0;
  for (let i = at; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x22) i = stringEnd(bytes, i) - 1;
    else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
  }
  return bytes.length;
}

const PAYLOAD_KEY = [0x22, 0x70, 0x61, 0x79, 0x6c, 0x6f, 0x61, 0x64, 0x22]; // "payload"

/**
 * The top-level "payload" member's value when the body is an object that has one, written as JCS writes
 * it in UTF-8; null otherwise (and when "payload" is there twice: the ordinary parse refuses that).
 * Everything outside the payload is left to the ordinary strict parse of `rest`.
 */
export function splitCanonicalPayload(bytes: Uint8Array): CanonicalPayload | null {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== 0x7b) return null;
  let found: { start: number; end: number } | null = null;
  for (i = skipSpace(bytes, i + 1); bytes[i] !== 0x7d; ) {
    if (bytes[i] !== 0x22) return null;
    const keyEnd = stringEnd(bytes, i);
    const isPayload = keyEnd === i + PAYLOAD_KEY.length && PAYLOAD_KEY.every((b, k) => bytes[i + k] === b);
    i = skipSpace(bytes, keyEnd);
    if (bytes[i] !== 0x3a) return null;
    i = skipSpace(bytes, i + 1);
    let end: number;
    if (isPayload) {
      if (found || bytes[i] !== 0x7b) return null;
      // The payload is one level in: the envelope's own object is the first of MAX_JSON_DEPTH.
      end = canonicalJsonEnd(bytes, i, MAX_JSON_DEPTH - 1);
      if (end < 0) return null;
      found = { start: i, end };
    } else end = valueEnd(bytes, i);
    i = skipSpace(bytes, end);
    if (bytes[i] === 0x2c) i = skipSpace(bytes, i + 1);
    else if (bytes[i] !== 0x7d) return null;
  }
  if (!found) return null;
  // Cut at ASCII brackets, so each side is whole UTF-8 when the body is.
  const [before, after] = [decodeUtf8Text(bytes.subarray(0, found.start)), decodeUtf8Text(bytes.subarray(found.end))];
  return before === null || after === null ? null : { ...found, rest: `${before}{}${after}` };
}

/**
 * Gives `envelope` (parsed from the rest, its payload `{}`) the payload from the body, decoded and parsed
 * when first read: stored as sent, an ordinary message's payload is never read on the relay, and 256 KiB
 * of JSON costs ~0.4 ms to decode and as much to parse. A receipt's payload is read (outbox filing).
 */
export function withPayloadFrom(envelope: Envelope, bytes: Uint8Array, split: CanonicalPayload): Envelope {
  let payload: Record<string, unknown> | null = null;
  return Object.defineProperty(envelope, "payload", {
    enumerable: true,
    // canonicalJsonEnd found the span to be UTF-8, so it decodes.
    get: () => (payload ??= JSON.parse(decodeUtf8(bytes.subarray(split.start, split.end))!) as Record<string, unknown>),
  });
}
