// What every intake step is handed (the inbox builds one per request: inbox.ts), the answer a sender
// gets, and a step's early answer for a repeat. Types only; the steps are verify-step.ts,
// admit-step.ts, keep-step.ts and ack-step.ts, composed by each caller (intake.ts, hub/hub-pull.ts,
// hub/webhook-era/hub-bridge.ts, sources/source-intake.ts, sibling-receipts.ts). Covered through
// them by test/worker/envelopes.test.ts and test/worker/receipts.test.ts.
import type { Envelope } from "../../protocol/index.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { ResolvedKey } from "./key-resolver.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import type { Signer } from "./receipts.ts";
import type { FiledReceipt } from "../outbox/receipt-filing.ts";
import type { Filing } from "../outbox/outbox-store.ts";

/** The acks owed to sibling inboxes (sibling-receipts.ts's OwedSiblingAcks): what intake asks of them. */
export interface OwedAcks {
  /** Whether this ack goes over now or joins the owed ones. */
  route(nowMs: number, stored: boolean): "now" | "owed";
  /** The seq every owed ack up to which was handed over, written into each new dedup record. */
  cursor(): number | null;
  owe(seq: number, target: string, ack: Envelope): void;
  /** Makes sure the owed acks are handed over once the burst goes quiet. */
  schedule(nowMs: number): Promise<void>;
}

export interface IntakeContext {
  config: InboxConfig;
  store: InboxStore;
  rates: RateLimiter;
  nowMs: number;
  resolveKey(agentId: string, keyId: string): Promise<ResolvedKey>;
  signer(): Promise<Signer>;
  /** Called after a message is stored: schedules its expiry and wakes consumers. */
  stored(seq: number, expiresAtMs: number): Promise<void>;
  /** Hands a receipt to a sibling inbox on this relay now (retried from the alarm on failure). */
  sendToSibling(agentId: string, receipt: Envelope): Promise<void>;
  /** Acks owed to sibling inboxes, handed over together (sibling-receipts.ts). */
  owedAcks: OwedAcks;
  /** Files a receipt against the outbox record it answers (outbox/outbox-store.ts): whether it matched, and whether it is still delivered. */
  outbox: { file(receipt: FiledReceipt, nowMs: number): Filing };
  /** Queues a receipt for POST {hub}/hub/receipt (not before `afterMs` from now), retried until `expiresAtMs`. */
  sendToHub(receipt: Envelope, expiresAtMs: number, afterMs: number): Promise<void>;
}

export interface Answer {
  queued: true;
  id: number;
  ack?: Envelope;
  duplicate?: true;
  /** A hub body held until the hub's history says whether it is a second message or a resend (webhook-era/hub-bridge.ts). */
  held?: true;
}

/** A step found the message is one the inbox has: it is answered as the first time, and intake stops. */
export interface Repeat {
  repeat: Answer;
}

export const isRepeat = (value: object): value is Repeat => "repeat" in value;
