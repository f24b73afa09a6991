// The queue's core, under InboxStore (inbox-store.ts): the id counter, the queue's count and bytes, each
// lane's queued ids in memory (lane-index.ts) and the kept history (history-store.ts), with the writes that
// keep them in step — storing a message, reading one by id, forgetting deleted rows. Split from
// inbox-store.ts by size only. Covered by test/worker/storage.test.ts and test/worker/history.test.ts.
import { INBOX_DEFAULTS } from "../../protocol/index.ts";
import type { InboxConfig } from "../inbox-config.ts";
import { HistoryStore } from "./history-store.ts";
import { InboxRecords } from "./inbox-records.ts";
import type { Row } from "./inbox-records.ts";
import { LaneIndex } from "./lane-index.ts";
import { messageLane } from "./message-lane.ts";
import type { NewMessage, StoredMessage } from "./stored-message.ts";

export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  // A request's body spans its buffer: no copy (SQLite copies the blob as it binds it).
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** What a row occupies against the inbox's max_queue_bytes: its body and a source event's kept request. */
export const STORED_BYTES = `size + coalesce(length(CAST(request AS BLOB)), 0)`;

/** The bytes a message to be stored counts against the inbox's capacity (STORED_BYTES before it is a row). */
export function storedBytes(m: Pick<NewMessage, "body" | "request">): number {
  return m.body.byteLength + (m.request ? new TextEncoder().encode(m.request).byteLength : 0);
}

export class QueueTable extends InboxRecords {
  protected maxSeq = 0;
  protected count = 0;
  protected bytes = 0;
  /** Built when first needed (lanes()), then kept in step by every write here. */
  protected index: LaneIndex | null = null;
  /** Kept messages (history-store.ts); the delivery path never reads it. */
  readonly history: HistoryStore;
  /** limits.retention_sec as ms, from the config saved here (0: an ack deletes, as before history). */
  retentionMs: number = INBOX_DEFAULTS.retentionSec * 1000;

  /** `periodOpened`: a history period's table was made; the alarm must run when that period ends (history-store.ts). */
  constructor(sql: SqlStorage, periodOpened?: (endMs: number) => void) {
    super(sql);
    this.history = new HistoryStore((query, ...params) => this.exec(query, ...params), periodOpened);
    this.noteRetention(this.loadConfig());
    const stats = this.one(`SELECT count(*) AS n, coalesce(sum(${STORED_BYTES}), 0) AS b, coalesce(max(seq), 0) AS m FROM messages`);
    this.count = Number(stats.n);
    this.bytes = Number(stats.b);
    const floor = this.sql.exec(`SELECT value FROM meta WHERE key = 'seq_floor'`).toArray()[0];
    this.maxSeq = Math.max(Number(stats.m), Number(floor?.value ?? 0), this.history.newestSeq());
  }

  override saveConfig(config: InboxConfig): void {
    super.saveConfig(config);
    this.noteRetention(config);
  }

  private noteRetention(config: InboxConfig | null): void {
    this.retentionMs = (config?.limits.retention_sec ?? INBOX_DEFAULTS.retentionSec) * 1000;
  }

  /** Before a day table is dropped: the id floor, so the dropped ids are never handed out again. */
  keepFloor(): void {
    this.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('seq_floor', ?)`, String(this.maxSeq));
  }

  /**
   * Deletes a kept message (a person's drop): its state, or null when it is not kept. When it held the
   * newest id, the id floor is written first: history no longer holds that id, and after a restart it
   * would be handed out again (a consumer's cursor or the agent's journal would then skip the new message).
   */
  removeKept(seq: number): "delivered" | "dead" | null {
    if (seq === this.maxSeq && this.history.tableHolding(seq) !== null) this.keepFloor();
    return this.history.remove(seq);
  }

  /** Everything stored (queued and dead: both count against the inbox's capacity). */
  queueStats(): { count: number; bytes: number; lastSeq: number } {
    return { count: this.count, bytes: this.bytes, lastSeq: this.maxSeq };
  }

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
  protected fillLane(seq: number): string {
    const row = this.find(seq)!;
    const lane = messageLane({ ...row, body: new Uint8Array(row.body) });
    this.exec(`UPDATE messages SET lane = ? WHERE seq = ?`, lane, seq);
    return lane;
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

  find(seq: number): StoredMessage | null {
    return (this.exec(`SELECT * FROM messages WHERE seq = ?`, seq)[0] as unknown as StoredMessage | undefined) ?? null;
  }

  /** `kept`: the rows went to history, which holds the newest id from now on (history-store.ts keeps the floor when it drops a day). */
  protected forget(deleted: Row[], kept = false): void {
    if (deleted.length === 0) return;
    this.count -= deleted.length;
    for (const row of deleted) {
      this.bytes -= Number(row.bytes);
      this.index?.remove(Number(row.seq));
    }
    // Ids must never be reused, or a consumer's resume cursor (and the agent's delivery journal) would
    // skip new messages. SQLite picks max(rowid)+1, so deleting the newest row would hand its id out
    // again after a restart: remember the floor whenever the newest row goes.
    if (!kept && deleted.some((row) => Number(row.seq) === this.maxSeq)) {
      this.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('seq_floor', ?)`, String(this.maxSeq));
    }
  }
}
