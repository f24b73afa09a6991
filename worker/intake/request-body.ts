// Reads a request body with a byte cap, so an oversized webhook is refused before it is buffered whole,
// and a JSON body strictly; a posted envelope whose payload is in JCS form takes the short way
// (protocol/posted-payload.ts). Used by inbox-routes.ts and the other routes that take JSON; covered by
// test/worker/limits.test.ts, test/worker/envelopes.test.ts and test/worker/canonical-payload.test.ts.
import { RelayError, decodeUtf8Text, parseEnvelope, parseStrictJson, readStreamCapped, sha256Hex, splitCanonicalPayload, withPayloadFrom } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";

/** What a 413 tells a sender of a message: the inbox's own limit, and why it is where it is. */
export const MESSAGE_LIMIT_ADVICE =
  "send less. (The default is the OpenClaw gateway's own 256 KiB hook limit; the inbox's owner can change limits.max_body_bytes in a claim, but the gateway refuses bigger hook bodies)";

function tooLarge(limit: number, what: string, advice: string): RelayError {
  return new RelayError(413, "payload_too_large", `the body is larger than ${what} of ${limit} bytes; ${advice}`);
}

/**
 * Reads at most `limit` bytes; `what` names the limit ("this inbox's limit", "a card's limit") and
 * `advice` says what the sender can do, since only some limits are the inbox owner's to change.
 */
export async function readBodyCapped(request: Request, limit: number, what = "this inbox's limit", advice = MESSAGE_LIMIT_ADVICE): Promise<Uint8Array> {
  try {
    return await readBody(request, limit, what, advice);
  } catch (err) {
    if (err instanceof RelayError) throw err;
    // The runtime's body stream failed: a sender whose framing it could not follow (a chunked body cut
    // short, a length that does not match). The sender's fault, answered as such, never a 500.
    throw new RelayError(400, "body_unreadable", "the request's body could not be read as sent (its chunked framing or Content-Length does not match what arrived); nothing was stored: send it again with one correct framing");
  }
}

async function readBody(request: Request, limit: number, what: string, advice: string): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit, what, advice);
  if (!request.body) return new Uint8Array(0);
  // A declared length within the limit is what the runtime delivers (it refuses a body that differs):
  // read it whole. Without one (chunked), count while reading.
  if (Number.isFinite(declared) && request.headers.get("transfer-encoding") === null) return new Uint8Array(await request.arrayBuffer());
  const bytes = await readStreamCapped(request.body, limit);
  if (bytes === null) throw tooLarge(limit, what, advice);
  return bytes;
}

/** A JSON body as the relay accepts it: UTF-8, no duplicate keys, bounded depth (strict-json.ts). */
export function parseJsonBody(bytes: Uint8Array): unknown {
  const text = decodeUtf8Text(bytes);
  if (text === null) throw new RelayError(400, "invalid_json", "the body is not UTF-8 text");
  return parseStrictJson(text);
}

/** A posted envelope: the body's JSON (its payload `{}` when taken the short way), the envelope, and the payload's hash when known. */
export interface PostedEnvelope {
  json: unknown;
  envelope: Envelope;
  payloadHash: string | null;
}

/**
 * The body of POST …/envelopes, as parseJsonBody and parseEnvelope read it, with the same answers. A
 * payload in JCS form is checked by one scan of its bytes and hashed from them: no canonicalize, and no
 * decoding or JSON.parse until something reads it (docs/benchmarks.md, "The CPU a message costs").
 */
export async function readPostedEnvelope(bytes: Uint8Array): Promise<PostedEnvelope> {
  const split = splitCanonicalPayload(bytes);
  let json: unknown = null;
  if (split) {
    try {
      json = parseStrictJson(split.rest);
    } catch (err) {
      // The rest is not strict JSON: the whole body is parsed below, so the refusal names the body's own offsets.
      if (!(err instanceof RelayError)) throw err;
    }
  }
  if (!split || json === null) {
    const whole = parseJsonBody(bytes);
    return { json: whole, envelope: parseEnvelope(whole), payloadHash: null };
  }
  const envelope = withPayloadFrom(parseEnvelope(json), bytes, split);
  return { json, envelope, payloadHash: `sha256:${await sha256Hex(bytes.subarray(split.start, split.end))}` };
}
