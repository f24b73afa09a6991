// The outbox's records in the inbox's SQLite (storage/schema.ts, version 9: outbox_records): one row per
// message the agent sent, written when the agent records it, changed by its post's outcome or by the
// receipts that answer it (receipt-filing.ts), read by the owner's listing (outbox-routes.ts). Bounded:
// OUTBOX_KEPT records (a new one past that deletes the oldest) for at most OUTBOX_RETENTION_MS. The
// setting for acks that answer a record is a row of `meta`. Built by inbox.ts; covered by
// test/worker/outbox.test.ts.
import { ACK_DELIVERIES } from "../../protocol/index.ts";
import type { AckDelivery, OutboxOutcome, OutboxRecord, OutboxRecordRequest, OutboxState } from "../../protocol/index.ts";
import { receiptPatch, stillDelivered } from "./receipt-filing.ts";
import type { FiledReceipt } from "./receipt-filing.ts";

/** Records kept at most; the oldest goes as a new one comes past it. */
export const OUTBOX_KEPT = 1000;
/** A record older than this is deleted the next time the agent records or lists. */
export const OUTBOX_RETENTION_MS = 7 * 24 * 3600_000;
/** The age sweep runs at most this often (each sweep reads every record once). */
const SWEEP_EVERY_MS = 3600_000;

const ACKS_KEY = "outbox_acks";

type Row = Record<string, SqlStorageValue>;

/** What filing a receipt found: whether it answered a record, and whether it is still queued for the agent. */
export interface Filing {
  matched: boolean;
  deliver: boolean;
}

function recordOf(row: Row): OutboxRecord {
  const text = (v: SqlStorageValue | undefined) => (v === null || v === undefined ? null : String(v));
  return {
    msg_id: String(row.msg_id),
    to: String(row.to_agent),
    type: String(row.type),
    reply_to: text(row.reply_to),
    topic: text(row.topic),
    created_at: Number(row.created_at),
    state: String(row.state) as OutboxState,
    receipt_type: text(row.receipt_type) as OutboxRecord["receipt_type"],
    receipt_msg_id: text(row.receipt_msg_id),
    receipt_at: row.receipt_at === null ? null : Number(row.receipt_at),
    error_code: text(row.error_code),
    error_message: text(row.error_message),
  };
}

export class OutboxBook {
  /** Rows this instance wrote (SQLite's count), for tests that count what filing costs. */
  rowsWritten = 0;
  private readonly sql: SqlStorage;
  private tally: { count: number; lastSeq: number } | null = null;
  private ackSetting: AckDelivery | null = null;
  private sweptAtMs = Number.NEGATIVE_INFINITY;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  private exec(query: string, ...params: SqlStorageValue[]): Row[] {
    const cursor = this.sql.exec(query, ...params);
    const rows = cursor.toArray();
    this.rowsWritten += cursor.rowsWritten;
    return rows;
  }

  private counts(): { count: number; lastSeq: number } {
    this.tally ??= (() => {
      const row = this.exec(`SELECT count(*) AS n, coalesce(max(seq), 0) AS last FROM outbox_records`)[0]!;
      return { count: Number(row.n), lastSeq: Number(row.last) };
    })();
    return this.tally;
  }

  /** Records a message about to be posted (state sending); false when its msg_id is recorded already (a repeat: unchanged). */
  record(request: OutboxRecordRequest, nowMs: number): boolean {
    this.sweep(nowMs);
    const tally = this.counts();
    const seq = tally.lastSeq + 1;
    const rows = this.exec(
      `INSERT INTO outbox_records (msg_id, seq, to_agent, type, reply_to, topic, created_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, 'sending')
       ON CONFLICT (msg_id) DO NOTHING RETURNING seq`,
      request.msg_id, seq, request.to, request.type, request.reply_to, request.topic, nowMs,
    );
    if (rows.length === 0) return false;
    tally.lastSeq = seq;
    tally.count += 1;
    if (tally.count > OUTBOX_KEPT) {
      tally.count -= this.exec(`DELETE FROM outbox_records WHERE seq <= ? RETURNING seq`, seq - OUTBOX_KEPT).length;
    }
    return true;
  }

  /** The post's outcome, when no receipt will tell it: changes a record still sending, nothing else. Null when there is no such record. */
  settle(msgId: string, outcome: OutboxOutcome): OutboxRecord | null {
    const [code, message] = outcome.outcome === "refused" ? [outcome.error.code, outcome.error.message] : [null, null];
    this.exec(
      `UPDATE outbox_records SET state = ?, error_code = ?, error_message = ? WHERE msg_id = ? AND state = 'sending'`,
      outcome.outcome, code, message, msgId,
    );
    return this.find(msgId);
  }

  find(msgId: string): OutboxRecord | null {
    const row = this.exec(`SELECT * FROM outbox_records WHERE msg_id = ?`, msgId)[0];
    return row ? recordOf(row) : null;
  }

  /**
   * Files a receipt against the record it answers (looked up by primary key; nothing read while the
   * outbox is empty). A receipt answering no record of its signer's is unmatched: delivered as ever.
   */
  file(receipt: FiledReceipt, nowMs: number): Filing {
    if (receipt.reply_to === null || this.counts().count === 0) return { matched: false, deliver: true };
    const record = this.find(receipt.reply_to);
    if (!record || record.to !== receipt.from) return { matched: false, deliver: true };
    const patch = receiptPatch(record, receipt, nowMs);
    if (patch) {
      this.exec(
        `UPDATE outbox_records SET state = ?, receipt_type = ?, receipt_msg_id = ?, receipt_at = ?, error_code = ?, error_message = ? WHERE msg_id = ?`,
        patch.state, patch.receipt_type, patch.receipt_msg_id, patch.receipt_at, patch.error_code, patch.error_message, record.msg_id,
      );
    }
    return { matched: true, deliver: stillDelivered(receipt.type, this.acks()) };
  }

  /** The newest records first, below the seq `before` (0: from the newest); one more than `limit` tells whether there is more. */
  list(before: number, limit: number, nowMs: number): { records: OutboxRecord[]; hasMore: boolean; nextBefore: number | null; total: number } {
    this.sweep(nowMs);
    const rows = this.exec(`SELECT * FROM outbox_records WHERE ? = 0 OR seq < ? ORDER BY seq DESC LIMIT ?`, before, before, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { records: page.map(recordOf), hasMore: rows.length > limit, nextBefore: rows.length > limit && last ? Number(last.seq) : null, total: this.counts().count };
  }

  acks(): AckDelivery {
    if (this.ackSetting) return this.ackSetting;
    const value = this.exec(`SELECT value FROM meta WHERE key = ?`, ACKS_KEY)[0]?.value;
    this.ackSetting = ACK_DELIVERIES.includes(value as AckDelivery) ? (value as AckDelivery) : "record";
    return this.ackSetting;
  }

  setAcks(acks: AckDelivery): void {
    this.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`, ACKS_KEY, acks);
    this.ackSetting = acks;
  }

  /** Deletes records past the retention, at most once per SWEEP_EVERY_MS. */
  private sweep(nowMs: number): void {
    if (nowMs - this.sweptAtMs < SWEEP_EVERY_MS) return;
    this.sweptAtMs = nowMs;
    const gone = this.exec(`DELETE FROM outbox_records WHERE created_at < ? RETURNING seq`, nowMs - OUTBOX_RETENTION_MS).length;
    if (this.tally) this.tally.count -= gone;
  }
}
