// Reconnect and retry timing: one DEFAULTS object and one nextDelay() (exponential, equal jitter).
// Used by the reconnecting socket (reconnecting-socket.ts), delivery and forwarding; covered by
// test/node/backoff.test.ts.

export const DEFAULTS = {
  /** First reconnect/retry delay. */
  initialDelayMs: 500,
  /** Ceiling of any delay. */
  maxDelayMs: 30_000,
  factor: 2,
  /** Heartbeat: a ping this often… */
  heartbeatIntervalMs: 10_000,
  /** …and the socket is presumed dead when no frame arrived for this long (half-open in ≤ ~30 s). */
  heartbeatDeadlineMs: 25_000,
  /** How long the relay may take to answer the challenge/auth exchange. */
  connectTimeoutMs: 10_000,
  /** A gateway answering 401/404 is retried this rarely (it locks out after 20 failures a minute). */
  configErrorRetryMs: 60_000,
  /** Retry-After to assume when a 429 does not say. */
  defaultRetryAfterMs: 5_000,
  /**
   * Unacknowledged messages the relay may push ahead of us. Room for the followers of conversations
   * that are waiting out a retry, so the others keep moving (bodies are ≤ 256 KiB: ≤ 32 MiB held).
   */
  window: 128,
  /**
   * A message's transient failure while the gateway takes other posts is retried after 5–10 ms, doubling
   * with its own failures up to 0.5–1 s: one unlucky post stalls its conversation for milliseconds (with
   * 13 conversations and 13 % of posts failing, 50–100 ms kept most of them stalled), and a conversation
   * goes on within 1 s of any success.
   */
  isolatedRetryMs: 10,
  maxIsolatedRetryMs: 1000,
  /**
   * Transient failures in a row across all posts, none taken between, that mean the gateway is down. A
   * gateway failing 13 % of posts at random shows 5 in a row once in ~27,000 posts.
   */
  outageStreak: 5,
  /** While it is down one post at a time probes it: after 50, 100, 200, 400 ms, then every 500 ms… */
  firstProbeMs: 50,
  probeIntervalMs: 500,
  /** …for its first minute down, then every 5 s. */
  probeFastForMs: 60_000,
  probeSlowIntervalMs: 5_000,
} as const;

/** The shape of an exponential backoff: DEFAULTS' own, or a client's (the hub's socket, tests). */
export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  factor: number;
}

/**
 * Delay before attempt `attempt` (0-based): half of the exponential step fixed, half random, so a
 * fleet of agents reconnecting after a deploy spreads out instead of arriving together.
 */
export function nextDelay(attempt: number, random: () => number = Math.random, options: BackoffOptions = DEFAULTS): number {
  const step = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** Math.max(0, attempt));
  return Math.round(step / 2 + random() * (step / 2));
}
