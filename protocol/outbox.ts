// The outbox (docs/protocol.md, "The outbox and receipt filing"): the sender's inbox keeps a record of each
// message its agent sends, and a receipt that answers one sets the record's state instead of waking the
// agent's model. The wire shapes of its owner routes (GET/POST /inbox/{id}/outbox…), shared by the relay
// (worker/outbox/) and the CLI (local-agent/relay/outbox.ts). Types and constants only; covered by
// test/worker/outbox.test.ts.

/**
 * sending: recorded, the post not answered yet. queued: the receiving inbox took it and no receipt came
 * (a message type that is never acked). refused: the post was refused or could not be made (error_*).
 * acknowledged: its ack came. answered: its result came (receipt_msg_id). failed: an error receipt came
 * (error_*: the payload's code and message, e.g. TTL_EXPIRED).
 */
export type OutboxState = "sending" | "queued" | "refused" | "acknowledged" | "answered" | "failed";

export const OUTBOX_STATES: readonly OutboxState[] = ["sending", "queued", "refused", "acknowledged", "answered", "failed"];

/** What an inbox does with an ack that answers one of its outbox records: file it only, or file it and deliver it too. */
export type AckDelivery = "record" | "deliver";

export const ACK_DELIVERIES: readonly AckDelivery[] = ["record", "deliver"];

export interface OutboxRecord {
  msg_id: string;
  to: string;
  /** The sent envelope's type (message, result, error, …). */
  type: string;
  /** What the sent envelope answered (a result's task), or null. */
  reply_to: string | null;
  /** The sent envelope's topic (a2a/0.2), or null. */
  topic: string | null;
  created_at: number;
  state: OutboxState;
  receipt_type: "ack" | "result" | "error" | null;
  /** The receipt's own msg_id (a result's, to look it up in the inbox). */
  receipt_msg_id: string | null;
  receipt_at: number | null;
  error_code: string | null;
  error_message: string | null;
}

/** POST /inbox/{id}/outbox: what the agent records before it posts the envelope. */
export interface OutboxRecordRequest {
  msg_id: string;
  to: string;
  type: string;
  reply_to: string | null;
  topic: string | null;
}

/** POST /inbox/{id}/outbox/{msg_id}/outcome: how the post went, when no receipt will say it. */
export type OutboxOutcome = { outcome: "queued" } | { outcome: "refused"; error: { code: string; message: string } };

/** GET /inbox/{id}/outbox: the newest records first, a page at a time (`before`: the `next_before` of the last page). */
export interface OutboxPage {
  records: OutboxRecord[];
  count: number;
  has_more: boolean;
  next_before: number | null;
  /** Every record the inbox keeps, and the setting for acks that answer them. */
  total: number;
  acks: AckDelivery;
}

/** PUT /inbox/{id}/outbox/settings. */
export interface OutboxSettings {
  acks: AckDelivery;
}
