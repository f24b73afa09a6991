// The shapes of an inbox's stored messages: a row of the queue, what intake and sibling receipts
// hand in to store, a listing's row and a dead letter's reason (what the connected agent holds:
// in-flight.ts). Types only; used by inbox-store.ts and the modules that read or write messages through it.

export interface StoredMessage {
  seq: number;
  kind: "hook" | "envelope";
  subpath: string | null;
  content_type: string;
  body: ArrayBuffer;
  size: number;
  received_at: number;
  expires_at: number;
  sender: string | null;
  msg_id: string | null;
  env_type: string | null;
  state: "queued" | "dead";
  attempts: number;
  reason: string | null;
  last_status: number | null;
  dead_at: number | null;
  replay_of: number | null;
  /** A source event's headers of interest as JSON (protocol/sources.ts); null otherwise. */
  headers: string | null;
  /** A source event's request (protocol/forward.ts StoredRequest) as JSON; null otherwise, or stored before schema 5. */
  request: string | null;
  /** Its lane (protocol/lanes.ts, message-lane.ts); null when stored before schema 7 and not yet computed. */
  lane: string | null;
  /** 1 when an older agent had set it aside and a lanes agent's connection put it back (schema 7). */
  restored: 0 | 1;
}

export type NewMessage = Pick<StoredMessage, "kind" | "subpath" | "content_type" | "received_at" | "expires_at" | "sender" | "msg_id" | "env_type"> & {
  body: Uint8Array;
  headers?: string | null;
  request?: string | null;
  /** Its lane when intake has it already (a posted envelope it parsed); else message-lane.ts reads it from the body (~1 ms for 256 KiB). */
  lane?: string;
};

/** A receipt from a sibling inbox (sibling-receipts.ts), stored as a message with its dedup record. */
export interface NewReceipt {
  json: string;
  /** Bytes of `json` as UTF-8, what it occupies in the queue. */
  size: number;
  sender: string;
  msg_id: string;
  env_type: string;
  fingerprint: string;
  received_at: number;
  expires_at: number;
  dedup_until: number;
}

/** A stored message without its body (listings). */
export type MessageMeta = Omit<StoredMessage, "body" | "headers" | "request">;

export interface DeadLetter {
  reason: string;
  status: number | null;
  attempts: number;
  nowMs: number;
  /** When the shelf lets go of it (now + limits.dead_ttl_sec). */
  keepUntil: number;
}
