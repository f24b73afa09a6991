// Intake's keeping: the record step (the dedup record of (sender, msg_id), which answers repeats) and
// the store step (the queue row). They are two rows today, written record first with the id the row is
// about to get; a history row that is both would replace `recordStep` and `storeStep` here and leave
// the callers as they are. A receipt answering one of the agent's outbox records is filed against it
// here (outbox/receipt-filing.ts), for every way an envelope comes in (posted, a hook body, pulled,
// bridged), once its signature is verified (a record the hub vouches for files nothing): a filed ack is
// recorded only (no queue row, id 0) unless the inbox asks for acks to be delivered. Used by the intake
// flows and sources/source-intake.ts; covered by test/worker/envelopes.test.ts, test/worker/storage.test.ts,
// test/worker/sibling-acks.test.ts and test/worker/outbox.test.ts.
import { MIN_DEDUP_RETENTION_SEC } from "../../protocol/index.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { NewMessage } from "../storage/stored-message.ts";
import { isReceipt } from "../outbox/receipt-filing.ts";
import type { AckPlan } from "./ack-step.ts";
import type { Admitted } from "./admit-step.ts";
import { keptAnswer, repeatOf } from "./answers.ts";
import type { Answer, IntakeContext, Repeat } from "./intake-context.ts";
import type { Checked } from "./verify-step.ts";

/** What the record and store steps write for one accepted message. */
export interface Keeping {
  sender: string;
  /** The sender's msg_id, or what else identifies a delivery (a source's delivery id: source-intake.ts). */
  msgId: string;
  fingerprint: string;
  /** The sender's answer, kept so a repeat gets it again. */
  answer: Answer;
  /** A repeat is recognised until then. */
  recordUntilMs: number;
  /** The message's id when its ack is owed to a sibling inbox, noted in the record (sibling-receipts.ts). */
  owedAckSeq: number | null;
  /** The queue row; null when the message is recorded only (its webhook body is stored already). */
  message: NewMessage | null;
}

/** The dedup record, unless (sender, msg_id) has one: false then (a repeat; nothing written). */
export function recordStep(store: InboxStore, keeping: Keeping, acksThrough: number | null): boolean {
  return store.recordDelivery(keeping.sender, keeping.msgId, keeping.fingerprint, keptAnswer(keeping.answer), keeping.recordUntilMs, keeping.owedAckSeq, acksThrough);
}

/** The queue row; returns its id. */
export function storeStep(store: InboxStore, message: NewMessage): number {
  return store.insertMessage(message);
}

/**
 * Keeps an accepted envelope: its record (kept max(TTL, 24 h), so a late retry is still recognised) and,
 * unless `offered` is null or a filed ack that is not delivered (answered with id 0), its row; notes an
 * owed ack, schedules the expiry and wakes consumers. A record already there means a repeat: answered as
 * the first time, uncounted.
 */
export async function keepStep(ctx: IntakeContext, checked: Checked, admitted: Admitted, offered: NewMessage | null, ttlSec: number, plan: AckPlan | null): Promise<Answer | Repeat> {
  const { envelope } = checked;
  // Filing is idempotent (the same receipt again changes nothing): a repeat filed before it is found as one changes nothing.
  // Only a verified signature names the receiver: an unsigned record the hub vouches for says "from" whoever it likes.
  const filing = checked.signed && isReceipt(envelope) ? ctx.outbox.file(envelope, ctx.nowMs) : null;
  const message = filing?.deliver === false ? null : offered;
  const seq = message ? ctx.store.queueStats().lastSeq + 1 : 0;
  const ack = plan?.ack;
  const answer: Answer = ack ? { queued: true, id: seq, ack } : { queued: true, id: seq };
  const keeping: Keeping = {
    sender: envelope.from,
    msgId: envelope.msg_id,
    fingerprint: checked.fingerprint,
    answer,
    recordUntilMs: ctx.nowMs + Math.max(ttlSec, MIN_DEDUP_RETENTION_SEC) * 1000,
    owedAckSeq: plan?.sibling === "owed" && seq > 0 ? seq : null,
    message,
  };
  if (!recordStep(ctx.store, keeping, ctx.owedAcks.cursor())) {
    if (admitted.counted) ctx.rates.uncount(envelope.from);
    return repeatOf(ctx.store.findDuplicate(envelope.from, envelope.msg_id)!, ctx.config.agent_id, envelope);
  }
  if (message) storeStep(ctx.store, message);
  if (keeping.owedAckSeq !== null && ack) ctx.owedAcks.owe(keeping.owedAckSeq, envelope.from, ack);
  if (message) await ctx.stored(seq, message.expires_at);
  return answer;
}
