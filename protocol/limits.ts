// Defaults an inbox starts with and the ceilings a claim may raise them to.
// The SQLite row limit in Durable Objects is 2 MB (cloudflare.md), so one body stays below it.

export const DEFAULT_HUB_URL = "https://agentgram.chat";

export const INBOX_DEFAULTS = {
  maxBodyBytes: 1024 * 1024,
  maxQueueMessages: 10_000,
  maxQueueBytes: 256 * 1024 * 1024,
  ratePerMinute: 20,
  hookTtlSec: 7 * 24 * 3600,
} as const;

export const INBOX_CEILINGS = {
  maxBodyBytes: 1_900_000,
  maxQueueMessages: 1_000_000,
  maxQueueBytes: 8 * 1024 * 1024 * 1024,
  ratePerMinute: 10_000,
  hookTtlSec: 30 * 24 * 3600,
} as const;

/** Dedup records outlive their messages: at least max(TTL, 24 h) (the hub's window for repeats). */
export const MIN_DEDUP_RETENTION_SEC = 24 * 3600;

export const LONG_POLL_MAX_SEC = 30;
export const POLL_MAX_LIMIT = 100;
