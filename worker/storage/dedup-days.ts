// Where dedup records live since schema 11: one table per UTC day in which their windows end,
// d_<yyyymmdd> (the columns of the `dedup` table, listed in dedup_days), dropped whole once that day is
// over — a DROP TABLE, which the storage row counter counts as no rows written, where a delete per record
// cost one row each and, with sparse traffic, an alarm run each. A record is recognised until at least its
// expires_at (its day's end is no earlier), so the dedup window is never shorter. The `dedup` table of
// before stays readable until its records expire as they always did. InboxRecords (inbox-records.ts)
// keeps every record through this; covered by test/worker/storage.test.ts, test/worker/sibling-acks.test.ts
// and test/worker/history-rows.test.ts.
import { DAY_MS, dayOf, dayStartMs, dayTableName } from "./utc-day.ts";
import type { Exec } from "./utc-day.ts";

const dedupTable = (day: string) => dayTableName("d", day);

export class DedupDays {
  private readonly exec: Exec;
  private readonly days = new Set<string>();

  constructor(exec: Exec) {
    this.exec = exec;
    for (const row of exec(`SELECT day FROM dedup_days`)) this.days.add(String(row.day));
  }

  /** Every table that may hold a record: the `dedup` table of before, then the day tables, oldest first. */
  tables(): string[] {
    return ["dedup", ...[...this.days].sort().map(dedupTable)];
  }

  /** The table a record whose window ends at `expiresAt` goes into, created on first use. */
  tableFor(expiresAt: number): string {
    const day = dayOf(expiresAt);
    const table = dedupTable(day);
    if (!this.days.has(day)) {
      this.exec(`CREATE TABLE IF NOT EXISTS ${table} (
        sender TEXT NOT NULL, msg_id TEXT NOT NULL, fingerprint TEXT NOT NULL, answer TEXT NOT NULL, expires_at INTEGER NOT NULL,
        relay_ack INTEGER, acks_through INTEGER, PRIMARY KEY (sender, msg_id)) WITHOUT ROWID`);
      this.exec(`INSERT OR IGNORE INTO dedup_days (day) VALUES (?)`, day);
      this.days.add(day);
    }
    return table;
  }

  /** Drops the days that are over at `nowMs`. */
  dropEnded(nowMs: number): void {
    for (const day of [...this.days].sort()) {
      if (dayStartMs(day) + DAY_MS > nowMs) break;
      this.exec(`DROP TABLE IF EXISTS ${dedupTable(day)}`);
      this.exec(`DELETE FROM dedup_days WHERE day = ?`, day);
      this.days.delete(day);
    }
  }

  /** When the earliest day ends (the alarm drops it then), or null. */
  nextEndAt(): number | null {
    const first = [...this.days].sort()[0];
    return first === undefined ? null : dayStartMs(first) + DAY_MS;
  }
}
