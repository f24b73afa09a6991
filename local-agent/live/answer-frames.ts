// A live request's answer as the `answer` frames that carry it up the socket (protocol/live.ts): the
// first with the status and the headers the relay may return (answerHeaders, then cut to the relay's
// count and size limits, since a frame over them would be refused whole), the body in pieces of
// LIVE.answerChunkBytes raw bytes, every frame but the last with `more`. A body goes as UTF-8 text only
// when it is one piece of text JSON cannot blow up (a control character takes 6 bytes escaped, so 256 KiB
// of them would pass the relay's 1 MiB client-frame limit and close the socket); else as base64. Pure;
// imported by live-requests.ts; covered by test/node/live-answer.test.ts.
import { LIVE, answerHeaders, cutText, toBase64 } from "../../protocol/index.ts";
import type { LiveAnswerFrame, LiveFailure } from "../../protocol/index.ts";

/** Control characters JSON escapes as \u00XX (tab, newline and carriage return take two bytes only). */
const ESCAPED_LONG = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The headers of an answer the relay takes: answerHeaders' choice, then as many as its limits allow, in order. */
export function sendableHeaders(headers: Iterable<[string, string]>): [string, string][] {
  const out: [string, string][] = [];
  let bytes = 0;
  for (const [name, value] of answerHeaders(headers)) {
    const size = name.length + value.length;
    if (out.length >= LIVE.answerHeadersMaxCount || bytes + size > LIVE.answerHeadersMaxBytes) break;
    out.push([name, value]);
    bytes += size;
  }
  return out;
}

/** The body as text, when it can travel as text in one frame; null: base64. */
function asText(body: Uint8Array, chunkBytes: number): string | null {
  if (body.byteLength > chunkBytes) return null;
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    // Not UTF-8 (an image, a gzip): it goes as base64, byte-exact.
    return null;
  }
  return ESCAPED_LONG.test(text) ? null : text;
}

export function answerFrames(rid: string, status: number, headers: Iterable<[string, string]>, body: Uint8Array, chunkBytes: number = LIVE.answerChunkBytes): LiveAnswerFrame[] {
  const first: LiveAnswerFrame = { type: "answer", rid, status, headers: sendableHeaders(headers) };
  if (body.byteLength === 0) return [first];
  const text = asText(body, chunkBytes);
  if (text !== null) return [{ ...first, body: text, encoding: "utf8" }];
  const frames: LiveAnswerFrame[] = [];
  for (let at = 0; at < body.byteLength; at += chunkBytes) {
    const piece: LiveAnswerFrame = { ...(at === 0 ? first : { type: "answer", rid }), body: toBase64(body.subarray(at, at + chunkBytes)), encoding: "base64" };
    if (at + chunkBytes < body.byteLength) piece.more = true;
    frames.push(piece);
  }
  return frames;
}

export function failedFrame(rid: string, failure: LiveFailure): LiveAnswerFrame {
  return { type: "answer", rid, failed: { ...failure, message: cutText(failure.message, LIVE.messageMax) } };
}
