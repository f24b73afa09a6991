// What `clawrelay messages` prints of the inbox's history (relay/history.ts): the table of kept messages
// with each search match's excerpt, the JSON a script gets, a bulk replay's outcome, and `clawrelay
// status`'s history line. Everything a sender wrote (a sub-path, a source or lane name, an excerpt) is
// escaped for the terminal. Pure; imported by cli-messages.ts and cli-status.ts, covered by
// test/node/history-text.test.ts and history-cli.e2e.test.ts.
import type { BulkReplayAnswer, HistoryGap, HistoryItem, HistoryListing, HistorySummary } from "../relay/history.ts";
import { formatAge } from "../relay/messages.ts";
import { terminalCut, terminalSafe } from "./terminal-text.ts";

/** Where a message came in: its source, else its sub-path, else the envelope it is (all sender-chosen: escaped). */
function where(item: HistoryItem): string {
  if (item.live) return terminalSafe(`(live) ${item.subpath ?? ""}`);
  if (item.source) return terminalSafe(`source:${item.source}${item.subpath ? ` ${item.subpath}` : ""}`);
  return terminalSafe(item.subpath ?? `(envelope ${item.type ?? "?"})`);
}

const WHERE_WIDTH = 48;
/** An excerpt is at most 160 characters from the relay; the cut holds against one that sends more. */
const EXCERPT_WIDTH = 200;

/** A search match's excerpt on one line, quoted, every control character (a line break too) escaped. */
export function excerptLine(excerpt: string): string {
  return `match: “${terminalCut(excerpt, EXCERPT_WIDTH)}”`;
}

/** One line per message with a header; under a search result, its excerpt indented on the next line. */
export function historyTable(items: readonly HistoryItem[], nowMs: number): string {
  const header = ["ID", "STATE", "WHERE", "FROM", "SIZE", "RECEIVED", "DELIVERED"];
  const rows = items.map((m) => [
    String(m.id),
    m.state,
    terminalCut(where(m), WHERE_WIDTH),
    terminalSafe(m.sender ?? "—"),
    String(m.size),
    `${formatAge(nowMs - m.received_at)} ago`,
    m.delivered_at ? `${formatAge(nowMs - m.delivered_at)} ago` : "—",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(header), ...rows.flatMap((r, i) => [line(r), ...(items[i]!.excerpt !== undefined ? [`    ${excerptLine(items[i]!.excerpt!)}`] : [])])].join("\n");
}

function gapText(gap: HistoryGap): string {
  const why = gap.reason === "epoch" ? "the inbox was reset since that cursor" : "messages before it are past the retention window";
  return `(a gap: ${why}; listed from the oldest kept)`;
}

/** `messages` over history, as text: the table (or "no messages match"), then what was cut or skipped. */
export function historyListingText(listing: HistoryListing, nowMs: number): string {
  const lines = [listing.messages.length > 0 ? historyTable(listing.messages, nowMs) : "no messages match", ""];
  lines.push(`${listing.messages.length} message(s)${listing.messages.some((m) => m.excerpt !== undefined) ? "; each match's excerpt as the sender wrote it (escaped)" : ""}`);
  if (listing.gap) lines.push(gapText(listing.gap));
  if (listing.next_cursor !== null) lines.push("(stopped at --limit: more may match; raise --limit, or narrow with --since/--until)");
  return lines.join("\n");
}

/** `messages --json` over history: the items with their age, where to continue, and any gap. */
export function historyListingJson(listing: HistoryListing, nowMs: number): string {
  const messages = listing.messages.map((m) => ({ ...m, age_sec: Math.round((nowMs - m.received_at) / 1000) }));
  return JSON.stringify({ messages, next_cursor: listing.next_cursor, gap: listing.gap, scanned: listing.scanned }, null, 2);
}

const NEVER_LIVE = "live requests are never replayed";

/** A bulk replay's outcome: how many, which (original → new id), the live requests skipped. */
export function bulkReplayText(answer: BulkReplayAnswer, dryRun: boolean): string {
  const live = answer.skipped_live > 0 ? `${answer.skipped_live} live request(s) matched and ${dryRun ? "would be" : "were"} skipped (${NEVER_LIVE})` : `(${NEVER_LIVE})`;
  if (dryRun) {
    const would = answer.matched - answer.skipped_live;
    return [`dry run: ${would} message(s) would be replayed, in order; nothing was replayed`, live].join("\n");
  }
  const lines = [answer.replayed > 0 ? `replayed ${answer.replayed} message(s), in order, each once (original → new id):` : "no message matched: nothing was replayed"];
  lines.push(...answer.ids.map((pair) => `  ${pair.from} → ${pair.to}`));
  lines.push(live);
  if (answer.has_more) lines.push("the relay stopped before the end (the inbox's queue is full): once it drains, run it again with --since after the last original above's time (clawrelay messages show ID gives it)");
  return lines.join("\n");
}

/** A span of seconds as a person says it: 7 d, 12 h. */
const spanSec = (sec: number) => formatAge(sec * 1000, true);

/** `clawrelay status`'s history line: what is kept, for how long, and whether it gave way; [] from a relay without history. */
export function historyStatusLines(history: HistorySummary | undefined, nowMs: number): string[] {
  if (!history) return [];
  if (history.retention_sec === 0) return ["history   off (retention 0: a message is deleted once delivered)"];
  const oldest = history.oldest_at === null ? "" : `, the oldest ${formatAge(nowMs - history.oldest_at, true)} ago`;
  const line = `history   ${history.kept} kept for ${spanSec(history.retention_sec)}${oldest} — clawrelay messages --state all --since 1d`;
  const gave = history.gave_way;
  if (!gave || gave.count === 0) return [line];
  return [line, `          gave way: the ${gave.count} oldest kept message(s) were deleted to make room for new mail (last ${formatAge(nowMs - gave.last_at, true)} ago)`];
}
