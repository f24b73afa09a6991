// Defaults an inbox starts with and the ceilings a claim may raise them to.
// One SQLite row in a Durable Object holds at most 2 MB, so one body stays below that ceiling; the
// default body limit is the OpenClaw gateway's own fixed hook limit (256 KiB), so a sender whose body
// the gateway would refuse hears it at once (413) instead of the message dying later.

export const DEFAULT_HUB_URL = "https://agentgram.chat";

export const INBOX_DEFAULTS = {
  maxBodyBytes: 256 * 1024,
  maxQueueMessages: 10_000,
  maxQueueBytes: 256 * 1024 * 1024,
  ratePerMinute: 20,
  hookTtlSec: 7 * 24 * 3600,
  /** How long a dead message stays on the shelf for a person to replay or drop it. */
  deadTtlSec: 7 * 24 * 3600,
  /** How long a delivered message is kept (history; 0: deleted at acknowledgement). */
  retentionSec: 7 * 24 * 3600,
} as const;

export const INBOX_CEILINGS = {
  maxBodyBytes: 1_900_000,
  maxQueueMessages: 1_000_000,
  maxQueueBytes: 8 * 1024 * 1024 * 1024,
  ratePerMinute: 10_000,
  hookTtlSec: 30 * 24 * 3600,
  deadTtlSec: 30 * 24 * 3600,
  retentionSec: 30 * 24 * 3600,
} as const;

/** GET …/history: at most this many messages a page, and this long a wait (seconds) for the next one. */
export const HISTORY_LIMIT_MAX = 200;
export const HISTORY_WAIT_MAX_SEC = 60;
/** A history search's text: 1 to this many characters. */
export const HISTORY_SEARCH_MAX_CHARS = 200;
/** Every history request looks at no more than this many ids of each table it reads (queue and day tables), then answers with a cursor. */
export const HISTORY_SCAN_IDS = 1000;
/** POST …/history/replay replays at most this many a call (has_more, next_after then). */
export const HISTORY_REPLAY_MAX = 1000;

/** The OpenClaw gateway refuses hook bodies above this (fixed in current gateways). */
export const GATEWAY_HOOK_BODY_LIMIT = 256 * 1024;

/** Dedup records outlive their messages: at least max(TTL, 24 h) (the hub's window for repeats). */
export const MIN_DEDUP_RETENTION_SEC = 24 * 3600;

export const LONG_POLL_MAX_SEC = 30;
export const POLL_MAX_LIMIT = 100;
