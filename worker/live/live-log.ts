// The live log: the last LIVE_LOG_KEPT live requests of an inbox (method, path without its query, the app's
// status, how long, what became of it), kept in SQLite's live_log ring (storage/schema.ts, version 8) so a
// request costs one row write. The answered count and the newest time are read once per object life and
// then kept in step. Its statements run through the inbox store's counted exec (storage/inbox-records.ts),
// so the queue summary's rows_written/rows_read include them. A request answered or failed at once is also
// handed to `keep` (the inbox's history: storage/history-store.ts keepLive), one row more, so history lists
// it beside the messages; a held one is kept there as the message it became. Used by live-requests.ts and
// live-routes.ts; covered by test/worker/live-log.test.ts, test/worker/history.test.ts and (its rows)
// test/worker/history-rows.test.ts.
import type { LiveLogEntry, LiveOutcome } from "../../protocol/index.ts";

export const LIVE_LOG_KEPT = 1000;

interface Tally {
  /** The next entry's number (its slot is n % LIVE_LOG_KEPT). */
  next: number;
  answered: number;
  lastAtMs: number | null;
}

/** Runs one statement and returns its rows, counting SQLite's rows written and read (InboxRecords.countedExec). */
export type CountedExec = (query: string, ...params: SqlStorageValue[]) => Record<string, SqlStorageValue>[];

export class LiveLog {
  private readonly exec: CountedExec;
  private tally: Tally | null = null;

  private readonly keep: (entry: LiveLogEntry) => void;

  constructor(exec: CountedExec, keep: (entry: LiveLogEntry) => void = () => {}) {
    this.exec = exec;
    this.keep = keep;
  }

  private counts(): Tally {
    if (this.tally) return this.tally;
    const row = this.exec(`SELECT coalesce(max(n), -1) AS last, count(CASE WHEN outcome = 'answered' THEN 1 END) AS answered, max(at_ms) AS at FROM live_log`)[0]!;
    this.tally = { next: Number(row.last) + 1, answered: Number(row.answered), lastAtMs: row.at === null ? null : Number(row.at) };
    return this.tally;
  }

  /** Writes one entry over the oldest; returns its number (to mark it late later). */
  record(entry: LiveLogEntry): number {
    const tally = this.counts();
    const n = tally.next;
    const slot = n % LIVE_LOG_KEPT;
    const replaced = this.exec(`SELECT outcome FROM live_log WHERE slot = ?`, slot)[0];
    this.exec(
      `INSERT OR REPLACE INTO live_log (slot, n, at_ms, source, method, path, status, duration_ms, outcome, code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      slot, n, entry.at_ms, entry.source, entry.method, entry.path, entry.status, entry.duration_ms, entry.outcome, entry.code,
    );
    tally.next = n + 1;
    tally.answered += (entry.outcome === "answered" ? 1 : 0) - (replaced?.outcome === "answered" ? 1 : 0);
    tally.lastAtMs = Math.max(tally.lastAtMs ?? 0, entry.at_ms);
    this.keep(entry);
    return n;
  }

  /** A held request's answer came after all: entry `n` (if the ring still holds it) says so, with the app's status. */
  markLate(n: number, status: number | null): void {
    this.exec(`UPDATE live_log SET outcome = 'late', status = ? WHERE slot = ? AND n = ?`, status, n % LIVE_LOG_KEPT, n);
  }

  /** The newest `limit` entries, newest first. */
  newest(limit: number): LiveLogEntry[] {
    return this.exec(`SELECT at_ms, source, method, path, status, duration_ms, outcome, code FROM live_log ORDER BY n DESC LIMIT ?`, limit)
      .map((row) => ({
        at_ms: Number(row.at_ms),
        source: String(row.source),
        method: String(row.method),
        path: String(row.path),
        status: row.status === null ? null : Number(row.status),
        duration_ms: Number(row.duration_ms),
        outcome: String(row.outcome) as LiveOutcome,
        code: row.code === null ? null : String(row.code),
      }));
  }

  answered(): number {
    return this.counts().answered;
  }

  lastAtMs(): number | null {
    return this.counts().lastAtMs;
  }
}
