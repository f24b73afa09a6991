// All SQLite access of one inbox. The Durable Object (inbox.ts) decides; this module stores: the
// config and the queue here, the records beside it (dedup, nonces, outbox, hub state) and the row
// counting in inbox-records.ts.
import type { InboxConfig } from "../inbox-config.ts";
import { InboxRecords } from "./inbox-records.ts";
import type { Row } from "./inbox-records.ts";
import type { DeadLetter, InFlight, MessageMeta, NewMessage, NewReceipt, StoredMessage } from "./stored-message.ts";

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** What a row occupies against the inbox's max_queue_bytes: its body and a source event's kept request. */
const STORED_BYTES = `size + coalesce(length(CAST(request AS BLOB)), 0)`;

/** The bytes a message to be stored counts against the inbox's capacity (STORED_BYTES before it is a row). */
export function storedBytes(m: Pick<NewMessage, "body" | "request">): number {
  return m.body.byteLength + (m.request ? new TextEncoder().encode(m.request).byteLength : 0);
}

export class InboxStore extends InboxRecords {
  private maxSeq = 0;
  private count = 0;
  private bytes = 0;

  constructor(sql: SqlStorage) {
    super(sql);
    const stats = this.one(`SELECT count(*) AS n, coalesce(sum(${STORED_BYTES}), 0) AS b, coalesce(max(seq), 0) AS m FROM messages`);
    this.count = Number(stats.n);
    this.bytes = Number(stats.b);
    const floor = this.sql.exec(`SELECT value FROM meta WHERE key = 'seq_floor'`).toArray()[0];
    this.maxSeq = Math.max(Number(stats.m), Number(floor?.value ?? 0));
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

  /** Everything stored (queued and dead: both count against the inbox's capacity). */
  queueStats(): { count: number; bytes: number; lastSeq: number } {
    return { count: this.count, bytes: this.bytes, lastSeq: this.maxSeq };
  }

  insertMessage(m: NewMessage): number {
    const seq = this.maxSeq + 1;
    this.exec(
      `INSERT INTO messages (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type, headers, request)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      seq, m.kind, m.subpath, m.content_type, toArrayBuffer(m.body), m.body.byteLength, m.received_at, m.expires_at,
      m.sender, m.msg_id, m.env_type, m.headers ?? null, m.request ?? null,
    );
    this.maxSeq = seq;
    this.count += 1;
    this.bytes += storedBytes(m);
    return seq;
  }

  /**
   * Stores receipts handed over by sibling inboxes with their dedup records: two statements for the
   * whole batch (the rows travel as one JSON parameter; SQLite allows 100 bound parameters a statement).
   * The caller has left out those already recorded (knownDeliveries) and checked the capacity.
   */
  insertReceipts(receipts: readonly NewReceipt[]): void {
    if (receipts.length === 0) return;
    const first = this.maxSeq + 1;
    const dedup = receipts.map((r, i) => [r.sender, r.msg_id, r.fingerprint, JSON.stringify({ queued: true, id: first + i }), r.dedup_until]);
    this.exec(`INSERT INTO dedup (sender, msg_id, fingerprint, answer, expires_at) SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?)`, JSON.stringify(dedup));
    const messages = receipts.map((r, i) => [first + i, r.json, r.size, r.received_at, r.expires_at, r.sender, r.msg_id, r.env_type]);
    this.exec(
      `INSERT INTO messages (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type)
       SELECT value ->> 0, 'envelope', NULL, 'application/json', CAST(value ->> 1 AS BLOB), value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7
       FROM json_each(?)`,
      JSON.stringify(messages),
    );
    this.maxSeq = first + receipts.length - 1;
    this.count += receipts.length;
    for (const r of receipts) this.bytes += r.size;
  }

  /** Queued messages after `after`, in id order (what a consumer is sent next). */
  messagesAfter(after: number, limit: number): StoredMessage[] {
    return this.exec(`SELECT * FROM messages WHERE seq > ? AND state = 'queued' ORDER BY seq LIMIT ?`, after, limit) as unknown as StoredMessage[];
  }

  countQueuedUpTo(seq: number): number {
    return Number(this.one(`SELECT count(*) AS n FROM messages WHERE seq <= ? AND state = 'queued'`, seq).n);
  }

  find(seq: number): StoredMessage | null {
    return (this.exec(`SELECT * FROM messages WHERE seq = ?`, seq)[0] as unknown as StoredMessage | undefined) ?? null;
  }

  /**
   * Messages after `after`, without bodies, in id order. `state` filters by what is stored; "sent" and
   * "queued" are the stored queued rows inside and outside the connected agent's in-flight range.
   */
  list(after: number, limit: number, state: "queued" | "sent" | "dead" | "all", inFlight: InFlight | null): MessageMeta[] {
    const columns = `seq, kind, subpath, content_type, size, received_at, expires_at, sender, msg_id, env_type, state, attempts, reason, last_status, dead_at, replay_of`;
    const range = [inFlight?.from ?? 0, inFlight?.upTo ?? 0];
    const [where, params] =
      state === "all" ? ["", []]
      : state === "dead" ? ["AND state = 'dead'", []]
      : [`AND state = 'queued' AND ${state === "sent" ? "" : "NOT "}(seq > ? AND seq <= ?)`, range];
    return this.exec(`SELECT ${columns} FROM messages WHERE seq > ? ${where} ORDER BY seq LIMIT ?`, after, ...params, limit) as unknown as MessageMeta[];
  }

  /** Counts by state and the oldest waiting message (one aggregate read, no writes). */
  summary(inFlight: InFlight | null): { queued: number; sent: number; dead: number; oldestWaitingAt: number | null } {
    const row = this.one(
      `SELECT
         coalesce(sum(state = 'queued'), 0) AS queued,
         coalesce(sum(state = 'dead'), 0) AS dead,
         coalesce(sum(state = 'queued' AND seq > ? AND seq <= ?), 0) AS sent,
         min(CASE WHEN state = 'queued' THEN received_at END) AS oldest
       FROM messages`,
      inFlight?.from ?? 0, inFlight?.upTo ?? 0,
    );
    const sent = Number(row.sent);
    return { queued: Number(row.queued) - sent, sent, dead: Number(row.dead), oldestWaitingAt: row.oldest === null ? null : Number(row.oldest) };
  }

  /**
   * Deletes acknowledged (queued) messages: one id in flight on a socket (0 when it is not), or every
   * id up to and including `upTo` (a consumer's cursor). Dead ones stay.
   */
  acknowledge(range: { id: number; inFlight: InFlight } | { upTo: number }): number {
    const rows =
      "id" in range
        ? this.exec(
            `DELETE FROM messages WHERE seq = ? AND state = 'queued' AND seq > ? AND seq <= ? RETURNING seq, ${STORED_BYTES} AS bytes`,
            range.id, range.inFlight.from, range.inFlight.upTo,
          )
        : this.exec(`DELETE FROM messages WHERE seq <= ? AND state = 'queued' RETURNING seq, ${STORED_BYTES} AS bytes`, range.upTo);
    this.forget(rows);
    return rows.length;
  }

  /**
   * Moves a message in flight on a socket to the dead shelf; false when it is not queued and in flight there.
   * The agent's attempts add to those a replay carried over: the shelf counts every post of the message.
   */
  markDead(seq: number, dead: DeadLetter, inFlight: InFlight): boolean {
    const rows = this.exec(
      `UPDATE messages SET state = 'dead', reason = ?, last_status = ?, attempts = attempts + ?, dead_at = ?, expires_at = ?
       WHERE seq = ? AND state = 'queued' AND seq > ? AND seq <= ? RETURNING seq`,
      dead.reason, dead.status, dead.attempts, dead.nowMs, dead.keepUntil, seq, inFlight.from, inFlight.upTo,
    );
    return rows.length === 1;
  }

  /** Stores a message that is dead on arrival (a record pulled from the hub that failed the relay's checks). */
  insertDead(m: NewMessage, dead: DeadLetter): number {
    const seq = this.insertMessage({ ...m, expires_at: dead.keepUntil });
    this.exec(
      `UPDATE messages SET state = 'dead', reason = ?, last_status = ?, attempts = ?, dead_at = ? WHERE seq = ?`,
      dead.reason, dead.status, dead.attempts, dead.nowMs, seq,
    );
    return seq;
  }

  /**
   * Puts a dead message back in the queue under a new id (the old one is kept as replay_of), so every
   * consumer's cursor stays valid and the gateway sees a fresh Idempotency-Key. Null when not dead.
   */
  replay(seq: number, expiresAt: number): number | null {
    const next = this.maxSeq + 1;
    const rows = this.exec(
      `INSERT INTO messages (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type, headers, request, attempts, replay_of)
       SELECT ?, kind, subpath, content_type, body, size, received_at, ?, sender, msg_id, env_type, headers, request, attempts, seq
       FROM messages WHERE seq = ? AND state = 'dead' RETURNING seq`,
      next, expiresAt, seq,
    );
    if (rows.length === 0) return null;
    this.maxSeq = next;
    this.exec(`DELETE FROM messages WHERE seq = ?`, seq);
    return next;
  }

  /** A stored flat hub body was matched to its signed original (hub/webhook-era/hub-bridge.ts): name it by its msg_id. */
  nameOrigin(seq: number, sender: string, msgId: string): void {
    this.exec(`UPDATE messages SET sender = ?, msg_id = ? WHERE seq = ?`, sender, msgId, seq);
  }

  /**
   * Deletes one message (a person's decision) unless it is in flight on the connected agent's socket,
   * checked in the deleting statement: its state, "in_flight" when it was left alone, or null when there
   * is none.
   */
  drop(seq: number, inFlight: InFlight | null): "queued" | "dead" | "in_flight" | null {
    const rows = this.exec(
      `DELETE FROM messages WHERE seq = ? AND NOT (state = 'queued' AND seq > ? AND seq <= ?) RETURNING seq, ${STORED_BYTES} AS bytes, state`,
      seq, inFlight?.from ?? 0, inFlight?.upTo ?? 0,
    );
    this.forget(rows);
    const state = rows[0]?.state as "queued" | "dead" | undefined;
    if (state) return state;
    return this.exec(`SELECT seq FROM messages WHERE seq = ?`, seq).length > 0 ? "in_flight" : null;
  }

  /**
   * Queued messages whose TTL ended move to the dead shelf (reason ttl_expired) and are returned, so
   * the sender can be told; a message in the agent's hands is left to it. Dead messages past the
   * shelf's TTL are deleted: the end of the line, documented, never silent before it.
   */
  expireMessages(nowMs: number, keepDeadUntil: number, inFlight: InFlight | null): Pick<StoredMessage, "seq" | "sender" | "msg_id" | "env_type">[] {
    this.forget(this.exec(`DELETE FROM messages WHERE state = 'dead' AND expires_at <= ? RETURNING seq, ${STORED_BYTES} AS bytes`, nowMs));
    const rows = this.exec(
      `UPDATE messages SET state = 'dead', dead_at = ?, expires_at = ?,
         reason = 'ttl_expired: not delivered before its TTL ended (was the local agent offline?); replay it to deliver it now'
       WHERE state = 'queued' AND expires_at <= ? AND NOT (seq > ? AND seq <= ?)
       RETURNING seq, sender, msg_id, env_type`,
      nowMs, keepDeadUntil, nowMs, inFlight?.from ?? 0, inFlight?.upTo ?? 0,
    );
    return rows as unknown as Pick<StoredMessage, "seq" | "sender" | "msg_id" | "env_type">[];
  }

  private forget(deleted: Row[]): void {
    if (deleted.length === 0) return;
    this.count -= deleted.length;
    for (const row of deleted) this.bytes -= Number(row.bytes);
    // Ids must never be reused, or a consumer's resume cursor (and the agent's delivery journal) would
    // skip new messages. SQLite picks max(rowid)+1, so deleting the newest row would hand its id out
    // again after a restart: remember the floor whenever the newest row goes.
    if (deleted.some((row) => Number(row.seq) === this.maxSeq)) {
      this.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('seq_floor', ?)`, String(this.maxSeq));
    }
  }
}
