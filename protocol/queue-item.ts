// What an inbox holds, as its owner sees it (GET /inbox/{id}/queue): every stored message has a state.
// Shared by the relay, which answers with it, and the CLI's `clawrelay messages`, which prints it.
import type { LiveSummary } from "./live.ts";

/**
 * queued: waiting for the local agent. sent: handed to the connected agent, not yet acknowledged.
 * dead: the gateway refused it, or its TTL ended before delivery; kept for limits.dead_ttl_sec with
 * its reason until replayed or dropped. Delivered messages are deleted, so they have no state here.
 */
export type MessageState = "queued" | "sent" | "dead";

export const MESSAGE_STATES: readonly MessageState[] = ["queued", "sent", "dead"];

export interface QueueItem {
  id: number;
  state: MessageState;
  kind: "hook" | "envelope";
  subpath: string | null;
  content_type: string;
  size: number;
  received_at: number;
  expires_at: number;
  /** For envelopes: the signed `from`, `msg_id` and `type`. */
  sender: string | null;
  msg_id: string | null;
  type: string | null;
  /** Delivery attempts the agent reported (dead), carried over by a replay. */
  attempts: number;
  /** Why it is dead, in words a person can act on. */
  reason: string | null;
  /** The gateway's last HTTP status for it (0 = unreachable), when the agent reported one. */
  last_status: number | null;
  dead_at: number | null;
  /** The id this message had before it was replayed from the dead shelf. */
  replay_of: number | null;
  /** Its lane (protocol/lanes.ts): a source's ("source:stripe") or a gateway conversation; absent from an older relay. */
  lane?: string;
}

/** One lane that holds messages, as the relay sees it. */
export interface LaneSummary {
  lane: string;
  /** Waiting at the relay (not sent). */
  queued: number;
  /** Sent to the connected agent, not yet acknowledged. */
  sent: number;
  /** received_at of the lane's oldest message (queued or sent). */
  oldest_at: number;
}

export interface QueueSummary {
  queued: number;
  sent: number;
  dead: number;
  /** received_at of the oldest message waiting (queued or sent); null when none waits. */
  oldest_waiting_at: number | null;
  /**
   * The lanes that hold messages, the one with the oldest first (at most LANES_LISTED); absent from an
   * older relay.
   */
  lanes?: LaneSummary[];
  /**
   * What the inbox's storage has done since its object last woke (SQLite's own counts): rows read and
   * written, and of the reads those of sending to the agent, with the messages sent. Absent from an older relay.
   */
  storage?: { rows_read: number; rows_written: number; pump_rows_read: number; messages_sent: number };
  /** Live requests (protocol/live.ts): in flight now, answered among the logged, the newest's time. Absent from an older relay. */
  live?: LiveSummary;
  /**
   * How the relay keeps senders' credential headers for sources with a forward target (credential-headers.ts):
   * "sealed" under the operator's RECEIPT_KEY_SECRET, or "clear" without it. Absent from an older relay.
   */
  credentials?: "sealed" | "clear";
}

export const LANES_LISTED = 20;
