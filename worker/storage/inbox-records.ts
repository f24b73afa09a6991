// The inbox's SQLite below the queue: the statement runner that counts the rows every statement writes
// and reads (so tests and the benchmark can report writes per message and reads per send), the schema
// migration, the config, and the records kept beside the messages — the hub link's state, dedup records
// (in per-day tables: dedup-days.ts), nonces and the receipt outbox — with their sweep and the alarm's next
// due time. InboxStore
// (inbox-store.ts) adds the queue.
// Covered by test/worker/storage.test.ts and test/worker/receipts.test.ts.
import { DedupDays } from "./dedup-days.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import { EMPTY_HUB_STATE } from "../hub/hub-settings.ts";
import type { HubState } from "../hub/hub-settings.ts";
import type { InboxConfig } from "../inbox-config.ts";

export type Row = Record<string, SqlStorageValue>;

/** Where a queued receipt goes: the inbox's hub (POST {hub}/hub/receipt), or a sibling inbox on this relay. */
export type ReceiptTarget = { kind: "hub"; hubUrl: string } | { kind: "relay"; agentId: string };

export interface OutboxItem {
  id: number;
  target: ReceiptTarget;
  body: string;
  attempts: number;
  next_at: number;
  expires_at: number;
}

/** An outbox row's target (schema 6: `kind` and the address; older rows are migrated to it). */
function targetOf(row: Row): ReceiptTarget {
  const address = String(row.target);
  return row.kind === "hub" ? { kind: "hub", hubUrl: address } : { kind: "relay", agentId: address };
}

export class InboxRecords {
  /** Rows written by this instance since it was created (SQLite's own count, indexes included). */
  rowsWritten = 0;
  /** Rows read by this instance's statements since it was created (SQLite's count: what the benchmark's "rows read per send" divides). */
  rowsRead = 0;
  /** What sending has cost since the object woke: rows its reads read, messages it sent (socket-session.ts pump). */
  readonly pumpCost = { rowsRead: 0, sent: 0 };
  private hubState: HubState | null = null;
  /** Where dedup records are (dedup-days.ts). */
  private readonly dedupDays: DedupDays;

  protected readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
    this.migrate();
    this.dedupDays = new DedupDays((query, ...params) => this.exec(query, ...params));
  }

  protected exec(query: string, ...params: SqlStorageValue[]): Row[] {
    const cursor = this.sql.exec(query, ...params);
    const rows = cursor.toArray();
    this.rowsWritten += cursor.rowsWritten;
    this.rowsRead += cursor.rowsRead;
    return rows;
  }

  /** exec for another of the inbox's tables (the live log: live/live-log.ts), so its rows are in the counters above. */
  countedExec(query: string, ...params: SqlStorageValue[]): Row[] {
    return this.exec(query, ...params);
  }

  notePump(rowsRead: number, sent: number): void {
    this.pumpCost.rowsRead += rowsRead;
    this.pumpCost.sent += sent;
  }

  protected one(query: string, ...params: SqlStorageValue[]): Row {
    return this.exec(query, ...params)[0]!;
  }

  private migrate(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
    const row = this.sql.exec(`SELECT value FROM meta WHERE key = 'schema_version'`).toArray()[0];
    const current = Number(row?.value ?? 0);
    for (let version = current; version < SCHEMA_VERSION; version++) {
      for (const statement of MIGRATIONS[version]!) this.sql.exec(statement);
    }
    if (current < SCHEMA_VERSION) {
      this.sql.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)`, String(SCHEMA_VERSION));
    }
  }

  // --- config -------------------------------------------------------------------------------

  loadConfig(): InboxConfig | null {
    const row = this.exec(`SELECT json FROM config WHERE id = 1`)[0];
    return row ? (JSON.parse(String(row.json)) as InboxConfig) : null;
  }

  saveConfig(config: InboxConfig): void {
    this.exec(`INSERT OR REPLACE INTO config (id, json) VALUES (1, ?)`, JSON.stringify(config));
  }

  // --- hub link state (hub/hub-settings.ts, written by the hub link) -------------------------------

  /** Read once per object, then kept: this store is its only writer (a copy is returned). */
  loadHubState(): HubState {
    if (!this.hubState) {
      const row = this.exec(`SELECT value FROM meta WHERE key = 'hub_state'`)[0];
      this.hubState = row ? { ...EMPTY_HUB_STATE, ...(JSON.parse(String(row.value)) as Partial<HubState>) } : { ...EMPTY_HUB_STATE };
    }
    return { ...this.hubState };
  }

  saveHubState(state: HubState): void {
    this.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('hub_state', ?)`, JSON.stringify(state));
    this.hubState = { ...state };
  }

  /** Reads, changes and writes the hub state in one step (one row written). */
  updateHubState(change: (state: HubState) => void): void {
    const state = this.loadHubState();
    change(state);
    this.saveHubState(state);
  }

  // --- other meta values (the hub token, hub-token.ts; the alarm jobs' failures) -------------------

  readMeta(key: string): string | null {
    const row = this.exec(`SELECT value FROM meta WHERE key = ?`, key)[0];
    return row ? String(row.value) : null;
  }

  writeMeta(key: string, value: string | null): void {
    if (value === null) this.exec(`DELETE FROM meta WHERE key = ?`, key);
    else this.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`, key, value);
  }

  // --- dedup --------------------------------------------------------------------------------

  /** One primary-key probe of each table that may hold a record (dedup-days.ts): a few rows read. */
  findDuplicate(sender: string, msgId: string): { fingerprint: string; answer: string } | null {
    for (const table of this.dedupDays.tables()) {
      const row = this.exec(`SELECT fingerprint, answer FROM ${table} WHERE sender = ? AND msg_id = ?`, sender, msgId)[0];
      if (row) return { fingerprint: String(row.fingerprint), answer: String(row.answer) };
    }
    return null;
  }

  /**
   * Records a delivery unless (sender, msg_id) already has one: false when it had (a repeat; nothing
   * written). Looked for in every table, then written into the table of the day its window ends (the
   * insert checks its own table again). `relayAck`: the message's id when its ack is owed to a sibling
   * inbox; `acksThrough`: the owed-ack cursor as it stands (sibling-receipts.ts). Both ride in this
   * record, which is written anyway.
   */
  recordDelivery(sender: string, msgId: string, fingerprint: string, answer: string, expiresAt: number, relayAck: number | null = null, acksThrough: number | null = null): boolean {
    if (this.findDuplicate(sender, msgId)) return false;
    const rows = this.exec(
      `INSERT INTO ${this.dedupDays.tableFor(expiresAt)} (sender, msg_id, fingerprint, answer, expires_at, relay_ack, acks_through) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING RETURNING 1`,
      sender, msgId, fingerprint, answer, expiresAt, relayAck, acksThrough,
    );
    return rows.length === 1;
  }

  /** Records deliveries (sibling receipts, already checked as new: knownDeliveries), one statement per day table. */
  protected recordDeliveries(records: readonly (readonly [sender: string, msgId: string, fingerprint: string, answer: string, expiresAt: number])[]): void {
    const byTable = new Map<string, (readonly SqlStorageValue[])[]>();
    for (const record of records) {
      const table = this.dedupDays.tableFor(record[4]);
      byTable.set(table, [...(byTable.get(table) ?? []), record]);
    }
    for (const [table, rows] of byTable) {
      this.exec(`INSERT INTO ${table} (sender, msg_id, fingerprint, answer, expires_at) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?)`, JSON.stringify(rows));
    }
  }

  /** Which of these (sender, msg_id) pairs have a delivery record, as "sender msg_id" keys. */
  knownDeliveries(pairs: readonly (readonly [string, string])[]): Set<string> {
    const known = new Set<string>();
    for (const table of this.dedupDays.tables()) {
      const rows = this.exec(
        `SELECT sender, msg_id FROM ${table} WHERE (sender, msg_id) IN (SELECT value ->> 0, value ->> 1 FROM json_each(?))`,
        JSON.stringify(pairs),
      );
      for (const row of rows) known.add(`${String(row.sender)} ${String(row.msg_id)}`);
    }
    return known;
  }

  /**
   * What an earlier life of the object still owed: acks marked owed after the newest cursor any record
   * carries, up to `upTo`, oldest first. One scan of the dedup tables (once per life), two when some
   * record marks an ack owed past the cursor.
   */
  owedAcks(upTo: number): { cursor: number; owed: { seq: number; sender: string; msg_id: string; answer: string }[] } {
    const tables = this.dedupDays.tables();
    let cursor = 0;
    let newest: number | null = null;
    for (const table of tables) {
      const marks = this.one(`SELECT coalesce(max(acks_through), 0) AS cursor, max(relay_ack) AS newest FROM ${table}`);
      cursor = Math.max(cursor, Number(marks.cursor));
      if (marks.newest !== null) newest = Math.max(newest ?? 0, Number(marks.newest));
    }
    if (newest === null || newest <= cursor) return { cursor, owed: [] };
    const owed: { seq: number; sender: string; msg_id: string; answer: string }[] = [];
    for (const table of tables) {
      for (const row of this.exec(`SELECT sender, msg_id, answer, relay_ack FROM ${table} WHERE relay_ack > ? AND relay_ack <= ?`, cursor, upTo)) {
        owed.push({ seq: Number(row.relay_ack), sender: String(row.sender), msg_id: String(row.msg_id), answer: String(row.answer) });
      }
    }
    return { cursor, owed: owed.sort((a, b) => a.seq - b.seq) };
  }

  // --- nonces (replay protection for signed claims) -----------------------------------------

  /** Records a nonce; false when it was seen before (a replay). */
  useNonce(nonce: string, expiresAt: number): boolean {
    const rows = this.exec(`INSERT OR IGNORE INTO nonces (nonce, expires_at) VALUES (?, ?) RETURNING nonce`, nonce, expiresAt);
    return rows.length === 1;
  }

  // --- outbox (receipts to post, retried from the alarm) ------------------------------------

  enqueueOutbox(target: ReceiptTarget, body: string, nextAt: number, expiresAt: number): void {
    const address = target.kind === "hub" ? target.hubUrl : target.agentId;
    this.exec(`INSERT INTO outbox (kind, target, body, attempts, next_at, expires_at) VALUES (?, ?, ?, 0, ?, ?)`, target.kind, address, body, nextAt, expiresAt);
  }

  countOutbox(kind: ReceiptTarget["kind"]): number {
    return Number(this.one(`SELECT count(*) AS n FROM outbox WHERE kind = ?`, kind).n);
  }

  dueOutbox(nowMs: number): OutboxItem[] {
    return this.exec(`SELECT * FROM outbox WHERE next_at <= ? ORDER BY id LIMIT 50`, nowMs).map((row) => ({
      id: Number(row.id),
      target: targetOf(row),
      body: String(row.body),
      attempts: Number(row.attempts),
      next_at: Number(row.next_at),
      expires_at: Number(row.expires_at),
    }));
  }

  rescheduleOutbox(id: number, attempts: number, nextAt: number): void {
    this.exec(`UPDATE outbox SET attempts = ?, next_at = ? WHERE id = ?`, attempts, nextAt, id);
  }

  removeOutbox(id: number): void {
    this.exec(`DELETE FROM outbox WHERE id = ?`, id);
  }

  // --- housekeeping -------------------------------------------------------------------------

  sweepExpiredRecords(nowMs: number): void {
    this.exec(`DELETE FROM dedup WHERE expires_at <= ?`, nowMs);
    this.dedupDays.dropEnded(nowMs);
    this.exec(`DELETE FROM nonces WHERE expires_at <= ?`, nowMs);
    this.exec(`DELETE FROM outbox WHERE expires_at <= ?`, nowMs);
  }

  /** The earliest moment any stored row needs the alarm, or null when nothing is pending. */
  nextDueAt(): number | null {
    const row = this.one(
      `SELECT min(t) AS t FROM (
         SELECT min(expires_at) AS t FROM messages
         UNION ALL SELECT min(expires_at) FROM dedup
         UNION ALL SELECT min(expires_at) FROM nonces
         UNION ALL SELECT min(next_at) FROM outbox)`,
    );
    const dedupEnd = this.dedupDays.nextEndAt();
    const due = [row.t === null ? null : Number(row.t), dedupEnd].filter((t): t is number => t !== null);
    return due.length === 0 ? null : Math.min(...due);
  }
}
