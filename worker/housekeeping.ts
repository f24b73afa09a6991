// What the inbox's alarm does, as a table of named jobs: handing over acks owed to sibling inboxes,
// closing sockets that never authenticated, shelving queued messages whose TTL ended (and telling their
// senders), sweeping expired records, retrying queued receipts, pulling from the hub or bridging its
// webhook bodies, letting go of history days past their retention (or over the history's budget, oldest
// first: storage/history-store.ts), and finding when stored rows next need the alarm. Alarms are at-least-once, so every
// job is idempotent. Each runs in its own guard: one that fails is logged by name, counted where the
// owner sees it (GET /inbox/{id}/queue, `housekeeping_failures`) and looked at again soon, and the
// others run regardless. Used by inbox.ts; covered by test/worker/housekeeping.test.ts,
// test/worker/expiry.test.ts and test/worker/receipts.test.ts.
import { INBOX_DEFAULTS, RelayError, isAgentId, parseEnvelope } from "../protocol/index.ts";
import type { Envelope } from "../protocol/index.ts";
import { closeIfAuthOverdue } from "./delivery/socket-auth.ts";
import { reapPlan } from "./delivery/socket-limits.ts";
import type { InboxRpc } from "./env.ts";
import type { HubLink, ReceiptOutcome } from "./hub/hub-link.ts";
import { deadTtlSec } from "./inbox-config.ts";
import type { InboxConfig } from "./inbox-config.ts";
import { signTtlExpired } from "./intake/receipts.ts";
import type { Signer } from "./intake/receipts.ts";
import { siblingReceipt } from "./intake/sibling-receipts.ts";
import type { InboxStore } from "./storage/inbox-store.ts";
import type { OutboxItem } from "./storage/inbox-records.ts";
import type { InFlight } from "./storage/in-flight.ts";

export interface HousekeepingJob {
  name: string;
  /** Does what is due at `nowMs`; returns when it wants the alarm next (null: nothing pending). */
  run(nowMs: number): Promise<number | null>;
}

export interface JobFailure {
  count: number;
  last_at: number;
  last_error: string;
}

/** What the jobs are built with: the inbox's store and sockets, and its parts they drive. */
export interface HousekeepingParts {
  store: InboxStore;
  config: () => InboxConfig | null;
  sockets: () => WebSocket[];
  inFlight: () => InFlight | null;
  signer: () => Promise<Signer>;
  sendToSibling: (agentId: string, receipt: Envelope) => Promise<void>;
  sibling: (agentId: string) => DurableObjectStub<InboxRpc>;
  owedAcks: { flush(): Promise<void> };
  hub: HubLink;
}

const MAX_RETRY_DELAY_MS = 60_000;
const IN_FLIGHT_RECHECK_MS = 30_000;
/** A job that failed is run again this soon (with the others: each is idempotent). */
const FAILED_JOB_RETRY_MS = 30_000;
const FAILURES_KEY = "housekeeping_failures";

/** The hub's own schedule for webhook retries: 1, 2, 4 … 60 s. */
function retryDelayMs(attempts: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** attempts);
}

/** The jobs' failures by name, kept in meta 'housekeeping_failures': written only when a job fails. */
export class JobFailures {
  private readonly store: InboxStore;

  constructor(store: InboxStore) {
    this.store = store;
  }

  view(): Record<string, JobFailure> {
    const row = this.store.readMeta(FAILURES_KEY);
    return row === null ? {} : (JSON.parse(row) as Record<string, JobFailure>);
  }

  note(name: string, err: unknown, nowMs: number): void {
    const failures = this.view();
    const error = (err instanceof RelayError ? `${err.code}: ${err.message}` : err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 300);
    failures[name] = { count: (failures[name]?.count ?? 0) + 1, last_at: nowMs, last_error: error };
    this.store.writeMeta(FAILURES_KEY, JSON.stringify(failures));
  }
}

/** Runs every job in order, each in its own guard; returns when the alarm is needed next. */
export async function runHousekeeping(jobs: readonly HousekeepingJob[], nowMs: number, failures: Pick<JobFailures, "note">): Promise<number | null> {
  let next: number | null = null;
  const consider = (at: number) => {
    next = next === null ? at : Math.min(next, at);
  };
  for (const job of jobs) {
    try {
      const at = await job.run(nowMs);
      if (at !== null) consider(at);
    } catch (err) {
      console.error(`housekeeping: the job "${job.name}" failed:`, err);
      consider(nowMs + FAILED_JOB_RETRY_MS);
      try {
        failures.note(job.name, err, nowMs);
      } catch (noteErr) {
        console.error(`housekeeping: counting the failure of "${job.name}" failed too:`, noteErr);
      }
    }
  }
  return next;
}

/**
 * The alarm, not a timer: a pending timer would keep the object from hibernating. The close frame
 * leaves at the deadline; a peer that never answers it is ended by the inbox (inbox.ts, alarm), once
 * its grace has run out — this run looks again then.
 */
function authDeadlines(sockets: WebSocket[], nowMs: number): number | null {
  let next: number | null = null;
  for (const ws of sockets) {
    const pending = closeIfAuthOverdue(ws, nowMs);
    if (pending !== null) next = Math.min(next ?? pending, pending);
  }
  const unanswered = reapPlan(sockets, nowMs).checkAt;
  return unanswered === null ? next : Math.min(next ?? unanswered, unanswered);
}

async function expire(parts: HousekeepingParts, nowMs: number): Promise<null> {
  const config = parts.config();
  const keepDeadUntil = nowMs + (config ? deadTtlSec(config) : INBOX_DEFAULTS.deadTtlSec) * 1000;
  const expired = parts.store.expireMessages(nowMs, keepDeadUntil, parts.inFlight());
  if (!config) return null;
  for (const message of expired) {
    // The sender learns its message was never collected, as the hub would tell it (TTL_EXPIRED).
    if (message.env_type !== "message" || !message.sender || !message.msg_id || !isAgentId(message.sender)) continue;
    const receipt = await signTtlExpired(config, await parts.signer(), { sender: message.sender, msg_id: message.msg_id }, Math.floor(nowMs / 1000));
    await parts.sendToSibling(message.sender, receipt);
  }
  return null;
}

async function deliverReceipt(parts: HousekeepingParts, item: OutboxItem, nowMs: number): Promise<ReceiptOutcome> {
  const { target } = item;
  if (target.kind === "hub") return parts.hub.postReceipt(target.hubUrl, item.body, nowMs);
  try {
    const [result] = await parts.sibling(target.agentId).acceptSiblingReceipts([await siblingReceipt(parseEnvelope(JSON.parse(item.body)))]);
    return result === "stored" ? "accepted" : result === "no_inbox" ? "gone" : "retry";
  } catch {
    // The sibling could not be reached or failed: its receipt is retried with the rest, until its TTL.
    return "retry";
  }
}

/** Queued receipts that are due, each posted once more: kept for later with a longer wait, or gone. */
async function deliverOutbox(parts: HousekeepingParts, nowMs: number): Promise<null> {
  const { store } = parts;
  for (const item of store.dueOutbox(nowMs)) {
    const outcome = await deliverReceipt(parts, item, nowMs);
    if (outcome === "retry" && nowMs + retryDelayMs(item.attempts) < item.expires_at) {
      store.rescheduleOutbox(item.id, item.attempts + 1, nowMs + retryDelayMs(item.attempts));
    } else {
      store.removeOutbox(item.id);
    }
  }
  return null;
}

/** When stored rows need the alarm; still due after this run means an expired message is in the agent's hands. */
function nextStoredDue(store: InboxStore, nowMs: number): number | null {
  const due = store.nextDueAt();
  return due === null ? null : due <= nowMs ? nowMs + IN_FLIGHT_RECHECK_MS : due;
}

/**
 * History days past the retention window are dropped whole, and the closed days kept within the history's
 * budget (as many bytes as the queue may hold, limits.max_queue_bytes), oldest first: what gave way so is
 * noted in meta 'history_gave_way' for `status`. Reads only history_days, and each closed day's table
 * once, to count it.
 */
function keepHistory(parts: HousekeepingParts, nowMs: number): number | null {
  const { store } = parts;
  const budget = parts.config()?.limits.max_queue_bytes ?? INBOX_DEFAULTS.maxQueueBytes;
  const drops = store.history.maintain(nowMs, store.retentionMs, budget, () => store.keepFloor());
  if (drops.gaveWay > 0) {
    const before = store.readMeta("history_gave_way");
    const count = (before === null ? 0 : (JSON.parse(before) as { count: number }).count) + drops.gaveWay;
    store.writeMeta("history_gave_way", JSON.stringify({ count, last_at: nowMs }));
  }
  const next = store.history.nextDueAt(store.retentionMs);
  return next === null ? null : Math.max(next, nowMs + 1000);
}

/** The alarm's jobs in the order they run: owed acks first (after an eviction, what the previous life owed). */
export function housekeepingJobs(parts: HousekeepingParts): HousekeepingJob[] {
  const { store, hub } = parts;
  return [
    {
      name: "sibling-acks",
      run: async () => {
        await parts.owedAcks.flush();
        return null;
      },
    },
    { name: "auth-deadlines", run: async (nowMs) => authDeadlines(parts.sockets(), nowMs) },
    { name: "expire", run: (nowMs) => expire(parts, nowMs) },
    {
      name: "sweep-records",
      run: async (nowMs) => {
        store.sweepExpiredRecords(nowMs);
        return null;
      },
    },
    { name: "history", run: async (nowMs) => keepHistory(parts, nowMs) },
    { name: "outbox", run: (nowMs) => deliverOutbox(parts, nowMs) },
    // The pull schedule lives in memory: after an eviction the next alarm simply pulls at once.
    { name: "hub-pull", run: async (nowMs) => (parts.config() ? hub.pullIfDue(nowMs) : null) },
    { name: "hub-bridge", run: async (nowMs) => (parts.config() ? hub.bridgeIfDue(nowMs) : null) },
    { name: "next-due", run: async (nowMs) => nextStoredDue(store, nowMs) },
  ];
}
