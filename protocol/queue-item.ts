// What an inbox holds, as its owner sees it (GET /inbox/{id}/queue): every stored message has a state.
// Shared by the relay, which answers with it, and the CLI's `clawrelay messages`, which prints it.
import type { LiveSummary } from "./live.ts";

/**
 * queued: waiting for the local agent. sent: handed to the connected agent, not yet acknowledged.
 * dead: the gateway refused it, or its TTL ended before delivery; kept for limits.dead_ttl_sec with
 * its reason until replayed or dropped, then kept in history for what is left of the retention window.
 * delivered: acknowledged by the agent and kept for the inbox's retention window (limits.retention_sec;
 * only in GET …/history and GET …/queue/{id}: GET …/queue lists what is waiting or dead, as before). A
 * message whose TTL ended undelivered is dead with reason "ttl_expired: …": there is no "expired" state.
 */
export type MessageState = "queued" | "sent" | "dead" | "delivered";

/** The states GET …/queue lists (a kept, delivered message is only in GET …/history). */
export const MESSAGE_STATES: readonly MessageState[] = ["queued", "sent", "dead"];

/** What GET …/history's `state` narrows to ("all": every state). */
export type HistoryState = MessageState | "all";
export const HISTORY_STATES: readonly HistoryState[] = ["queued", "sent", "dead", "delivered", "all"];

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
  /** When the agent acknowledged it (a delivered message); null or absent otherwise, and from an older relay. */
  delivered_at?: number | null;
  /** The webhook source's name for a source event; null or absent otherwise. */
  source?: string | null;
  /** Search results only: ≤ 160 characters of the body, headers or path around the first match, raw text (escape it to show it). */
  excerpt?: string;
  /** A live request's entry. */
  live?: true;
}

/** GET /inbox/{id}/history's answer (docs/protocol.md, "History"). */
export interface HistoryPage {
  messages: QueueItem[];
  /** Where to continue; null when nothing after the cursor asked with was kept (a poller keeps its own and asks again). */
  next_cursor: string | null;
  /** Always set: the position after everything this page scanned (the cursor asked with when it scanned nothing). */
  cursor: string;
  epoch: string;
  gap: null | { reason: "retention" | "epoch"; oldest_kept: string | null };
  /** Ids looked at (the scan's bound: HISTORY_SCAN_IDS per table). */
  scanned: number;
}

/** POST /inbox/{id}/history/replay's answer. */
export interface HistoryReplayResult {
  matched: number;
  replayed: number;
  skipped_live: number;
  ids: { from: number; to: number }[];
  has_more: boolean;
  /** With has_more: send it back as `after` to go on where this call stopped. */
  next_after?: number;
}

/** What the inbox keeps after delivery (GET …/queue summary's `history`). */
export interface HistorySummary {
  kept: number;
  oldest_at: number | null;
  retention_sec: number;
  /** Kept messages let go of before their retention ended, to stay within the history's budget. */
  gave_way?: { count: number; last_at: number };
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
  /** What is kept after delivery (retention). Absent from an older relay. */
  history?: HistorySummary;
}

export const LANES_LISTED = 20;
