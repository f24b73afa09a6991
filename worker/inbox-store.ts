// All SQLite access of one inbox. The Durable Object (inbox.ts) decides; this module stores.
// It counts the rows every statement writes so tests and the benchmark can report writes per message.
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import type { InboxConfig } from "./inbox-config.ts";

export interface StoredMessage {
  seq: number;
  kind: "hook" | "envelope";
  subpath: string | null;
  content_type: string;
  body: ArrayBuffer;
  size: number;
  received_at: number;
  expires_at: number;
  sender: string | null;
  msg_id: string | null;
  env_type: string | null;
}

export type NewMessage = Omit<StoredMessage, "seq" | "body" | "size"> & { body: Uint8Array };

export interface ExpiredMessage {
  seq: number;
  sender: string | null;
  msg_id: string | null;
  env_type: string | null;
}

export interface OutboxItem {
  id: number;
  target: string;
  body: string;
  attempts: number;
  next_at: number;
  expires_at: number;
}

type Row = Record<string, SqlStorageValue>;

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

export class InboxStore {
  /** Rows written by this instance since it was created (SQLite's own count, indexes included). */
  rowsWritten = 0;
  private maxSeq = 0;
  private count = 0;
  private bytes = 0;

  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
    this.migrate();
    const stats = this.one(`SELECT count(*) AS n, coalesce(sum(size), 0) AS b, coalesce(max(seq), 0) AS m FROM messages`);
    this.count = Number(stats.n);
    this.bytes = Number(stats.b);
    const floor = this.sql.exec(`SELECT value FROM meta WHERE key = 'seq_floor'`).toArray()[0];
    this.maxSeq = Math.max(Number(stats.m), Number(floor?.value ?? 0));
  }

  private exec(query: string, ...params: SqlStorageValue[]): Row[] {
    const cursor = this.sql.exec(query, ...params);
    const rows = cursor.toArray();
    this.rowsWritten += cursor.rowsWritten;
    return rows;
  }

  private one(query: string, ...params: SqlStorageValue[]): Row {
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

  // --- queue --------------------------------------------------------------------------------

  queueStats(): { count: number; bytes: number; lastSeq: number } {
    return { count: this.count, bytes: this.bytes, lastSeq: this.maxSeq };
  }

  insertMessage(m: NewMessage): number {
    const seq = this.maxSeq + 1;
    this.exec(
      `INSERT INTO messages (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      seq, m.kind, m.subpath, m.content_type, toArrayBuffer(m.body), m.body.byteLength, m.received_at, m.expires_at,
      m.sender, m.msg_id, m.env_type,
    );
    this.maxSeq = seq;
    this.count += 1;
    this.bytes += m.body.byteLength;
    return seq;
  }

  messagesAfter(after: number, limit: number): StoredMessage[] {
    return this.exec(`SELECT * FROM messages WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit) as unknown as StoredMessage[];
  }

  countUpTo(seq: number): number {
    return Number(this.one(`SELECT count(*) AS n FROM messages WHERE seq <= ?`, seq).n);
  }

  /** Deletes acknowledged messages: one id, or every id up to and including `upTo`. */
  acknowledge(range: { id: number } | { upTo: number }): number {
    const rows =
      "id" in range
        ? this.exec(`DELETE FROM messages WHERE seq = ? RETURNING size`, range.id)
        : this.exec(`DELETE FROM messages WHERE seq <= ? RETURNING size`, range.upTo);
    this.forget(rows);
    return rows.length;
  }

  expireMessages(nowMs: number): ExpiredMessage[] {
    const rows = this.exec(`DELETE FROM messages WHERE expires_at <= ? RETURNING seq, size, sender, msg_id, env_type`, nowMs);
    this.forget(rows);
    return rows as unknown as ExpiredMessage[];
  }

  private forget(deleted: Row[]): void {
    if (deleted.length === 0) return;
    this.count -= deleted.length;
    for (const row of deleted) this.bytes -= Number(row.size);
    // Ids must never be reused, or a client's resume cursor would skip new messages. SQLite picks
    // max(rowid)+1, so an emptied table would restart at 1: remember the floor, once per drain.
    if (this.count === 0) {
      this.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('seq_floor', ?)`, String(this.maxSeq));
    }
  }

  // --- dedup --------------------------------------------------------------------------------

  findDuplicate(sender: string, msgId: string): { fingerprint: string; answer: string } | null {
    const row = this.exec(`SELECT fingerprint, answer FROM dedup WHERE sender = ? AND msg_id = ?`, sender, msgId)[0];
    return row ? { fingerprint: String(row.fingerprint), answer: String(row.answer) } : null;
  }

  recordDelivery(sender: string, msgId: string, fingerprint: string, answer: string, expiresAt: number): void {
    this.exec(
      `INSERT OR REPLACE INTO dedup (sender, msg_id, fingerprint, answer, expires_at) VALUES (?, ?, ?, ?, ?)`,
      sender, msgId, fingerprint, answer, expiresAt,
    );
  }

  // --- nonces (replay protection for signed claims) -----------------------------------------

  /** Records a nonce; false when it was seen before (a replay). */
  useNonce(nonce: string, expiresAt: number): boolean {
    const rows = this.exec(`INSERT OR IGNORE INTO nonces (nonce, expires_at) VALUES (?, ?) RETURNING nonce`, nonce, expiresAt);
    return rows.length === 1;
  }

  // --- outbox (receipts to post, retried from the alarm) ------------------------------------

  enqueueOutbox(target: string, body: string, nextAt: number, expiresAt: number): void {
    this.exec(`INSERT INTO outbox (target, body, attempts, next_at, expires_at) VALUES (?, ?, 0, ?, ?)`, target, body, nextAt, expiresAt);
  }

  dueOutbox(nowMs: number): OutboxItem[] {
    return this.exec(`SELECT * FROM outbox WHERE next_at <= ? ORDER BY id LIMIT 50`, nowMs) as unknown as OutboxItem[];
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
    return row.t === null ? null : Number(row.t);
  }
}
