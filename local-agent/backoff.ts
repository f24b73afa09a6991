// Reconnect and retry timing: one DEFAULTS object and one nextDelay() (exponential, equal jitter).

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
  /** The first retry of a transient failure while the gateway takes other posts (one unlucky post). */
  isolatedRetryMs: 100,
} as const;

/**
 * Delay before attempt `attempt` (0-based): half of the exponential step fixed, half random, so a
 * fleet of agents reconnecting after a deploy spreads out instead of arriving together.
 */
export function nextDelay(attempt: number, random: () => number = Math.random, options: { initialDelayMs: number; maxDelayMs: number; factor: number } = DEFAULTS): number {
  const step = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** Math.max(0, attempt));
  return Math.round(step / 2 + random() * (step / 2));
}
