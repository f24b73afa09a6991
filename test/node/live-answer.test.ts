// A live answer as `answer` frames (local-agent/live/answer-frames.ts): a small text body in one utf8
// frame; a binary body, or text JSON would blow up (control characters), as base64; a body over the chunk
// size in several frames, every one but the last with `more`, whose bodies put together are the body
// byte-exact; hop-by-hop headers and cookies left out, and no more headers than the relay takes; a
// failure's message cut to the protocol's limit.
import { describe, expect, it } from "vitest";
import { LIVE, fromBase64, parseAnswerFrame } from "../../protocol/index.ts";
import type { LiveAnswerFrame } from "../../protocol/index.ts";
import { answerFrames, failedFrame, sendableHeaders } from "../../local-agent/live/answer-frames.ts";

function joined(frames: LiveAnswerFrame[]): Buffer {
  return Buffer.concat(frames.map((f) => (f.body === undefined ? Buffer.alloc(0) : f.encoding === "base64" ? Buffer.from(fromBase64(f.body)!) : Buffer.from(f.body, "utf8"))));
}

describe("answer frames", () => {
  it("sends a small text answer in one utf8 frame with its status and headers, minus hop-by-hop ones and cookies", () => {
    const frames = answerFrames("rid_00000001", 201, [["Content-Type", "application/json"], ["Connection", "close, x-drop"], ["x-drop", "1"], ["set-cookie", "a=1"], ["x-kept", "yes"]], Buffer.from('{"ok":"é"}'));
    expect(frames).toEqual([{ type: "answer", rid: "rid_00000001", status: 201, headers: [["content-type", "application/json"], ["x-kept", "yes"]], body: '{"ok":"é"}', encoding: "utf8" }]);
    // The relay's own parser takes it as it is.
    expect(parseAnswerFrame(frames[0] as unknown as Record<string, unknown>)).toEqual(frames[0]);
  });

  it("sends no body field for an empty body", () => {
    expect(answerFrames("rid_00000001", 204, [], new Uint8Array())).toEqual([{ type: "answer", rid: "rid_00000001", status: 204, headers: [] }]);
  });

  it("sends bytes that are not UTF-8, and text full of control characters, as base64", () => {
    const binary = Buffer.from([0xff, 0x00, 0x89, 0x50]);
    expect(answerFrames("rid_00000001", 200, [], binary)).toEqual([{ type: "answer", rid: "rid_00000001", status: 200, headers: [], body: binary.toString("base64"), encoding: "base64" }]);
    const controls = Buffer.alloc(1000, 1);
    const [frame] = answerFrames("rid_00000001", 200, [], controls);
    expect(frame?.encoding).toBe("base64");
    // Escaped as \u0001 each, it would have been six times its size.
    expect(JSON.stringify(frame).length).toBeLessThan(controls.length * 2);
  });

  it("splits a body over the chunk size into frames with `more` on all but the last, whose bodies make the body byte-exact", () => {
    const body = Buffer.alloc(LIVE.answerChunkBytes * 2 + 10);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7) % 256;
    const frames = answerFrames("rid_00000001", 200, [["content-type", "application/octet-stream"]], body);
    expect(frames.map((f) => [f.status, f.more, f.encoding])).toEqual([[200, true, "base64"], [undefined, true, "base64"], [undefined, undefined, "base64"]]);
    expect(frames[0]?.headers).toEqual([["content-type", "application/octet-stream"]]);
    expect(joined(frames).equals(body)).toBe(true);
    // Every frame stays well under the relay's 1 MiB client-frame limit.
    for (const f of frames) expect(JSON.stringify(f).length).toBeLessThan(1024 * 1024);
  });

  it("splits a large text body too, and every piece decodes to the same bytes", () => {
    const body = Buffer.from("ä".repeat(LIVE.answerChunkBytes));
    const frames = answerFrames("rid_00000001", 200, [], body);
    expect(frames.length).toBe(2);
    expect(joined(frames).equals(body)).toBe(true);
  });

  it("keeps no more headers than the relay takes", () => {
    const many: [string, string][] = Array.from({ length: 100 }, (_, i) => [`x-h${i}`, "v"]);
    expect(sendableHeaders(many).length).toBe(LIVE.answerHeadersMaxCount);
    const big: [string, string][] = Array.from({ length: 10 }, (_, i) => [`x-b${i}`, "v".repeat(4000)]);
    expect(sendableHeaders(big).length).toBe(4);
  });

  it("cuts a failure's message to the protocol's limit", () => {
    const frame = failedFrame("rid_00000001", { code: "unreachable", message: "x".repeat(5000), not_sent: true });
    expect(frame.failed?.message.length).toBeLessThanOrEqual(LIVE.messageMax);
    expect(frame.failed).toMatchObject({ code: "unreachable", not_sent: true });
  });
});
