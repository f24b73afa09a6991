// UTC days as the suffix of the tables kept per day (history-store.ts's h_<yyyymmdd>, dedup-days.ts's
// d_<yyyymmdd>), and the statement runner both are given. Pure; covered by test/worker/history.test.ts.

/** InboxRecords' counting statement runner (inbox-records.ts), as the per-day stores take it. */
export type Exec = (query: string, ...params: SqlStorageValue[]) => Record<string, SqlStorageValue>[];

export const DAY_MS = 86_400_000;

/** The UTC day of a time, as a table's suffix: "20261207". */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replaceAll("-", "");
}

export function dayStartMs(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(4, 6)) - 1, Number(day.slice(6, 8)));
}

/** A table name is built only from a checked day, never from a request's text. */
export function dayTableName(prefix: "h" | "d", day: string): string {
  if (!/^[0-9]{8}$/.test(day)) throw new Error(`"${day}" is not a day`);
  return `${prefix}_${day}`;
}
