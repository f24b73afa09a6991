// The answer a sender gets, as a dedup record keeps it (the ack by what varies: receipts.ts) and as a
// repeat gets it back. Used by the intake steps and sibling-receipts.ts (acks owed after an eviction);
// covered by test/worker/receipts.test.ts and test/worker/envelopes.test.ts.
import type { Envelope } from "../../protocol/index.ts";
import type { Answer, Repeat } from "./intake-context.ts";
import { ackFromKept, keptAck } from "./receipts.ts";
import type { KeptAck } from "./receipts.ts";

/** An answer as its dedup record keeps it. */
export function keptAnswer(answer: Answer): string {
  return JSON.stringify(answer.ack ? { queued: true, id: answer.id, kept_ack: keptAck(answer.ack) } : answer);
}

/** The first answer, from the dedup record of (sender, msg_id) in the inbox `inboxId`. */
export function answerFromRecord(json: string, inboxId: string, record: { sender: string; msg_id: string }): Answer {
  // Records written before schema 3 keep the whole ack.
  const { kept_ack: kept, ...answer } = JSON.parse(json) as Answer & { kept_ack?: KeptAck };
  return kept ? { ...answer, ack: ackFromKept(kept, inboxId, record) } : answer;
}

/** `envelope` is a repeat of the one `previous` recorded: the first answer, marked a duplicate. */
export function repeatOf(previous: { answer: string }, inboxId: string, envelope: Envelope): Repeat {
  return { repeat: { ...answerFromRecord(previous.answer, inboxId, { sender: envelope.from, msg_id: envelope.msg_id }), duplicate: true } };
}
