// Live requests' wire shapes (protocol/live.ts): what an answer frame may be, what a request frame must
// hold, and which of an app's headers reach the sender.
import { describe, expect, it } from "vitest";
import { LIVE, answerHeaders, cutText, parseAnswerFrame, parseClientFrame, parseRequestFrame } from "../../protocol/index.ts";

describe("parseAnswerFrame", () => {
  it("reads a first frame with status, headers and a body part, and a last one without more", () => {
    const first = parseClientFrame(JSON.stringify({ type: "answer", rid: "lr_0123456789", status: 200, headers: [["content-type", "text/plain"]], body: "hel", encoding: "utf8", more: true }));
    expect(first).toEqual({ type: "answer", rid: "lr_0123456789", status: 200, headers: [["content-type", "text/plain"]], body: "hel", encoding: "utf8", more: true });
    expect(parseClientFrame(JSON.stringify({ type: "answer", rid: "lr_0123456789", body: "bG8=", encoding: "base64" }))).toEqual({ type: "answer", rid: "lr_0123456789", body: "bG8=", encoding: "base64" });
  });

  it("reads a failure and nothing else of that frame, its message cut", () => {
    const frame = parseAnswerFrame({ type: "answer", rid: "lr_0123456789", status: 200, failed: { code: "unreachable", message: "x".repeat(5000), not_sent: true } });
    expect(frame).toEqual({ type: "answer", rid: "lr_0123456789", failed: { code: "unreachable", message: "x".repeat(LIVE.messageMax), not_sent: true } });
  });

  it("refuses what is not an answer: a bad rid, status, header list, encoding, more, or failure code", () => {
    const base = { type: "answer", rid: "lr_0123456789" };
    for (const bad of [
      { ...base, rid: "short" },
      { ...base, rid: "lr_0123456789/../x" },
      { ...base, status: 99 },
      { ...base, status: 600 },
      { ...base, status: "200" },
      { ...base, headers: [["a"]] },
      { ...base, headers: Array.from({ length: LIVE.answerHeadersMaxCount + 1 }, () => ["a", "b"]) },
      { ...base, body: "x", encoding: "hex" },
      { ...base, body: 1, encoding: "utf8" },
      { ...base, more: false },
      { ...base, failed: { code: "boom", message: "m", not_sent: true } },
      { ...base, failed: { code: "unreachable", message: "m" } },
    ]) {
      expect(parseAnswerFrame(bad), JSON.stringify(bad).slice(0, 80)).toBeNull();
    }
  });
});

describe("parseRequestFrame", () => {
  const good = { type: "request", rid: "lr_0123456789", to: "app", method: "GET", tail: "/cb?code=1", headers: [["accept", "*/*"]], body: "", encoding: "utf8", deadline_ms: 10_000, source: "cb", target: "http://127.0.0.1:3000", allow_public: false };

  it("reads a request to an app, to the gateway and to the A2A channel", () => {
    expect(parseRequestFrame(good)).toEqual(good);
    expect(parseRequestFrame({ ...good, to: "gateway", method: "POST" })?.to).toBe("gateway");
    expect(parseRequestFrame({ ...good, to: "a2a", tail: "/a2a/v1", method: "POST" })?.tail).toBe("/a2a/v1");
  });

  it("refuses an unknown target or method, a missing body, and a deadline that is not a positive whole number", () => {
    for (const bad of [{ ...good, to: "shell" }, { ...good, method: "CONNECT" }, { ...good, body: undefined }, { ...good, deadline_ms: 0 }, { ...good, deadline_ms: 1.5 }, { ...good, headers: "accept: */*" }]) {
      expect(parseRequestFrame(bad as Record<string, unknown>)).toBeNull();
    }
  });
});

describe("answerHeaders", () => {
  it("drops hop-by-hop headers, those Connection names, cookies and values a client could not be sent", () => {
    const kept = answerHeaders([
      ["Content-Type", "application/json"],
      ["Connection", "keep-alive, X-Secret-Hop"],
      ["X-Secret-Hop", "1"],
      ["Transfer-Encoding", "chunked"],
      ["Content-Length", "12"],
      ["Set-Cookie", "session=1; Path=/"],
      ["Strict-Transport-Security", "max-age=1"],
      ["X-Bad", "a\u0001b"],
      ["Location", "/next"],
    ]);
    expect(kept).toEqual([["content-type", "application/json"], ["location", "/next"]]);
  });
});

describe("cutText", () => {
  it("never ends in half a surrogate pair", () => {
    expect(cutText("ab\u{1F600}", 3)).toBe("ab");
    expect(cutText("abc", 5)).toBe("abc");
  });
});
