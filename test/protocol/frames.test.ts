// parseClientFrame is the only thing between a socket's text and the inbox's state: it must return
// exactly the documented shapes and null for everything else (the server then closes with 4400).
import { describe, expect, it } from "vitest";
import { CLOSE_CODES, PING_FRAME, parseClientFrame } from "../../protocol/index.ts";

describe("parseClientFrame accepts the documented shapes", () => {
  it("ping, including the PING_FRAME constant the server short-circuits on", () => {
    expect(parseClientFrame(PING_FRAME)).toEqual({ type: "ping" });
    expect(parseClientFrame('{ "type" : "ping" }')).toEqual({ type: "ping" });
  });

  it("ack with a non-negative integer id, dropping unknown keys", () => {
    expect(parseClientFrame('{"type":"ack","id":0}')).toEqual({ type: "ack", id: 0 });
    expect(parseClientFrame('{"type":"ack","id":42,"extra":true}')).toEqual({ type: "ack", id: 42 });
    expect(parseClientFrame(JSON.stringify({ type: "ack", id: Number.MAX_SAFE_INTEGER }))).toEqual({
      type: "ack",
      id: Number.MAX_SAFE_INTEGER,
    });
  });

  it("auth with key and signature, and optional after and window", () => {
    const auth = { type: "auth", key: "ed25519:AAAA", signature: "BBBB" };
    expect(parseClientFrame(JSON.stringify(auth))).toEqual(auth);
    expect(parseClientFrame(JSON.stringify({ ...auth, after: 0, window: 16 }))).toEqual({ ...auth, after: 0, window: 16 });
    expect(parseClientFrame(JSON.stringify({ ...auth, after: 7 }))).toEqual({ ...auth, after: 7 });
  });
});

describe("parseClientFrame rejects everything else", () => {
  const rejected: Array<[string, string]> = [
    ["empty text", ""],
    ["non-JSON", "ping"],
    ["truncated JSON", '{"type":"ack","id":1'],
    ["JSON null", "null"],
    ["a JSON string", '"ping"'],
    ["a JSON number", "1"],
    ["an array", '[{"type":"ping"}]'],
    ["no type", '{"id":1}'],
    ["unknown type", '{"type":"hello"}'],
    ["a server-only type", '{"type":"pong"}'],
    ["a type with other casing", '{"type":"PING"}'],
    ["ack without id", '{"type":"ack"}'],
    ["ack with negative id", '{"type":"ack","id":-1}'],
    ["ack with float id", '{"type":"ack","id":1.5}'],
    ["ack with string id", '{"type":"ack","id":"1"}'],
    ["ack with null id", '{"type":"ack","id":null}'],
    ["ack with id beyond 2^53", '{"type":"ack","id":9007199254740993}'],
    ["ack with exponent overflow id", '{"type":"ack","id":1e400}'],
    ["auth without key", '{"type":"auth","signature":"BBBB"}'],
    ["auth without signature", '{"type":"auth","key":"ed25519:AAAA"}'],
    ["auth with non-string key", '{"type":"auth","key":1,"signature":"BBBB"}'],
    ["auth with non-string signature", '{"type":"auth","key":"k","signature":["BBBB"]}'],
    ["auth with negative after", '{"type":"auth","key":"k","signature":"s","after":-1}'],
    ["auth with float after", '{"type":"auth","key":"k","signature":"s","after":0.5}'],
    ["auth with string window", '{"type":"auth","key":"k","signature":"s","window":"16"}'],
    ["auth with null after", '{"type":"auth","key":"k","signature":"s","after":null}'],
  ];
  for (const [name, text] of rejected) {
    it(name, () => {
      expect(parseClientFrame(text)).toBeNull();
    });
  }
});

describe("close codes", () => {
  it("are distinct application codes (4000-4999), never the reserved 1005/1006/1015", () => {
    const codes = Object.values(CLOSE_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code >= 4000 && code <= 4999, String(code)).toBe(true);
  });
});
