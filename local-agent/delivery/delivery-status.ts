// What the delivery loop reports (GET /clawrelay/status, `clawrelay status`) and what it hands the
// relay's dead shelf. Types (and the recent rejections' keeping), apart from delivery.ts so agent-status.ts
// need not import the loop.
// Covered by test/node/delivery.e2e.test.ts and dead-letters.e2e.test.ts.

export interface DeliveryRecord {
  id: number;
  subpath: string;
  status: number;
  at: number;
  /** Relay receipt to gateway accept. */
  latency_ms: number;
}

export interface Rejection {
  reason: string;
  /** The gateway's last status (0: unreachable). */
  status: number;
  attempts: number;
}

/** A lane the agent holds messages of (protocol/lanes.ts): how many, since when, and when its head goes next. */
export interface AgentLane {
  lane: string;
  /** Taken from the relay, not started. */
  waiting: number;
  /** Posting, or waiting to retry. */
  posting: number;
  /** received_at (at the relay) of the oldest message the agent holds of it. */
  since: number;
  /** When its head's next attempt goes, while it waits to retry; null when it is posting or has not failed. */
  next_try_at: number | null;
  last_error: string | null;
}

export const AGENT_LANES_LISTED = 20;

export interface DeliveryStatus {
  /** The counters below count from here (the process's start): they are not persisted. */
  counted_since: number;
  delivered: number;
  rejected: number;
  last_delivery: DeliveryRecord | null;
  /** Set while a config error holds every message back. */
  paused: string | null;
  /** The latest messages sent to the relay's dead shelf by this process (newest last). */
  recent_rejections: ({ id: number; subpath: string; at: number } & Rejection)[];
  /** The latest failure; cleared by the next delivery. */
  last_error: { id: number; message: string; at: number } | null;
  /** Taken from the relay and not finished yet (waiting, posting or waiting to retry). */
  queued: number;
  /** Of those, started: their conversation's turn (posting or waiting to retry). */
  in_flight: number;
  /** Posts at most in flight at once. */
  concurrency: number;
  /** Set while the gateway is down (posts failing in a row): one post at a time probes it; `probes` that failed so far. */
  gateway_down: { since: number; probes: number; reason: string } | null;
  /** The lanes it holds messages of, the oldest first (at most AGENT_LANES_LISTED). */
  lanes: AgentLane[];
}

/** What retryNow() woke: sleeping messages, the 429 hold it cut (ms), whether an outage's probe went at once, the pause. */
export interface RetryNow {
  woken: number;
  hold_cut_ms: number;
  probe_now: boolean;
  paused: string | null;
}

/** The rejections the status lists at most, newest last. */
const RECENT_REJECTIONS = 20;

export function noteRejection(status: Pick<DeliveryStatus, "recent_rejections">, entry: DeliveryStatus["recent_rejections"][number]): void {
  status.recent_rejections.push(entry);
  if (status.recent_rejections.length > RECENT_REJECTIONS) status.recent_rejections.shift();
}
