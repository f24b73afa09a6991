// What the inbox's alarm does. Alarms are at-least-once, so every step is idempotent: shelving queued
// messages whose TTL ended (and telling their senders), deleting dead ones past the shelf's TTL,
// closing sockets that never authenticated, retrying queued receipts.
import { INBOX_DEFAULTS, isAgentId } from "../protocol/index.ts";
import { deadTtlSec } from "./inbox-config.ts";
import { postHubReceipt } from "./hub-client.ts";
import type { Inbox } from "./inbox.ts";
import { signTtlExpired } from "./receipts.ts";
import { closeIfAuthOverdue } from "./socket-session.ts";

const MAX_RETRY_DELAY_MS = 60_000;
const IN_FLIGHT_RECHECK_MS = 30_000;

/** The hub's own schedule for webhook retries: 1, 2, 4 … 60 s. */
export function retryDelayMs(attempts: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** attempts);
}

export async function runHousekeeping(inbox: Inbox, nowMs: number): Promise<number | null> {
  let next: number | null = null;
  const consider = (at: number) => {
    next = next === null ? at : Math.min(next, at);
  };

  // The alarm, not a timer: a pending timer would keep the object from hibernating. The close frame
  // leaves at the deadline; the runtime ends the TCP connection of a close it did not make in answer to
  // a client frame only when the object next hibernates (~10 s later on local workerd).
  for (const ws of inbox.sockets()) {
    const pending = closeIfAuthOverdue(ws, nowMs);
    if (pending !== null) consider(pending);
  }

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
      outcome = await postHubReceipt(item.target.slice(4), item.body);
    } else {
      const agentId = item.target.slice("relay:".length);
      try {
        const result = await inbox.sibling(agentId).acceptSiblingReceipt(item.body);
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

  // Still due after this run means an expired message is in the agent's hands: look again later.
  const stored = inbox.store.nextDueAt();
  if (stored !== null) consider(stored <= nowMs ? nowMs + IN_FLIGHT_RECHECK_MS : stored);
  return next;
}
