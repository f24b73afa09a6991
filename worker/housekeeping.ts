// What the inbox's alarm does. Alarms are at-least-once, so every step is idempotent: shelving queued
// messages whose TTL ended (and telling their senders), deleting dead ones past the shelf's TTL,
// closing sockets that never authenticated (and looking again when their peers must have answered),
// retrying queued receipts.
import { INBOX_DEFAULTS, isAgentId, parseEnvelope } from "../protocol/index.ts";
import { deadTtlSec, hubLinkOf } from "./inbox-config.ts";
import { postHubReceipt } from "./hub/hub-client.ts";
import type { ReceiptPostResult } from "./hub/hub-client.ts";
import { bridgeHistory } from "./hub/hub-bridge.ts";
import { pullFromHub } from "./hub/hub-pull.ts";
import type { PullHost } from "./hub/hub-pull.ts";
import type { Envelope } from "../protocol/index.ts";
import type { InboxConfig } from "./inbox-config.ts";
import type { InFlight } from "./storage/stored-message.ts";
import type { InboxRpc } from "./env.ts";
import { signTtlExpired } from "./intake/receipts.ts";
import { siblingReceipt } from "./intake/sibling-receipts.ts";
import { closeIfAuthOverdue } from "./delivery/socket-session.ts";
import { reapPlan } from "./delivery/socket-limits.ts";

/** What the alarm's work needs of its inbox (inbox.ts). */
export interface HousekeepingHost extends PullHost {
  readonly config: InboxConfig | null;
  sockets(): WebSocket[];
  inFlight(): InFlight | null;
  sendToSibling(agentId: string, receipt: Envelope): Promise<void>;
  sibling(agentId: string): DurableObjectStub<InboxRpc>;
}

const MAX_RETRY_DELAY_MS = 60_000;
const IN_FLIGHT_RECHECK_MS = 30_000;

function noteReceipt(inbox: HousekeepingHost, body: string, result: ReceiptPostResult, nowMs: number): void {
  let msgId: string | null = null;
  try {
    msgId = String((JSON.parse(body) as { reply_to?: unknown }).reply_to ?? "") || null;
  } catch {
    // A receipt we built ourselves is JSON; nothing to name otherwise.
  }
  inbox.store.updateHubState((state) => {
    state.last_receipt = { at: nowMs, ok: result.outcome === "accepted", status: result.status, detail: result.detail, msg_id: msgId };
    if (result.outcome === "refused") state.receipts_refused += 1;
  });
}

/** The hub's own schedule for webhook retries: 1, 2, 4 … 60 s. */
export function retryDelayMs(attempts: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** attempts);
}

export async function runHousekeeping(inbox: HousekeepingHost, nowMs: number): Promise<number | null> {
  let next: number | null = null;
  const consider = (at: number) => {
    next = next === null ? at : Math.min(next, at);
  };

  // The alarm, not a timer: a pending timer would keep the object from hibernating. The close frame
  // leaves at the deadline; a peer that never answers it is ended by the inbox (inbox.ts, alarm), once
  // its grace has run out — this run looks again then.
  for (const ws of inbox.sockets()) {
    const pending = closeIfAuthOverdue(ws, nowMs);
    if (pending !== null) consider(pending);
  }
  const unanswered = reapPlan(inbox.sockets(), nowMs).checkAt;
  if (unanswered !== null) consider(unanswered);

  const config = inbox.config;
  const keepDeadUntil = nowMs + (config ? deadTtlSec(config) : INBOX_DEFAULTS.deadTtlSec) * 1000;
  const expired = inbox.store.expireMessages(nowMs, keepDeadUntil, inbox.inFlight());
  if (config) {
    for (const message of expired) {
      // The sender learns its message was never collected, as the hub would tell it (TTL_EXPIRED).
      if (message.env_type !== "message" || !message.sender || !message.msg_id || !isAgentId(message.sender)) continue;
      const receipt = await signTtlExpired(config, await inbox.signer(), { sender: message.sender, msg_id: message.msg_id }, Math.floor(nowMs / 1000));
      await inbox.sendToSibling(message.sender, receipt);
    }
  }
  inbox.store.sweepExpiredRecords(nowMs);

  for (const item of inbox.store.dueOutbox(nowMs)) {
    let outcome: "accepted" | "gone" | "retry";
    if (item.target.startsWith("hub:")) {
      const result = await postHubReceipt(item.target.slice(4), item.body);
      // A permanent refusal (a key id the hub does not know, no such record) cannot get better by
      // retrying: it ends here and shows in `clawrelay hub status` / `status`.
      outcome = result.outcome === "accepted" ? "accepted" : result.outcome === "refused" ? "gone" : "retry";
      noteReceipt(inbox, item.body, result, nowMs);
    } else {
      const agentId = item.target.slice("relay:".length);
      try {
        const [result] = await inbox.sibling(agentId).acceptSiblingReceipts([await siblingReceipt(parseEnvelope(JSON.parse(item.body)))]);
        outcome = result === "stored" ? "accepted" : result === "no_inbox" ? "gone" : "retry";
      } catch {
        outcome = "retry";
      }
    }
    if (outcome === "retry" && nowMs + retryDelayMs(item.attempts) < item.expires_at) {
      inbox.store.rescheduleOutbox(item.id, item.attempts + 1, nowMs + retryDelayMs(item.attempts));
    } else {
      inbox.store.removeOutbox(item.id);
    }
  }

  if (config) {
    const link = hubLinkOf(config);
    const state = inbox.store.loadHubState();
    // The pull schedule lives in memory: after an eviction the next alarm simply pulls at once.
    if (link.mode === "pull") {
      if (inbox.pull.nextAt === null || inbox.pull.nextAt <= nowMs) await pullFromHub(inbox, { schedule: false });
      if (inbox.pull.nextAt !== null) consider(inbox.pull.nextAt);
    }
    if (link.mode === "webhook" && state.bridge_due_at !== null) {
      if (state.bridge_due_at <= nowMs) await bridgeHistory(inbox, nowMs);
      const due = inbox.store.loadHubState().bridge_due_at;
      if (due !== null) consider(due);
    }
  }

  // Still due after this run means an expired message is in the agent's hands: look again later.
  const stored = inbox.store.nextDueAt();
  if (stored !== null) consider(stored <= nowMs ? nowMs + IN_FLIGHT_RECHECK_MS : stored);
  return next;
}
