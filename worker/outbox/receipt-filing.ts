// Filing a receipt against the outbox record it answers: which receipts match a record, what each sets,
// and whether the receipt is still queued for the agent. Pure: the store reads the record and writes
// the change (outbox-store.ts); the ways in call fileReceipt (intake/keep-step.ts for posted, hook, pulled
// and bridged envelopes; intake/sibling-receipts.ts for receipts from sibling inboxes). Covered by
// test/worker/outbox.test.ts.
import { RECEIPT_TYPES } from "../../protocol/index.ts";
import type { AckDelivery, EnvelopeType, OutboxRecord, OutboxState } from "../../protocol/index.ts";

/** What filing needs of a receipt: who signed it, what it answers, its own id and, for an error, its payload. */
export interface FiledReceipt {
  from: string;
  type: string;
  reply_to: string | null;
  msg_id: string;
  payload?: Record<string, unknown>;
}

/** The columns a receipt changes. */
export interface RecordPatch {
  state: OutboxState;
  receipt_type: "ack" | "result" | "error";
  receipt_msg_id: string;
  receipt_at: number;
  error_code: string | null;
  error_message: string | null;
}

/** States an ack moves on from; after a result or an error receipt, an ack that comes late changes nothing. */
const ACK_MOVES: ReadonlySet<OutboxState> = new Set(["sending", "queued", "refused"]);
const ERROR_CODE_MAX = 64;
const ERROR_MESSAGE_MAX = 500;

export function isReceipt(envelope: { type: string; reply_to: string | null }): boolean {
  return RECEIPT_TYPES.has(envelope.type as EnvelopeType) && envelope.reply_to !== null;
}

/** An error receipt's payload.error as code and message (a bare string is a message); cut to bounded lengths. */
function errorOf(payload: Record<string, unknown> | undefined): { code: string; message: string } {
  const error = payload?.error;
  if (typeof error === "string") return { code: "error", message: error.slice(0, ERROR_MESSAGE_MAX) };
  const e = typeof error === "object" && error !== null ? (error as { code?: unknown; message?: unknown }) : {};
  return {
    code: typeof e.code === "string" && e.code !== "" ? e.code.slice(0, ERROR_CODE_MAX) : "error",
    message: typeof e.message === "string" ? e.message.slice(0, ERROR_MESSAGE_MAX) : "the receiver sent an error receipt without a message",
  };
}

/**
 * The change a receipt makes to the record it answers, or null when it changes nothing (the same receipt
 * again, or an ack after the record was answered). Only its receiver's receipts match a record: a receipt
 * signed by anyone else answers nothing here and is delivered as any message.
 */
export function receiptPatch(record: Pick<OutboxRecord, "to" | "state" | "receipt_msg_id">, receipt: FiledReceipt, nowMs: number): RecordPatch | null {
  if (record.receipt_msg_id === receipt.msg_id) return null;
  const base = { receipt_msg_id: receipt.msg_id, receipt_at: nowMs, error_code: null, error_message: null };
  if (receipt.type === "ack") return ACK_MOVES.has(record.state) ? { ...base, state: "acknowledged", receipt_type: "ack" } : null;
  if (receipt.type === "result") return { ...base, state: "answered", receipt_type: "result" };
  const error = errorOf(receipt.payload);
  return { ...base, state: "failed", receipt_type: "error", error_code: error.code, error_message: error.message };
}

/** Whether a receipt that matched a record is still queued for the agent: results and errors always; acks when the inbox asks. */
export function stillDelivered(receiptType: string, acks: AckDelivery): boolean {
  return receiptType !== "ack" || acks === "deliver";
}
