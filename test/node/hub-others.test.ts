// What `hub status` and `doctor` say about other clients of the agent (local-agent/hub/hub-others.ts),
// on the hub's recorded history (test/fixtures/hub/current/history.json, Bob's newest records: a DM from
// a dashboard human, owner chat, room messages, and one Bob sent): which records another client likely
// took, kept conservative — and the lines that name the fix.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { HubClient } from "../../protocol/index.ts";
import { likelyOtherPulls, otherClientLines, readHistory } from "../../local-agent/hub/hub-others.ts";
import type { HistoryRecord } from "../../local-agent/hub/hub-others.ts";

const BOB = "ag_652eca9ef86c";
const recorded = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/hub/current/history.json"), "utf8")) as { exchanges: { response: { body: Record<string, unknown> } }[] };
const newestFirst = recorded.exchanges[0]!.response.body;
const asked: string[] = [];
const client: HubClient = {
  url: "http://hub",
  call: async (method, path) => (asked.push(`${method} ${path}`), { status: 200, headers: {}, text: JSON.stringify(newestFirst), body: newestFirst, problem: null }),
};
const AT = Date.parse("2026-12-02T01:01:42Z");

describe("likelyOtherPulls", () => {
  it("counts records addressed to the agent (to it, or a room's from someone else) that were taken, not by the relay", async () => {
    const records = await readHistory(client);
    expect(asked).toEqual(["GET /hub/history?limit=100"]);
    expect(records.map((r) => [r.hub_msg_id.slice(0, 6), r.to === BOB || r.room_id !== null, r.state])).toEqual([
      ["h_99d9", true, "queued"],
      ["h_68a1", true, "delivered"],
      ["h_1479", true, "delivered"],
      ["h_9f2c", true, "delivered"],
      ["h_1fdd", true, "delivered"],
    ]);
    const others = likelyOtherPulls(records, { agentId: BOB, recentPulled: ["h_9f2c94a2aa036988f0bb00072262a804"], registeredAt: AT - 60_000, now: AT });
    // h_99d9 is Bob's own send (and still queued); h_9f2c the relay pulled itself.
    expect(others).toEqual({
      count: 3,
      since: AT - 60_000,
      newest_at: Date.parse("2026-12-02T01:01:40.843Z"),
      hub_msg_ids: ["h_68a1768c96aa7ece3e059cec091f1e30", "h_1479665edbe62c4509c59292e88006d8", "h_1fdda452e80aa7e68b9938ebd17fc34a"],
    });
  });

  it("nothing before the link was made or older than a day; nothing when the relay pulled it all", async () => {
    const records = await readHistory(client);
    expect(likelyOtherPulls(records, { agentId: BOB, recentPulled: [], registeredAt: AT, now: AT })).toBeNull();
    expect(likelyOtherPulls(records, { agentId: BOB, recentPulled: [], registeredAt: null, now: AT + 2 * 86_400_000 })).toBeNull();
    const all = records.map((r) => r.hub_msg_id);
    expect(likelyOtherPulls(records, { agentId: BOB, recentPulled: all, registeredAt: null, now: AT })).toBeNull();
  });

  it("a young lease may be the relay's own pull in progress; an old one is counted", () => {
    const lease = (ageMs: number): HistoryRecord => ({ hub_msg_id: "h_lease", to: BOB, from: "ag_862fd0848fee", room_id: null, state: "processing", created_at: AT - ageMs });
    expect(likelyOtherPulls([lease(60_000)], { agentId: BOB, recentPulled: [], registeredAt: null, now: AT })).toBeNull();
    expect(likelyOtherPulls([lease(10 * 60_000)], { agentId: BOB, recentPulled: [], registeredAt: null, now: AT })?.count).toBe(1);
  });

  it("when the relay's memory of its pulls is full, only what came after the oldest it remembers is judged — or nothing, if none is in view", () => {
    const record = (n: number, minutesAgo: number): HistoryRecord => ({ hub_msg_id: `h_${n}`, to: BOB, from: "ag_862fd0848fee", room_id: null, state: "delivered", created_at: AT - minutesAgo * 60_000 });
    const remembered = Array.from({ length: 50 }, (_, i) => `h_r${i}`);
    const records = [record(1, 1), record(2, 20), { ...record(0, 10), hub_msg_id: "h_r7" }];
    expect(likelyOtherPulls(records, { agentId: BOB, recentPulled: remembered, registeredAt: null, now: AT })).toMatchObject({ count: 1, hub_msg_ids: ["h_1"] });
    expect(likelyOtherPulls([record(1, 1), record(2, 20)], { agentId: BOB, recentPulled: remembered, registeredAt: null, now: AT })).toBeNull();
  });
});

describe("otherClientLines", () => {
  it("a taken token: how often and when, and the fix — keep the agent running on the linked file, or link one", () => {
    const lost = { token_lost: { count: 2, last_at: AT } };
    const linked = otherClientLines(lost, null, "/home/u/.botcord/credentials/ag_x.json");
    expect(linked[0]).toBe("another client took the hub token: the hub refused the relay's token 2 time(s) before it expired, last at 2026-12-02T01:01:42.000Z — a refresh by any client of this agent (the BotCord CLI, a skill script) ends every older token.");
    expect(linked[1]).toContain("keep the agent running (clawrelay start): it keeps /home/u/.botcord/credentials/ag_x.json on the relay's token");
    expect(otherClientLines(lost, null, null)[1]).toContain("clawrelay init --import-botcord --force");
    expect(otherClientLines({ token_lost: null }, null, null)).toEqual([]);
  });

  it("another puller: worded as likely, with examples", () => {
    const lines = otherClientLines(null, { count: 3, since: AT - 60_000, newest_at: AT, hub_msg_ids: ["h_a", "h_b", "h_c", "h_d"] }, null);
    expect(lines[0]).toBe("another client likely pulls this inbox: 3 message(s) addressed to this agent since 2026-12-02T01:00:42.000Z were taken at the hub but not by the relay (newest 2026-12-02T01:01:42.000Z; e.g. h_a, h_b, h_c).");
    expect(lines[1]).toContain("stop the other poller of this agent");
  });
});
