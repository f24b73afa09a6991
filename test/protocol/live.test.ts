// The live requests' wire contract (protocol/live.ts): an answer's headers without hop-by-hop ones, those
// Connection names, cookies and values the relay cannot send; answer frames parsed (status, headers within
// the limits, body with its encoding, `more`, a failure with a known code and its message cut); request
// frames parsed (rid, target, method, tail, headers, body, deadline), anything else refused.
import { describe, expect, it } from "vitest";
import { LIVE, answerHeaders, parseAnswerFrame, parseRequestFrame } from "../../protocol/index.ts";

const RID = "rid_00000001";

describe("an answer's headers", () => {
  it("drops hop-by-hop headers, those Connection names, cookies and values outside visible ASCII", () => {
    expect(answerHeaders([["Content-Type", "text/plain"], ["Connection", "keep-alive, X-Private"], ["x-private", "1"], ["Transfer-Encoding", "chunked"], ["Set-Cookie", "a=1"], ["x-bad", "a\nb"], ["X-Kept", "yes"]])).toEqual([["content-type", "text/plain"], ["x-kept", "yes"]]);
  });
});

describe("answer frames", () => {
  it("parses a first frame with status, headers and a body, and a later one with `more`", () => {
    expect(parseAnswerFrame({ type: "answer", rid: RID, status: 201, headers: [["a", "b"]], body: "hi", encoding: "utf8" })).toEqual({ type: "answer", rid: RID, status: 201, headers: [["a", "b"]], body: "hi", encoding: "utf8" });
    expect(parseAnswerFrame({ type: "answer", rid: RID, body: "aGk=", encoding: "base64", more: true })).toEqual({ type: "answer", rid: RID, body: "aGk=", encoding: "base64", more: true });
  });

  it("parses a failure with a known code and cuts its message", () => {
    const parsed = parseAnswerFrame({ type: "answer", rid: RID, failed: { code: "unreachable", message: "x".repeat(5000), not_sent: true } });
    expect(parsed?.failed).toMatchObject({ code: "unreachable", not_sent: true });
    expect(parsed?.failed?.message.length).toBeLessThanOrEqual(LIVE.messageMax);
    expect(parseAnswerFrame({ type: "answer", rid: RID, failed: { code: "boom", message: "x", not_sent: true } })).toBeNull();
  });

  it("refuses a bad rid, status, header list, encoding or `more`", () => {
    expect(parseAnswerFrame({ type: "answer", rid: "short" })).toBeNull();
    expect(parseAnswerFrame({ type: "answer", rid: RID, status: 99 })).toBeNull();
    expect(parseAnswerFrame({ type: "answer", rid: RID, status: 200.5 })).toBeNull();
    expect(parseAnswerFrame({ type: "answer", rid: RID, headers: Array.from({ length: LIVE.answerHeadersMaxCount + 1 }, () => ["a", "b"]) })).toBeNull();
    expect(parseAnswerFrame({ type: "answer", rid: RID, body: "x", encoding: "hex" })).toBeNull();
    expect(parseAnswerFrame({ type: "answer", rid: RID, more: false })).toBeNull();
  });
});

describe("request frames", () => {
  const request = { type: "request", rid: RID, to: "app", method: "GET", tail: "/cb?code=1", headers: [["accept", "*/*"]], body: "", encoding: "utf8", deadline_ms: 10_000 };

  it("parses one the relay sends", () => {
    expect(parseRequestFrame(request)).toEqual(request);
  });

  it("refuses an unknown target or method, a bad tail, body, headers or deadline", () => {
    for (const bad of [{ to: "elsewhere" }, { method: "TRACE" }, { tail: 1 }, { encoding: "hex" }, { headers: [["a"]] }, { deadline_ms: 0 }, { deadline_ms: 1.5 }, { rid: "x" }]) {
      expect(parseRequestFrame({ ...request, ...bad })).toBeNull();
    }
  });
});
