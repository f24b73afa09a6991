// protocol/hub-page.ts: a page of hub records read strictly, one record at a time — a record with a
// duplicate key, a lone surrogate or too deep is set aside (REFUSED, with the reason and its text as
// sent) in its place, without failing the page; a record without a hub_msg_id is left out (it cannot be
// confirmed); a page whose own frame is bad is a HubCallError (hub_bad_answer).
import { describe, expect, it } from "vitest";
import { HubCallError, REFUSED, readPage } from "../../protocol/index.ts";

describe("readPage", () => {
  it("keeps the hub's order and has_more; sets aside a record with a duplicate key, a lone surrogate or too deep", () => {
    const deep = '{"a":'.repeat(80) + "1" + "}".repeat(80);
    const page = `{"messages":[{"hub_msg_id":"h1","envelope":{}},{"hub_msg_id":"h2","envelope":{"v":1,"v":2}},{"hub_msg_id":"h3","envelope":${deep}},{"envelope":{"x":1,"x":2}},{"hub_msg_id":"h4","text":"lone \\ud800"},{"hub_msg_id":"h5"}],"has_more":true}`;
    const { messages, hasMore } = readPage(page, "GET /hub/inbox", 50);
    expect(hasMore).toBe(true);
    expect(messages.map((m) => m.hub_msg_id)).toEqual(["h1", "h2", "h3", "h4", "h5"]);
    expect(messages.map((m) => m[REFUSED]?.reason.slice(0, 40) ?? null)).toEqual([
      null,
      'the JSON has the key "v" twice in one ob',
      "the JSON is nested more than 67 levels d",
      "the JSON has a lone UTF-16 surrogate in ",
      null,
    ]);
    expect(messages[1]![REFUSED]!.text).toBe('{"hub_msg_id":"h2","envelope":{"v":1,"v":2}}');
    expect(messages[1]!.envelope).toBeNull();
    expect(messages[0]).toEqual({ hub_msg_id: "h1", envelope: {} });
  });

  it("an empty page, or one without has_more, is no more to come", () => {
    expect(readPage('{"messages":[],"count":0}', "GET /hub/history", 100)).toEqual({ messages: [], hasMore: false, cut: 0 });
    expect(readPage('{"count":0}', "GET /hub/history", 100)).toEqual({ messages: [], hasMore: false, cut: 0 });
  });

  it("a bad page frame is a hub_bad_answer naming the call", () => {
    for (const frame of ['{"messages":[],"messages":[]}', '{"messages":["\\ud800"]}', "[1]", "not json", '{"messages":[{"hub_msg_id":"h1"}],"extra":"\\udc00"}']) {
      let error: unknown = null;
      try {
        readPage(frame, "GET /hub/history?limit=100", 100);
      } catch (err) {
        error = err;
      }
      expect(error, frame).toBeInstanceOf(HubCallError);
      expect(error).toMatchObject({ code: "hub_bad_answer", status: 502, hubStatus: 502 });
      expect((error as Error).message.startsWith("GET /hub/history?limit=100: the hub answered")).toBe(true);
    }
  });

  it("cuts a page holding more records than were asked for to that number, and says more follow", () => {
    const records = Array.from({ length: 10_000 }, (_, i) => ({ hub_msg_id: `h${i}`, envelope: {} }));
    const page = readPage(JSON.stringify({ messages: records, has_more: false }), "GET /hub/inbox", 50);
    expect(page.messages.map((m) => m.hub_msg_id)).toEqual(records.slice(0, 50).map((r) => r.hub_msg_id));
    expect(page).toMatchObject({ hasMore: true, cut: 9_950 });
  });
});
