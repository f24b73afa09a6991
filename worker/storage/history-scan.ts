// One bounded look through an inbox's messages in id order — the queue (queued, sent, dead) and every
// history day table (delivered, dead past the shelf) — for the owner's GET …/history: filters in SQL,
// no body read unless a search needs it. Every request looks at no more than HISTORY_SCAN_IDS ids of
// each table after its cursor (one id-only range read a table finds where that stops), then filters
// within that range: the rows read are bounded whatever the filters match. Used by inbox-store.ts;
// covered by test/worker/history.test.ts.
import { HISTORY_SCAN_IDS } from "../../protocol/index.ts";
import type { HistoryState } from "../../protocol/index.ts";
import { inFlightSql } from "./in-flight.ts";
import type { InFlight } from "./in-flight.ts";
import type { Exec } from "./history-store.ts";
import type { Row } from "./inbox-records.ts";

export interface HistoryQuery {
  /** Ids after this one. */
  after: number;
  limit: number;
  state: HistoryState;
  /** received_at bounds, inclusive (ms). */
  since: number | null;
  until: number | null;
  sender: string | null;
  lane: string | null;
  /** A substring of the body (as UTF-8 text), the headers kept with it (JSON) or the sub-path; case-insensitive for ASCII letters. */
  search: string | null;
  inFlight: InFlight | null;
}

export interface HistoryScan {
  /** Matching rows without bodies, in id order (at most limit + 1: one more says there is more). */
  rows: Row[];
  /** Ids looked at. */
  scanned: number;
  /** The highest id looked at; null when nothing after `after` is stored. */
  lastScanned: number | null;
  /** False when the bound stopped the look before the newest stored id: more may match after lastScanned. */
  complete: boolean;
}

const META_COLUMNS = `seq, kind, subpath, content_type, size, received_at, expires_at, sender, msg_id, env_type, state, attempts, reason, last_status, dead_at, replay_of, lane, restored`;

/** SQLite's lower() folds ASCII only, so the needle is folded the same way. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** ≤ 160 characters around the first match: the sub-path, the headers, else the body. */
function excerptSql(): string {
  const around = (expr: string) => `substr(${expr}, max(instr(lower(${expr}), ?) - 60, 1), 160)`;
  return `CASE WHEN instr(lower(coalesce(subpath, '')), ?) > 0 THEN ${around("subpath")}
    WHEN instr(lower(coalesce(headers, '')), ?) > 0 THEN ${around("headers")}
    ELSE ${around("CAST(body AS TEXT)")} END AS excerpt`;
}

/** The state condition for one table, or null when the state rules the table out. */
function stateCondition(table: string, state: HistoryState, inFlight: InFlight | null): [string, SqlStorageValue[]] | null {
  if (state === "all") return ["1", []];
  if (table !== "messages") return state === "delivered" || state === "dead" ? ["state = ?", [state]] : null;
  if (state === "delivered") return null;
  if (state === "dead") return ["state = 'dead'", []];
  const [held, params] = inFlightSql(inFlight);
  return [`state = 'queued' AND ${state === "sent" ? "" : "NOT "}${held}`, params];
}

export function scanHistory(exec: Exec, dayTables: readonly string[], q: HistoryQuery): HistoryScan {
  const tables = ["messages", ...dayTables];
  // Where the bound ends: the HISTORY_SCAN_IDS-th id after the cursor in the table where that comes first.
  const idsBy = new Map<string, number[]>();
  let end = Number.MAX_SAFE_INTEGER;
  for (const table of tables) {
    const ids = exec(`SELECT seq FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ${HISTORY_SCAN_IDS}`, q.after).map((row) => Number(row.seq));
    idsBy.set(table, ids);
    if (ids.length === HISTORY_SCAN_IDS) end = Math.min(end, ids[ids.length - 1]!);
  }
  let scanned = 0;
  let lastScanned: number | null = null;
  for (const ids of idsBy.values()) {
    for (const id of ids) {
      if (id > end) break;
      scanned += 1;
      lastScanned = Math.max(lastScanned ?? 0, id);
    }
  }
  const conds: string[] = [];
  const params: SqlStorageValue[] = [];
  if (q.since !== null) conds.push("received_at >= ?"), params.push(q.since);
  if (q.until !== null) conds.push("received_at <= ?"), params.push(q.until);
  if (q.sender !== null) conds.push("sender = ?"), params.push(q.sender);
  if (q.lane !== null) conds.push("lane = ?"), params.push(q.lane);
  const needle = q.search === null ? null : asciiLower(q.search);
  if (needle !== null) {
    conds.push(`(instr(lower(coalesce(subpath, '')), ?) > 0 OR instr(lower(coalesce(headers, '')), ?) > 0 OR instr(lower(CAST(body AS TEXT)), ?) > 0)`);
    params.push(needle, needle, needle);
  }
  const rows: Row[] = [];
  for (const table of tables) {
    const ids = idsBy.get(table)!;
    if (ids.length === 0 || ids[0]! > end) continue;
    const state = stateCondition(table, q.state, q.inFlight);
    if (!state) continue;
    // A live request: one answered at once (its live-log fields, day tables only), or one held as a message (its live_rid).
    const delivered = `${table === "messages" ? "NULL AS delivered_at, NULL AS live" : "delivered_at, live"}, coalesce(instr(request, '"live_rid"') > 0, 0) AS held_live`;
    const excerpt = needle === null ? [] : [needle, needle, needle, needle, needle];
    rows.push(
      ...exec(
        `SELECT ${META_COLUMNS}, ${delivered}${needle === null ? "" : `, ${excerptSql()}`} FROM ${table}
         WHERE seq > ? AND seq <= ? AND ${state[0]}${conds.map((c) => ` AND ${c}`).join("")} ORDER BY seq LIMIT ?`,
        ...excerpt, q.after, end, ...state[1], ...params, q.limit + 1,
      ),
    );
  }
  rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  return { rows: rows.slice(0, q.limit + 1), scanned, lastScanned, complete: end === Number.MAX_SAFE_INTEGER };
}
