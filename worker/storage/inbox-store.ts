// All SQLite access of one inbox. The Durable Object (inbox.ts) decides; this module stores: the
// queue here, each lane's queued ids in memory (lane-index.ts, kept in step by every write
// below), the config and the records beside it (dedup, nonces, outbox, hub state) and the row counting in
// inbox-records.ts. What the connected agent holds (`InFlight`, in-flight.ts) is an older agent's range or
// a lanes agent's id set. Covered by test/worker/storage.test.ts, test/worker/queue.test.ts and
// test/worker/websocket-lanes.test.ts.
import { inFlightSql, seqInFlightSql } from "./in-flight.ts";
import type { InFlight } from "./in-flight.ts";
import type { Row } from "./inbox-records.ts";
import { QueueTable, STORED_BYTES, toArrayBuffer } from "./queue-table.ts";
import type { DeadLetter, MessageMeta, NewMessage, NewReceipt, StoredMessage } from "./stored-message.ts";
import { messageLane } from "./message-lane.ts";
import { sourceLane } from "../../protocol/index.ts";
import type { LiveLogEntry } from "../../protocol/index.ts";
import { scanHistory } from "./history-scan.ts";
import type { HistoryQuery, HistoryScan } from "./history-scan.ts";

export { storedBytes } from "./queue-table.ts";

export class InboxStore extends QueueTable {
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


  /**
   * Stores receipts handed over by sibling inboxes with their dedup records: one statement for the
   * messages and one per dedup day table (the rows travel as one JSON parameter; SQLite allows 100 bound
   * parameters a statement).
   * The caller has left out those already recorded (knownDeliveries) and checked the capacity.
   */
  insertReceipts(receipts: readonly NewReceipt[]): void {
    if (receipts.length === 0) return;
    const first = this.maxSeq + 1;
    this.recordDeliveries(receipts.map((r, i) => [r.sender, r.msg_id, r.fingerprint, JSON.stringify({ queued: true, id: first + i }), r.dedup_until] as const));
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
  acknowledge(range: { id: number; inFlight: InFlight } | { upTo: number }, nowMs = Date.now()): number {
    const [where, params]: [string, SqlStorageValue[]] =
      "id" in range
        ? ((([held, heldParams]) => [`seq = ? AND state = 'queued' AND ${held}`, [range.id, ...heldParams]])(seqInFlightSql(range.inFlight, range.id)) as [string, SqlStorageValue[]])
        : [`seq <= ? AND state = 'queued' AND restored = 0`, [range.upTo]];
    // Kept: copied to today's history table, then deleted here, with no await between (one transaction).
    const kept = this.retentionMs > 0;
    if (kept) this.history.copyFromQueue(this.history.period.keyOf(nowMs), where, params, nowMs);
    const rows = this.exec(`DELETE FROM messages WHERE ${where} RETURNING seq, ${STORED_BYTES} AS bytes`, ...params);
    if (kept) this.history.added(this.history.period.keyOf(nowMs), rows.length);
    this.forget(rows, kept);
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
    this.endShelf(nowMs);
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

  /**
   * Dead messages past the shelf's TTL leave the queue: into the history table of the day they died
   * while that day is inside the retention window (so a dead message is kept max(dead TTL, retention)),
   * deleted otherwise. The same rows are copied and deleted with no await between (one transaction).
   */
  private endShelf(nowMs: number): void {
    const due = `state = 'dead' AND expires_at <= ?`;
    if (this.retentionMs > 0) {
      const { period } = this.history;
      const days = new Set(this.exec(`SELECT dead_at FROM messages WHERE ${due}`, nowMs).map((row) => period.keyOf(Number(row.dead_at ?? nowMs))));
      for (const day of days) {
        const start = period.startMs(day);
        if (start + period.ms + this.retentionMs <= nowMs) continue;
        this.history.copyFromQueue(day, `${due} AND coalesce(dead_at, ?) >= ? AND coalesce(dead_at, ?) < ?`, [nowMs, nowMs, start, nowMs, start + period.ms], null);
        this.history.added(day, null);
      }
    }
    this.forget(this.exec(`DELETE FROM messages WHERE ${due} RETURNING seq, ${STORED_BYTES} AS bytes`, nowMs));
  }


  // --- history (history-store.ts, history-scan.ts): the owner's routes only ----------------------

  /** A page of everything stored, queue and history, in id order (bounded: history-scan.ts). */
  historyPage(q: HistoryQuery): HistoryScan {
    return scanHistory((query, ...params) => this.exec(query, ...params), this.history.tables(), q);
  }

  /** This storage's name in history cursors (schema 10): a new storage has a new one. */
  epoch(): string {
    return this.readMeta("epoch") ?? "0";
  }

  /** The lowest id stored anywhere, queue or history (one row read a table), or null. */
  oldestSeq(): number | null {
    const queued = this.exec(`SELECT min(seq) AS m FROM messages`)[0]!.m;
    const kept = this.history.oldest()?.seq ?? null;
    const ids = [queued === null ? null : Number(queued), kept].filter((n): n is number => n !== null);
    return ids.length === 0 ? null : Math.min(...ids);
  }

  /**
   * A kept message queued again under a new id (replay_of names it), as it came in: the kept one stays
   * where it is. Null when it is not kept.
   */
  replayKept(seq: number, expiresAt: number): number | null {
    const table = this.history.tableHolding(seq);
    if (table === null) return null;
    const next = this.maxSeq + 1;
    const row = this.exec(
      `INSERT INTO messages (seq, kind, subpath, content_type, body, size, received_at, expires_at, sender, msg_id, env_type, headers, request, replay_of, lane)
       SELECT ?, kind, subpath, content_type, body, size, received_at, ?, sender, msg_id, env_type, headers, request, seq, lane FROM ${table} WHERE seq = ?
       RETURNING lane, received_at, ${STORED_BYTES} AS bytes`,
      next, expiresAt, seq,
    )[0];
    if (!row) return null;
    this.maxSeq = next;
    this.count += 1;
    this.bytes += Number(row.bytes);
    this.index?.add(next, row.lane === null ? this.fillLane(next) : String(row.lane), Number(row.received_at));
    return next;
  }

  /** A live request answered or failed at once goes into history under the next id (history-store.ts keepLive); none with retention 0. */
  keepLive(entry: LiveLogEntry): void {
    if (this.retentionMs === 0 || entry.outcome === "held" || entry.outcome === "late") return;
    const seq = this.maxSeq + 1;
    const sender = entry.source === "a2a" ? "a2a" : `source:${entry.source}`;
    this.history.keepLive(seq, entry, sender, entry.source === "a2a" ? "a2a" : sourceLane(entry.source));
    this.maxSeq = seq;
  }
}
