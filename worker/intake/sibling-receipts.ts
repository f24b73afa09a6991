// Receipts between inboxes of this relay: the ack (or TTL_EXPIRED error) an inbox signs for a sender
// that has an inbox here goes into that sender's inbox. A call to another Durable Object costs far more
// than the rows it writes (on local workerd one call that writes a row ≈ 0.3 ms, most of it the
// callee's commit; on Cloudflare a billed request and a round trip to another machine), so:
// - a lone ack is handed over at once, before the 202, as it always was;
// - acks that come closer together than ACK_BATCH_WINDOW_MS are *owed*: the message's dedup record
//   (written anyway, so no extra row) marks its ack owed, and once the burst goes quiet (at the latest
//   a window after the first) one call per sender inbox hands over every ack owed to it, in order.
//   The callee files each under its (from, msg_id), so one handed over twice is stored once.
// Each new dedup record also carries the cursor (every owed ack of a message up to it was handed
// over), so after an eviction the object finds what it still owes with one query and the alarm, set
// whenever something is owed, hands it over. Used by inbox.ts and housekeeping.ts; covered by
// test/worker/receipts.test.ts, test/worker/sibling-acks.test.ts and test/worker/outbox.test.ts.
import { MIN_DEDUP_RETENTION_SEC, utf8 } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { hasRoom } from "./admit-step.ts";
import { answerFromRecord } from "./answers.ts";
import type { IntakeContext, OwedAcks } from "./intake-context.ts";
import { envelopeFingerprint } from "./verify-step.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { NewReceipt } from "../storage/stored-message.ts";
import type { FiledReceipt } from "../outbox/receipt-filing.ts";

export type SiblingResult = "stored" | "no_inbox" | "full";

/** A receipt as it travels between inboxes: its JSON (stored as is) and what the receiver files it under. */
export interface SiblingReceipt {
  json: string;
  from: string;
  msg_id: string;
  type: string;
  ttl_sec: number;
  fingerprint: string;
}

/** Acks closer together than this are owed and handed over together, at the latest this long after the first. */
export const ACK_BATCH_WINDOW_MS = 250;
/** …or as soon as no ack was owed for this long (the burst is over). */
const ACK_QUIET_MS = 10;
/** While acks are owed the alarm is set at most this far ahead: it hands them over after an eviction. */
const OWED_ALARM_MS = 10_000;
/** At most this many receipts per call (bounds one call's size and the callee's one transaction). */
const MAX_BATCH = 64;
/** Receipts stay at least this long in the sender's inbox, even with ttl_sec 0. */
const MIN_RECEIPT_TTL_SEC = 60;

export async function siblingReceipt(receipt: Envelope): Promise<SiblingReceipt> {
  return {
    json: JSON.stringify(receipt),
    from: receipt.from,
    msg_id: receipt.msg_id,
    type: receipt.type,
    ttl_sec: receipt.ttl_sec,
    fingerprint: await envelopeFingerprint(receipt),
  };
}

interface Waiting {
  receipt: SiblingReceipt;
  done: (result: SiblingResult | "error") => void;
}

/** One call per target at a time, in order; receipts that queue up meanwhile go together in the next. */
export class SiblingCourier {
  private readonly lanes = new Map<string, Waiting[]>();
  private readonly call: (target: string, batch: SiblingReceipt[]) => Promise<SiblingResult[]>;

  constructor(call: (target: string, batch: SiblingReceipt[]) => Promise<SiblingResult[]>) {
    this.call = call;
  }

  get busy(): boolean {
    return this.lanes.size > 0;
  }

  /** Resolves, in the receipts' order, once the target answered for each ("error" when the call failed). */
  send(target: string, receipts: readonly SiblingReceipt[]): Promise<(SiblingResult | "error")[]> {
    const results = receipts.map(
      (receipt) =>
        new Promise<SiblingResult | "error">((done) => {
          const lane = this.lanes.get(target);
          if (lane) return void lane.push({ receipt, done });
          const fresh: Waiting[] = [{ receipt, done }];
          this.lanes.set(target, fresh);
          // Runs until the lane is empty; it catches every failure, so nothing is left unhandled.
          void this.drain(target, fresh);
        }),
    );
    return Promise.all(results);
  }

  private async drain(target: string, lane: Waiting[]): Promise<void> {
    // The first call waits a microtask so that receipts sent together go in it together.
    await Promise.resolve();
    while (lane.length > 0) {
      const batch = lane.splice(0, MAX_BATCH);
      let results: (SiblingResult | "error")[];
      try {
        results = await this.call(target, batch.map((w) => w.receipt));
      } catch (err) {
        console.error(`SiblingCourier: ${target}:`, err);
        results = [];
      }
      batch.forEach((w, i) => w.done(results[i] ?? "error"));
    }
    this.lanes.delete(target);
  }
}

/** What the owed acks are built with: the inbox's store and courier, and its alarm. */
export interface OwedAckParts {
  store: InboxStore;
  /** The inbox's agent id (null before a claim). */
  agentId: () => string | null;
  courier: SiblingCourier;
  /** A receipt the target could not take (full, or the call failed): the alarm retries it. */
  retryLater: (target: string, receipt: SiblingReceipt) => Promise<void>;
  ensureAlarm: (atMs: number) => Promise<void>;
}

/** The ack itself: owed from intake's synchronous part, made a SiblingReceipt (its fingerprint hashed) when handed over. */
interface Owed {
  seq: number;
  target: string;
  ack: Envelope;
  sending: boolean;
}

/** The receiving inbox's side: which acks travel now and which are owed, and handing over what is owed. */
export class OwedSiblingAcks implements OwedAcks {
  private readonly parts: OwedAckParts;
  /** Unresolved owed acks, oldest message first (those in a call on its way included). */
  private readonly owed: Owed[] = [];
  /** Every owed ack of a message up to this seq was handed over; null until this life looked (recover). */
  private resolvedThrough: number | null = null;
  /** The newest seq when this object started: owed acks up to it belong to a previous life. */
  private readonly bornAfter: number;
  private lastAckAt = Number.NEGATIVE_INFINITY;
  private lastOwedAt = 0;
  private windowTimer: ReturnType<typeof setTimeout> | null = null;
  private quietTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(parts: OwedAckParts) {
    this.parts = parts;
    this.bornAfter = parts.store.queueStats().lastSeq;
  }

  /** How the ack of a new message travels: "now" (before the 202) or "owed" (within the window). */
  route(nowMs: number, stored: boolean): "now" | "owed" {
    this.recover();
    const close = nowMs - this.lastAckAt < ACK_BATCH_WINDOW_MS;
    this.lastAckAt = nowMs;
    return stored && (close || this.owed.length > 0 || this.parts.courier.busy) ? "owed" : "now";
  }

  /** For the dedup record of each new message: the cursor a later life recovers from. */
  cursor(): number | null {
    return this.owed.length > 0 ? this.owed[0]!.seq - 1 : this.resolvedThrough;
  }

  /** Called right after the message `seq` and its dedup record (marked owed) were written. */
  owe(seq: number, target: string, ack: Envelope): void {
    this.owed.push({ seq, target, ack, sending: false });
  }

  /** Arms the timers that hand over what is owed, and the alarm as the backstop that survives an eviction. */
  async schedule(nowMs: number): Promise<void> {
    // Timers of at most one window, only while acks are owed: they delay hibernation by no more than that.
    this.lastOwedAt = nowMs;
    this.windowTimer ??= setTimeout(() => this.flushNow(), ACK_BATCH_WINDOW_MS);
    this.quietTimer ??= setTimeout(() => this.flushWhenQuiet(), ACK_QUIET_MS);
    await this.parts.ensureAlarm(nowMs + OWED_ALARM_MS);
  }

  /** One timer per quiet period, not one per ack: it looks again until nothing was owed for ACK_QUIET_MS. */
  private flushWhenQuiet(): void {
    const quietFor = Date.now() - this.lastOwedAt;
    if (quietFor >= ACK_QUIET_MS) return this.flushNow();
    this.quietTimer = setTimeout(() => this.flushWhenQuiet(), ACK_QUIET_MS - quietFor);
  }

  private flushNow(): void {
    for (const timer of [this.windowTimer, this.quietTimer]) if (timer !== null) clearTimeout(timer);
    this.windowTimer = this.quietTimer = null;
    this.flush().catch((err: unknown) => console.error("OwedSiblingAcks.flush:", err));
  }

  /** Hands over every owed ack that is not on its way yet: one call per target, in order. */
  async flush(): Promise<void> {
    this.recover();
    const batch = this.owed.filter((o) => !o.sending);
    if (batch.length === 0) return;
    const byTarget = new Map<string, Owed[]>();
    for (const item of batch) {
      item.sending = true;
      const items = byTarget.get(item.target);
      if (items) items.push(item);
      else byTarget.set(item.target, [item]);
    }
    await Promise.all(
      [...byTarget].map(async ([target, items]) => {
        const receipts = await Promise.all(items.map((i) => siblingReceipt(i.ack)));
        const results = await this.parts.courier.send(target, receipts);
        for (const [i, result] of results.entries()) {
          if (result === "full" || result === "error") await this.parts.retryLater(target, receipts[i]!);
        }
      }),
    );
    const done = new Set(batch);
    this.owed.splice(0, this.owed.length, ...this.owed.filter((o) => !done.has(o)));
    this.resolvedThrough = Math.max(this.resolvedThrough ?? 0, batch[batch.length - 1]!.seq);
    if (this.owed.some((o) => !o.sending)) await this.schedule(Date.now());
  }

  /** Once per life: the acks a previous life of this object still owed, found from the dedup records. */
  private recover(): void {
    if (this.resolvedThrough !== null) return;
    const { cursor, owed } = this.parts.store.owedAcks(this.bornAfter);
    this.resolvedThrough = cursor;
    const inboxId = this.parts.agentId();
    const earlier = owed.flatMap((record): Owed[] => {
      const ack = inboxId ? answerFromRecord(record.answer, inboxId, record).ack : undefined;
      return ack ? [{ seq: record.seq, target: record.sender, ack, sending: false }] : [];
    });
    this.owed.unshift(...earlier);
  }
}

/** What filing reads of a receipt from a sibling: its JSON is the envelope the sibling signed. */
function filedReceipt(receipt: SiblingReceipt): FiledReceipt {
  const envelope = JSON.parse(receipt.json) as Envelope;
  return { from: receipt.from, type: receipt.type, msg_id: receipt.msg_id, reply_to: envelope.reply_to ?? null, payload: envelope.payload };
}

/**
 * The receiving side: files each receipt that answers an outbox record (outbox/receipt-filing.ts), and
 * stores the receipts with their dedup records in three statements for the whole batch (one look-up, two
 * inserts); a repeat is answered "stored" and not stored again, one that does not fit "full". One alarm
 * check and one wake-up for the batch.
 */
export async function storeSiblingReceipts(ctx: IntakeContext, receipts: readonly SiblingReceipt[]): Promise<SiblingResult[]> {
  const { store, nowMs } = ctx;
  const known = store.knownDeliveries(receipts.map((r) => [r.from, r.msg_id] as const));
  const fresh: NewReceipt[] = [];
  let room = { count: 0, bytes: 0 };
  const results = receipts.map((receipt): SiblingResult => {
    const key = `${receipt.from} ${receipt.msg_id}`;
    if (known.has(key)) return "stored";
    // An ack answering one of the agent's outbox records is filed there, and stored only when the inbox asks for acks.
    if (ctx.outbox.file(filedReceipt(receipt), nowMs).deliver === false) return "stored";
    const size = utf8(receipt.json).byteLength;
    if (!hasRoom(ctx, room.count + 1, room.bytes + size)) return "full";
    room = { count: room.count + 1, bytes: room.bytes + size };
    known.add(key);
    const ttlSec = Math.max(receipt.ttl_sec, MIN_RECEIPT_TTL_SEC);
    fresh.push({
      json: receipt.json, size, sender: receipt.from, msg_id: receipt.msg_id, env_type: receipt.type, fingerprint: receipt.fingerprint,
      received_at: nowMs, expires_at: nowMs + ttlSec * 1000, dedup_until: nowMs + Math.max(ttlSec, MIN_DEDUP_RETENTION_SEC) * 1000,
    });
    return "stored";
  });
  store.insertReceipts(fresh);
  if (fresh.length > 0) await ctx.stored(0, Math.min(...fresh.map((r) => r.expires_at)));
  return results;
}
