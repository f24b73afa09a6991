// All SQLite access of one inbox. The Durable Object (inbox.ts) decides; this module stores: the
// queue here, each lane's queued ids in memory (lane-index.ts, kept in step by every write
// below), the config and the records beside it (dedup, nonces, outbox, hub state) and the row counting in
// inbox-records.ts. What the connected agent holds (`InFlight`, in-flight.ts) is an older agent's range or
// a lanes agent's id set. Covered by test/worker/storage.test.ts, test/worker/queue.test.ts and
// test/worker/websocket-lanes.test.ts.
import { inFlightSql, seqInFlightSql } from "./in-flight.ts";
import type { InFlight } from "./in-flight.ts";
import { InboxRecords } from "./inbox-records.ts";
import type { Row } from "./inbox-records.ts";
import { LaneIndex } from "./lane-index.ts";
import { messageLane } from "./message-lane.ts";
import type { DeadLetter, MessageMeta, NewMessage, NewReceipt, StoredMessage } from "./stored-message.ts";

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  // A request's body spans its buffer: no copy (SQLite copies the blob as it binds it).
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
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
  /** Built when first needed (lanes()), then kept in step by every write here. */
  private index: LaneIndex | null = null;

  constructor(sql: SqlStorage) {
    super(sql);
    const stats = this.one(`SELECT count(*) AS n, coalesce(sum(${STORED_BYTES}), 0) AS b, coalesce(max(seq), 0) AS m FROM messages`);
    this.count = Number(stats.n);
    this.bytes = Number(stats.b);
    const floor = this.sql.exec(`SELECT value FROM meta WHERE key = 'seq_floor'`).toArray()[0];
    this.maxSeq = Math.max(Number(stats.m), Number(floor?.value ?? 0));
  }

  // --- queue --------------------------------------------------------------------------------

  /** Everything stored (queued and dead: both count against the inbox's capacity). */
  queueStats(): { count: number; bytes: number; lastSeq: number } {
    return { count: this.count, bytes: this.bytes, lastSeq: this.maxSeq };
  }

  // --- lanes --------------------------------------------------------------------------------

  /**
   * Each lane's queued ids: one scan of the queue the first time (a row stored before schema 7 gets its
   * lane computed and written back then), memory after that.
   */
  lanes(): LaneIndex {
    if (this.index) return this.index;
    const index = new LaneIndex();
    for (const row of this.exec(`SELECT seq, lane, received_at FROM messages WHERE state = 'queued' ORDER BY seq`)) {
      const seq = Number(row.seq);
      index.add(seq, row.lane === null ? this.fillLane(seq) : String(row.lane), Number(row.received_at));
    }
    this.index = index;
    return index;
  }

  /** The lane of a row stored without one (before schema 7), written back so it is computed once. */
  private fillLane(seq: number): string {
    const row = this.find(seq)!;
    const lane = messageLane({ ...row, body: new Uint8Array(row.body) });
    this.exec(`UPDATE messages SET lane = ? WHERE seq = ?`, lane, seq);
    return lane;
  }

  /**
   * Messages an older agent set aside (dead, reason "set aside: …") go back to queued in place, keeping
   * their id and attempts, marked restored; their expiry stays the shelf's. Returns how many.
   */
  restoreSetAside(): number {
    const rows = this.exec(
      `UPDATE messages SET state = 'queued', restored = 1, reason = NULL, dead_at = NULL, last_status = NULL
       WHERE state = 'dead' AND reason LIKE 'set aside:%' RETURNING seq, lane, received_at`,
    );
    for (const row of rows) this.index?.add(Number(row.seq), row.lane === null ? this.fillLane(Number(row.seq)) : String(row.lane), Number(row.received_at));
    return rows.length;
  }

  insertMessage(m: NewMessage): number {
    const seq = this.maxSeq + 1;
    const lane = m.lane ?? messageLane(m);
    this.exec(
      `INSERT INTO messages (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type, headers, request, lane)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      seq, m.kind, m.subpath, m.content_type, toArrayBuffer(m.body), m.body.byteLength, m.received_at, m.expires_at,
      m.sender, m.msg_id, m.env_type, m.headers ?? null, m.request ?? null, lane,
    );
    this.maxSeq = seq;
    this.count += 1;
    this.bytes += storedBytes(m);
    this.index?.add(seq, lane, m.received_at);
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
    const encoder = new TextEncoder();
    const lanes = receipts.map((r) => messageLane({ kind: "envelope", subpath: null, content_type: "application/json", sender: r.sender, body: encoder.encode(r.json) }));
    const messages = receipts.map((r, i) => [first + i, r.json, r.size, r.received_at, r.expires_at, r.sender, r.msg_id, r.env_type, lanes[i]]);
    this.exec(
      `INSERT INTO messages (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type, lane)
       SELECT value ->> 0, 'envelope', NULL, 'application/json', CAST(value ->> 1 AS BLOB), value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8
       FROM json_each(?)`,
      JSON.stringify(messages),
    );
    this.maxSeq = first + receipts.length - 1;
    this.count += receipts.length;
    receipts.forEach((r, i) => {
      this.bytes += r.size;
      this.index?.add(first + i, lanes[i]!, r.received_at);
    });
  }

  /** Queued messages after `after`, in id order (what a consumer is sent next). */
  messagesAfter(after: number, limit: number): StoredMessage[] {
    return this.exec(`SELECT * FROM messages WHERE seq > ? AND state = 'queued' ORDER BY seq LIMIT ?`, after, limit) as unknown as StoredMessage[];
  }

  /** Queued messages in (from, upTo], an older agent's socket's: restored ones below its cursor were never sent to it. */
  countQueuedIn(from: number, upTo: number): number {
    return Number(this.one(`SELECT count(*) AS n FROM messages WHERE seq > ? AND seq <= ? AND state = 'queued'`, from, upTo).n);
  }

  find(seq: number): StoredMessage | null {
    return (this.exec(`SELECT * FROM messages WHERE seq = ?`, seq)[0] as unknown as StoredMessage | undefined) ?? null;
  }

  /**
   * Messages after `after`, without bodies, in id order. `state` filters by what is stored; "sent" and
   * "queued" are the stored queued rows in and out of what the connected agent holds.
   */
  list(after: number, limit: number, state: "queued" | "sent" | "dead" | "all", inFlight: InFlight | null): MessageMeta[] {
    const columns = `seq, kind, subpath, content_type, size, received_at, expires_at, sender, msg_id, env_type, state, attempts, reason, last_status, dead_at, replay_of, lane, restored`;
    const [held, heldParams] = inFlightSql(inFlight);
    const [where, params] =
      state === "all" ? ["", []]
      : state === "dead" ? ["AND state = 'dead'", []]
      : [`AND state = 'queued' AND ${state === "sent" ? "" : "NOT "}${held}`, heldParams];
    const rows = this.exec(`SELECT ${columns} FROM messages WHERE seq > ? ${where} ORDER BY seq LIMIT ?`, after, ...params, limit) as unknown as MessageMeta[];
    // Rows stored before schema 7 get their lanes now.
    for (const row of rows) row.lane ??= this.fillLane(row.seq);
    return rows;
  }

  /** Counts by state and the oldest waiting message (one aggregate read, no writes). */
  summary(inFlight: InFlight | null): { queued: number; sent: number; dead: number; oldestWaitingAt: number | null } {
    const [held, heldParams] = inFlightSql(inFlight);
    const row = this.one(
      `SELECT
         coalesce(sum(state = 'queued'), 0) AS queued,
         coalesce(sum(state = 'dead'), 0) AS dead,
         coalesce(sum(state = 'queued' AND ${held}), 0) AS sent,
         min(CASE WHEN state = 'queued' THEN received_at END) AS oldest
       FROM messages`,
      ...heldParams,
    );
    const sent = Number(row.sent);
    return { queued: Number(row.queued) - sent, sent, dead: Number(row.dead), oldestWaitingAt: row.oldest === null ? null : Number(row.oldest) };
  }

  /**
   * Deletes acknowledged (queued) messages: one id in flight on a socket (0 when it is not), or every
   * id up to and including `upTo` (a consumer's cursor) but restored ones: an older agent's cursor passed
   * them while they were set aside, so only their own ack ends them. Dead ones stay.
   */
  acknowledge(range: { id: number; inFlight: InFlight } | { upTo: number }): number {
    let rows: Row[];
    if ("id" in range) {
      const [held, heldParams] = seqInFlightSql(range.inFlight, range.id);
      rows = this.exec(`DELETE FROM messages WHERE seq = ? AND state = 'queued' AND ${held} RETURNING seq, ${STORED_BYTES} AS bytes`, range.id, ...heldParams);
    } else {
      rows = this.exec(`DELETE FROM messages WHERE seq <= ? AND state = 'queued' AND restored = 0 RETURNING seq, ${STORED_BYTES} AS bytes`, range.upTo);
    }
    this.forget(rows);
    return rows.length;
  }

  /**
   * Moves a message in flight on a socket to the dead shelf; false when it is not queued and in flight there.
   * The agent's attempts add to those a replay carried over: the shelf counts every post of the message.
   */
  markDead(seq: number, dead: DeadLetter, inFlight: InFlight): boolean {
    const [held, heldParams] = seqInFlightSql(inFlight, seq);
    const rows = this.exec(
      `UPDATE messages SET state = 'dead', reason = ?, last_status = ?, attempts = attempts + ?, dead_at = ?, expires_at = ?
       WHERE seq = ? AND state = 'queued' AND ${held} RETURNING seq`,
      dead.reason, dead.status, dead.attempts, dead.nowMs, dead.keepUntil, seq, ...heldParams,
    );
    if (rows.length === 0) return false;
    this.index?.remove(seq);
    return true;
  }

  /** Stores a message that is dead on arrival (a record pulled from the hub that failed the relay's checks). */
  insertDead(m: NewMessage, dead: DeadLetter): number {
    const seq = this.insertMessage({ ...m, expires_at: dead.keepUntil });
    this.exec(
      `UPDATE messages SET state = 'dead', reason = ?, last_status = ?, attempts = ?, dead_at = ? WHERE seq = ?`,
      dead.reason, dead.status, dead.attempts, dead.nowMs, seq,
    );
    this.index?.remove(seq);
    return seq;
  }

  /**
   * Puts a dead message back in the queue under a new id (the old one is kept as replay_of), so every
   * consumer's cursor stays valid and the gateway sees a fresh Idempotency-Key. Null when not dead.
   */
  replay(seq: number, expiresAt: number): number | null {
    const next = this.maxSeq + 1;
    const rows = this.exec(
      `INSERT INTO messages (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type, headers, request, attempts, replay_of, lane)
       SELECT ?, kind, subpath, content_type, body, size, received_at, ?, sender, msg_id, env_type, headers, request, attempts, seq, lane
       FROM messages WHERE seq = ? AND state = 'dead' RETURNING seq, lane, received_at`,
      next, expiresAt, seq,
    );
    const row = rows[0];
    if (!row) return null;
    this.maxSeq = next;
    this.exec(`DELETE FROM messages WHERE seq = ?`, seq);
    this.index?.add(next, row.lane === null ? this.fillLane(next) : String(row.lane), Number(row.received_at));
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
    const [held, heldParams] = inFlightSql(inFlight);
    const rows = this.exec(
      `DELETE FROM messages WHERE seq = ? AND NOT (state = 'queued' AND ${held}) RETURNING seq, ${STORED_BYTES} AS bytes, state`,
      seq, ...heldParams,
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
    const [held, heldParams] = inFlightSql(inFlight);
    const rows = this.exec(
      `UPDATE messages SET state = 'dead', dead_at = ?, expires_at = ?,
         reason = 'ttl_expired: not delivered before its TTL ended (was the local agent offline?); replay it to deliver it now'
       WHERE state = 'queued' AND expires_at <= ? AND NOT ${held}
       RETURNING seq, sender, msg_id, env_type`,
      nowMs, keepDeadUntil, nowMs, ...heldParams,
    );
    for (const row of rows) this.index?.remove(Number(row.seq));
    return rows as unknown as Pick<StoredMessage, "seq" | "sender" | "msg_id" | "env_type">[];
  }

  private forget(deleted: Row[]): void {
    if (deleted.length === 0) return;
    this.count -= deleted.length;
    for (const row of deleted) {
      this.bytes -= Number(row.bytes);
      this.index?.remove(Number(row.seq));
    }
    // Ids must never be reused, or a consumer's resume cursor (and the agent's delivery journal) would
    // skip new messages. SQLite picks max(rowid)+1, so deleting the newest row would hand its id out
    // again after a restart: remember the floor whenever the newest row goes.
    if (deleted.some((row) => Number(row.seq) === this.maxSeq)) {
      this.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('seq_floor', ?)`, String(this.maxSeq));
    }
  }
}
