// History: the messages an inbox keeps after delivery, one SQLite table per UTC day of acknowledgement
// (h_<yyyymmdd>, listed in history_days: storage/schema.ts version 10; a shorter period only where a test
// sets HISTORY_PERIOD_MS: history-period.ts), apart from the queue so the
// delivery path and the alarm's queue statements never read them. A day is let go of whole by DROP
// TABLE, which the storage row counter counts as no rows written (docs/limits.md says what it would
// cost if that changed), when its retention ends or, oldest first, when the closed days outgrow the
// history's budget. Dedup records stay in their own table, so dropping history never shortens a dedup
// window. InboxStore (inbox-store.ts) moves rows in; the owner's history routes (worker/history/) read.
// Covered by test/worker/history.test.ts and test/worker/history-days.test.ts.
import type { LiveLogEntry } from "../../protocol/index.ts";
import type { StoredMessage } from "./stored-message.ts";
import { historyPeriod, periodTableName } from "./history-period.ts";
import type { HistoryPeriod } from "./history-period.ts";
import type { Exec } from "./utc-day.ts";

export type { Exec } from "./utc-day.ts";
export { DAY_MS, dayOf, dayStartMs } from "./utc-day.ts";

/** A kept message: a queue row's columns, acknowledged (delivered) or dead past its shelf. */
export interface KeptMessage extends Omit<StoredMessage, "state"> {
  state: "delivered" | "dead";
  delivered_at: number | null;
  /** A live request's entry: its live-log fields as JSON (protocol/live.ts LiveLogEntry); null for a message. */
  live: string | null;
}

/** The columns a day table shares with `messages`, in this order (the day table adds delivered_at). */
export const SHARED_COLUMNS = [
  "seq", "kind", "subpath", "content_type", "body", "size", "received_at", "expires_at", "sender", "msg_id", "env_type",
  "state", "attempts", "reason", "last_status", "dead_at", "replay_of", "headers", "request", "lane", "restored",
] as const;

function dayTableDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
    seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, subpath TEXT, content_type TEXT NOT NULL, body BLOB NOT NULL,
    size INTEGER NOT NULL, received_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, sender TEXT, msg_id TEXT,
    env_type TEXT, state TEXT NOT NULL, attempts INTEGER NOT NULL, reason TEXT, last_status INTEGER, dead_at INTEGER,
    replay_of INTEGER, headers TEXT, request TEXT, lane TEXT, restored INTEGER NOT NULL, delivered_at INTEGER, live TEXT)`;
}

/** A history period's table (a UTC day's unless a test shortened the period). */
export function dayTable(day: string): string {
  return periodTableName(day);
}

interface DayTotals {
  n: number;
  bytes: number;
  maxSeq: number;
}

/** What the alarm's history job let go of. */
export interface HistoryDrops {
  /** Days dropped because their retention ended. */
  expired: number;
  /** Messages let go of before their retention ended, for the budget. */
  gaveWay: number;
}

export class HistoryStore {
  private readonly exec: Exec;
  /** Every day table, with its totals once the day is over and they were counted. */
  private readonly days = new Map<string, DayTotals | null>();
  /** How long one table covers: a UTC day, or a test's HISTORY_PERIOD_MS (history-period.ts). */
  readonly period: HistoryPeriod;
  /** Told when a period's table is made, with when that period ends: the alarm must run then (to count it, then let it go). */
  private readonly opened: (endMs: number) => void;
  /** How many each day not yet counted holds: counted once per object life when first asked (keptCount), then kept in step. */
  private readonly openCounts = new Map<string, number>();

  constructor(exec: Exec, opened: (endMs: number) => void = () => {}, period: HistoryPeriod = historyPeriod()) {
    this.exec = exec;
    this.opened = opened;
    this.period = period;
    for (const row of exec(`SELECT day, n, bytes, max_seq FROM history_days`)) {
      this.days.set(String(row.day), row.n === null ? null : { n: Number(row.n), bytes: Number(row.bytes), maxSeq: Number(row.max_seq) });
    }
  }

  /** The day tables, oldest first. */
  dayList(): string[] {
    return [...this.days.keys()].sort();
  }

  tables(): string[] {
    return this.dayList().map(dayTable);
  }

  private ensure(day: string): string {
    const table = dayTable(day);
    if (!this.days.has(day)) {
      this.exec(dayTableDdl(table));
      this.exec(`INSERT OR IGNORE INTO history_days (day) VALUES (?)`, day);
      this.days.set(day, null);
      this.opened(this.endMs(day));
    }
    return table;
  }

  /**
   * Copies the queue rows `where` picks into the day's table: delivered at `deliveredAt`, or as they are
   * (dead) when it is null. The caller deletes the same rows from the queue in the same synchronous step
   * (one implicit transaction of the Durable Object): a message is in one table or the other, never none.
   */
  copyFromQueue(day: string, where: string, params: SqlStorageValue[], deliveredAt: number | null): void {
    const table = this.ensure(day);
    // A day counted already (closed: a dead message's shelf ended after its day) is counted again.
    this.uncount(day);
    const columns = SHARED_COLUMNS.join(", ");
    const picked = SHARED_COLUMNS.map((c) => (c === "state" && deliveredAt !== null ? "'delivered'" : c)).join(", ");
    this.exec(`INSERT INTO ${table} (${columns}, delivered_at) SELECT ${picked}, ? FROM messages WHERE ${where}`, deliveredAt, ...params);
  }

  /**
   * `n` rows were just copied into the day's table (copyFromQueue): the rows the caller deleted from the
   * queue in the same step; null when it does not know (the day is counted again when next asked).
   */
  added(day: string, n: number | null): void {
    const known = this.openCounts.get(day);
    if (known === undefined) return;
    if (n === null) this.openCounts.delete(day);
    else this.openCounts.set(day, known + n);
  }

  /** A closed day whose rows changed: its totals are counted again (by the alarm, or when next asked). */
  private uncount(day: string): void {
    if (!this.days.get(day)) return;
    this.exec(`UPDATE history_days SET n = NULL, bytes = NULL, max_seq = NULL WHERE day = ?`, day);
    this.days.set(day, null);
    this.openCounts.delete(day);
  }

  /** The day's count, read from its table once (then kept in step). */
  private countOpen(day: string): number {
    const n = Number(this.exec(`SELECT count(*) AS n FROM ${dayTable(day)}`)[0]!.n);
    this.openCounts.set(day, n);
    return n;
  }

  /**
   * A live request answered (or failed) at once, never queued: a row of the day's table under id `seq`,
   * with no body (the live log never keeps one, nor a query: protocol/live.ts) and its live-log fields.
   */
  keepLive(seq: number, entry: LiveLogEntry, sender: string, lane: string): void {
    const table = this.ensure(this.period.keyOf(entry.at_ms));
    this.exec(
      `INSERT INTO ${table} (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type, state, attempts, reason, last_status, dead_at, replay_of, headers, request, lane, restored, delivered_at, live)
       VALUES (?, 'hook', ?, '', X'', 0, ?, ?, ?, NULL, NULL, ?, 0, ?, ?, NULL, NULL, NULL, NULL, ?, 0, ?, ?)`,
      seq, entry.path, entry.at_ms, entry.at_ms, sender, entry.outcome === "failed" ? "dead" : "delivered",
      entry.code === null ? `live: ${entry.outcome}` : `live: ${entry.outcome} (${entry.code})`, entry.status, lane, entry.at_ms + entry.duration_ms, JSON.stringify(entry),
    );
    this.added(this.period.keyOf(entry.at_ms), 1);
  }

  /** The highest id any day table holds (a rowid's max: one row read a table), 0 when none. */
  newestSeq(): number {
    let newest = 0;
    for (const table of this.tables()) newest = Math.max(newest, Number(this.exec(`SELECT coalesce(max(seq), 0) AS m FROM ${table}`)[0]!.m));
    return newest;
  }

  /** The lowest id kept, or null (one row read a table). */
  oldest(): { seq: number; received_at: number } | null {
    let best: { seq: number; received_at: number } | null = null;
    for (const table of this.tables()) {
      const row = this.exec(`SELECT seq, received_at FROM ${table} ORDER BY seq LIMIT 1`)[0];
      if (row && (!best || Number(row.seq) < best.seq)) best = { seq: Number(row.seq), received_at: Number(row.received_at) };
    }
    return best;
  }

  /** A kept message by id: one primary-key probe a day table, newest day first. */
  find(seq: number): KeptMessage | null {
    for (const table of this.tables().reverse()) {
      const row = this.exec(`SELECT * FROM ${table} WHERE seq = ?`, seq)[0];
      if (row) return row as unknown as KeptMessage;
    }
    return null;
  }

  /** The day table that keeps this id (one primary-key probe a day table), or null. */
  tableHolding(seq: number): string | null {
    for (const table of this.tables().reverse()) {
      if (this.exec(`SELECT 1 FROM ${table} WHERE seq = ?`, seq).length > 0) return table;
    }
    return null;
  }

  /** Deletes a kept message (a person's drop); its state, or null when it is not kept. */
  remove(seq: number): "delivered" | "dead" | null {
    for (const day of this.dayList().reverse()) {
      const row = this.exec(`DELETE FROM ${dayTable(day)} WHERE seq = ? RETURNING state`, seq)[0];
      if (!row) continue;
      this.uncount(day);
      this.added(day, -1);
      return String(row.state) as "delivered" | "dead";
    }
    return null;
  }

  /** How many are kept: the closed days' counted totals, and the days not yet counted as counted once per object life. */
  keptCount(): number {
    let n = 0;
    for (const [day, totals] of this.days) n += totals ? totals.n : (this.openCounts.get(day) ?? this.countOpen(day));
    return n;
  }

  /** Days after their retention, and the closed days' totals once (the only full read of a day table outside the owner's routes). */
  maintain(nowMs: number, retentionMs: number, budgetBytes: number, beforeDrop: (maxSeq: number) => void): HistoryDrops {
    const today = this.period.keyOf(nowMs);
    const drops: HistoryDrops = { expired: 0, gaveWay: 0 };
    for (const day of this.dayList()) {
      if (this.endMs(day) + retentionMs <= nowMs) {
        this.drop(day, beforeDrop);
        drops.expired += 1;
      } else if (day < today && this.days.get(day) === null) {
        this.count(day);
      }
    }
    // Oldest first, until the closed days fit the budget; the open day is never let go of.
    let closedBytes = 0;
    for (const totals of this.days.values()) closedBytes += totals?.bytes ?? 0;
    for (const day of this.dayList()) {
      if (closedBytes <= budgetBytes || day >= today) break;
      const totals = this.days.get(day)!;
      closedBytes -= totals?.bytes ?? 0;
      drops.gaveWay += totals?.n ?? 0;
      this.drop(day, beforeDrop);
    }
    return drops;
  }

  private count(day: string): void {
    const table = dayTable(day);
    const row = this.exec(`SELECT count(*) AS n, coalesce(sum(size + coalesce(length(CAST(request AS BLOB)), 0)), 0) AS b, coalesce(max(seq), 0) AS m FROM ${table}`)[0]!;
    const totals = { n: Number(row.n), bytes: Number(row.b), maxSeq: Number(row.m) };
    this.exec(`UPDATE history_days SET n = ?, bytes = ?, max_seq = ? WHERE day = ?`, totals.n, totals.bytes, totals.maxSeq, day);
    this.days.set(day, totals);
    this.openCounts.delete(day);
  }

  private drop(day: string, beforeDrop: (maxSeq: number) => void): void {
    const table = dayTable(day);
    const maxSeq = this.days.get(day)?.maxSeq ?? Number(this.exec(`SELECT coalesce(max(seq), 0) AS m FROM ${table}`)[0]!.m);
    // The id floor and the history floor first: ids are never reused, and a cursor before the floor hears of its gap.
    beforeDrop(maxSeq);
    this.exec(
      `INSERT INTO meta (key, value) VALUES ('history_floor', ?) ON CONFLICT (key) DO UPDATE SET value = CAST(max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT)`,
      String(maxSeq),
    );
    this.exec(`DROP TABLE IF EXISTS ${table}`);
    this.exec(`DELETE FROM history_days WHERE day = ?`, day);
    this.days.delete(day);
    this.openCounts.delete(day);
  }

  /** When the period of this key ends (ms). */
  endMs(day: string): number {
    return this.period.startMs(day) + this.period.ms;
  }

  /** Ids at or below this were let go of by history (0: none yet). */
  floor(): number {
    const row = this.exec(`SELECT value FROM meta WHERE key = 'history_floor'`)[0];
    return row ? Number(row.value) : 0;
  }

  /** When the alarm next has history work: a day's retention ending, or the open day closing (its totals). */
  nextDueAt(retentionMs: number): number | null {
    let next: number | null = null;
    for (const [day, totals] of this.days) {
      const end = this.endMs(day);
      const at = totals === null ? Math.min(end, end + retentionMs) : end + retentionMs;
      next = next === null ? at : Math.min(next, at);
    }
    return next;
  }
}
