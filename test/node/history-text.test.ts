// What `clawrelay messages` reads from history's flags and prints of history (local-agent/cli/cli-history.ts,
// history-text.ts): time flags as ISO 8601 or a duration back from now, the filter and its refusals, a
// search match's excerpt escaped on one line, a bulk replay's outcome, and `status`'s history line.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../local-agent/cli/cli-args.ts";
import { historyFilter, isBulkReplay, limitFlag, timeFlagMs, wantsHistory } from "../../local-agent/cli/cli-history.ts";
import { bulkReplayText, historyListingJson, historyListingText, historyStatusLines } from "../../local-agent/cli/history-text.ts";
import type { HistoryItem } from "../../local-agent/relay/history.ts";
import { historyQueryString } from "../../local-agent/relay/history.ts";

const NOW = Date.parse("2026-12-07T12:00:00Z");

function item(over: Partial<HistoryItem>): HistoryItem {
  return {
    id: 7, state: "delivered", kind: "hook", subpath: "agentgram_inbox/agent", content_type: "application/json", size: 42, received_at: NOW - 3_600_000, expires_at: NOW + 86_400_000,
    sender: null, msg_id: null, type: null, attempts: 0, reason: null, last_status: null, dead_at: null, replay_of: null, delivered_at: NOW - 3_590_000, ...over,
  };
}

describe("history's time flags", () => {
  it("read an ISO 8601 time, a date alone as its midnight UTC, and a duration back from now", () => {
    expect(timeFlagMs("since", "2026-12-07T05:00:00Z", NOW)).toBe(Date.parse("2026-12-07T05:00:00Z"));
    expect(timeFlagMs("since", "2026-12-07T05:00:00.250+02:00", NOW)).toBe(Date.parse("2026-12-07T03:00:00.250Z"));
    expect(timeFlagMs("since", "2026-12-06", NOW)).toBe(Date.parse("2026-12-06T00:00:00Z"));
    expect(timeFlagMs("since", "90m", NOW)).toBe(NOW - 90 * 60_000);
    expect(timeFlagMs("until", "2h", NOW)).toBe(NOW - 2 * 3_600_000);
    expect(timeFlagMs("since", "7d", NOW)).toBe(NOW - 7 * 86_400_000);
    expect(timeFlagMs("since", "30s", NOW)).toBe(NOW - 30_000);
  });

  it("refuse anything else, naming the flag and both forms", () => {
    for (const bad of ["yesterday", "90", "2h30m", "-2h", "2026-13-45T00:00:00Z", "12/07/2026", ""]) {
      expect(() => timeFlagMs("since", bad, NOW), bad).toThrow(UsageError);
    }
    expect(() => timeFlagMs("until", "soon", NOW)).toThrow('--until must be an ISO 8601 time such as 2026-12-07T05:00:00Z, or a duration back from now such as 90m, 2h or 7d (not "soon")');
  });
});

describe("history's filter", () => {
  it("is asked for by --state delivered|all or any history flag, not by today's states alone", () => {
    expect(wantsHistory({ state: "dead" })).toBe(false);
    expect(wantsHistory({})).toBe(false);
    expect(wantsHistory({ state: "delivered" })).toBe(true);
    expect(wantsHistory({ state: "all" })).toBe(true);
    expect(wantsHistory({ state: "dead", search: "x" })).toBe(true);
    expect(wantsHistory({ limit: "5" })).toBe(true);
    expect(isBulkReplay({ since: "1h" })).toBe(true);
    expect(isBulkReplay({ state: "dead" })).toBe(false);
  });

  it("carries every flag into the relay's query, times in ms", () => {
    const filter = historyFilter({ state: "delivered", since: "2h", until: "2026-12-07T11:00:00Z", source: "stripe", from: "ag_0123456789ab", conversation: "source:stripe", search: "Invoice Paid" }, NOW);
    expect(filter).toEqual({ state: "delivered", sinceMs: NOW - 7_200_000, untilMs: Date.parse("2026-12-07T11:00:00Z"), source: "stripe", from: "ag_0123456789ab", conversation: "source:stripe", search: "Invoice Paid" });
    const query = new URLSearchParams(historyQueryString({ ...filter, limit: 200, cursor: "c:1" }).slice(1));
    expect(Object.fromEntries(query)).toEqual({ cursor: "c:1", limit: "200", state: "delivered", since: String(NOW - 7_200_000), until: String(Date.parse("2026-12-07T11:00:00Z")), source: "stripe", from: "ag_0123456789ab", conversation: "source:stripe", search: "Invoice Paid" });
    expect(historyQueryString({})).toBe("");
  });

  it("refuses an --until before --since, an empty or too long --search, a bad state or limit", () => {
    expect(() => historyFilter({ since: "1h", until: "2h" }, NOW)).toThrow("--until is before --since");
    expect(() => historyFilter({ search: "" }, NOW)).toThrow("--search takes 1 to 200 characters");
    expect(() => historyFilter({ search: "x".repeat(201) }, NOW)).toThrow("--search takes 1 to 200 characters");
    expect(() => historyFilter({ state: "kept" }, NOW)).toThrow('--state must be one of queued, sent, dead, delivered, all, not "kept"');
    expect(limitFlag({})).toBe(200);
    expect(limitFlag({ limit: "10000" })).toBe(10_000);
    for (const bad of ["0", "10001", "1.5", "x"]) expect(() => limitFlag({ limit: bad }), bad).toThrow("--limit must be a whole number from 1 to 10000");
  });
});

describe("history's text", () => {
  it("shows a search match's excerpt on its own line, quoted, its line breaks and terminal escapes shown as escapes", () => {
    const text = historyListingText({ messages: [item({ excerpt: "the invoice\n\u001b[2Jwas paid" })], next_cursor: null, gap: null, scanned: 1 }, NOW);
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/^ID\s+STATE\s+WHERE\s+FROM\s+SIZE\s+RECEIVED\s+DELIVERED$/);
    expect(lines[1]).toMatch(/^7\s+delivered\s+agentgram_inbox\/agent\s+—\s+42\s+60m ago\s+60m ago$/);
    expect(lines[2]).toBe("    match: “the invoice\\x0a\\x1b[2Jwas paid”");
    expect(text).not.toContain("\u001b");
    expect(text).toContain("1 message(s); each match's excerpt as the sender wrote it (escaped)");
  });

  it("names a source, a live request, a gap and a limit reached", () => {
    const text = historyListingText({ messages: [item({ id: 1, source: "stripe", subpath: null }), item({ id: 2, live: true, subpath: "api/x", state: "delivered" })], next_cursor: "c:9", gap: { reason: "retention", oldest_kept: "c:1" }, scanned: 30 }, NOW);
    expect(text).toContain("source:stripe");
    expect(text).toContain("(live) api/x");
    expect(text).toContain("(a gap: messages before it are past the retention window; listed from the oldest kept)");
    expect(text).toContain("(stopped at --limit: more may match; raise --limit, or narrow with --since/--until)");
    expect(historyListingText({ messages: [], next_cursor: null, gap: null, scanned: 0 }, NOW)).toContain("no messages match");
  });

  it("gives a script the items with their excerpt and age, the cursor and the gap", () => {
    const parsed = JSON.parse(historyListingJson({ messages: [item({ excerpt: "paid" })], next_cursor: "c:7", gap: null, scanned: 3 }, NOW)) as { messages: (HistoryItem & { age_sec: number })[]; next_cursor: string };
    expect(parsed.messages[0]).toMatchObject({ id: 7, excerpt: "paid", age_sec: 3600 });
    expect(parsed.next_cursor).toBe("c:7");
  });

  it("says a bulk replay's pairs in order and that live requests are never replayed; a dry run only counts", () => {
    const text = bulkReplayText({ matched: 3, replayed: 2, skipped_live: 1, ids: [{ from: 4, to: 20 }, { from: 9, to: 21 }], has_more: false }, false);
    expect(text.split("\n")).toEqual(["replayed 2 message(s), in order, each once (original → new id):", "  4 → 20", "  9 → 21", "1 live request(s) matched and were skipped (live requests are never replayed)"]);
    expect(bulkReplayText({ matched: 3, replayed: 0, skipped_live: 1, ids: [], has_more: false }, true)).toBe(
      "dry run: 2 message(s) would be replayed, in order; nothing was replayed\n1 live request(s) matched and would be skipped (live requests are never replayed)",
    );
    expect(bulkReplayText({ matched: 0, replayed: 0, skipped_live: 0, ids: [], has_more: false }, false)).toBe("no message matched: nothing was replayed\n(live requests are never replayed)");
  });

  it("status says what is kept and for how long, and when history gave way to new mail; nothing from a relay without history", () => {
    expect(historyStatusLines(undefined, NOW)).toEqual([]);
    expect(historyStatusLines({ kept: 120, oldest_at: NOW - 2 * 86_400_000, retention_sec: 604_800 }, NOW)).toEqual(["history   120 kept for 7 d, the oldest 2 d ago — clawrelay messages --state all --since 1d"]);
    const gave = historyStatusLines({ kept: 5000, oldest_at: NOW - 3_600_000, retention_sec: 604_800, gave_way: { count: 15, last_at: NOW - 180_000 } }, NOW);
    expect(gave[1]).toBe("          gave way: the 15 oldest kept message(s) were deleted to make room for new mail (last 3 min ago)");
    expect(historyStatusLines({ kept: 0, oldest_at: null, retention_sec: 0 }, NOW)).toEqual(["history   off (retention 0: a message is deleted once delivered)"]);
  });
});
