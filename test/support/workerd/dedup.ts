// The tables an inbox's dedup records may be in (worker/storage/dedup-days.ts): the `dedup` table of before
// schema 11, then one per UTC day their windows end. For tests that read or change a record in place.

export function dedupTables(sql: SqlStorage): string[] {
  const days = sql.exec(`SELECT day FROM dedup_days ORDER BY day`).toArray();
  return ["dedup", ...days.map((row) => `d_${String(row.day)}`)];
}

/** Runs `statement` (with `?` params) on every dedup table; the rows each returned, together. */
export function onDedupTables(sql: SqlStorage, statement: (table: string) => string, ...params: SqlStorageValue[]): Record<string, SqlStorageValue>[] {
  return dedupTables(sql).flatMap((table) => sql.exec(statement(table), ...params).toArray());
}
