// The hub's message endpoints, typed: posting a signed receipt (any hub; no JWT, its signature is the
// proof), the agent's history, and the pull inbox with its 120 s leases and two-phase ack (today's hub
// pushes nothing: an inbox pulls with ack=false, stores, renews the leases of what it has not stored
// yet, then acks). Pages are read record by record (hub-page.ts), at most HUB_PAGE_MAX_BYTES of them,
// and never more records than were asked for. The JWT is the client's
// (hubClient(url, {token})). Built on hub-api-core.ts; used by worker/hub/ (receipts, pulling, the
// bridge) and local-agent/hub/hub-others.ts (history); covered by test/protocol/hub-api-relay.test.ts.
import { HUB_PAGE_MAX_BYTES, hubDetail, hubJson, hubAnswerText, isHubSuccess } from "./hub-api-core.ts";
import type { HubClient } from "./hub-api-core.ts";
import { readPage } from "./hub-page.ts";
import type { HubRecord } from "./hub-page.ts";

export interface HubPage {
  messages: HubRecord[];
  hasMore: boolean;
  /** Records the hub sent past the number asked for, left out (a hub that ignores `limit`). */
  cut: number;
}

export interface ReceiptPostResult {
  /** refused: a permanent answer (any 4xx but 408/429): retrying the same receipt cannot help. */
  outcome: "accepted" | "refused" | "retry";
  /** The hub's status; 0 when it did not answer. */
  status: number;
  detail: string;
}

/** Records asked for in one page of history, and in one pull: a page holding more is cut to it (hub-page.ts). */
const HISTORY_LIMIT = 100;
export const PULL_LIMIT = 50;

/** POST /hub/receipt with the receipt as it was signed and kept. Never throws: the outcome says what to do next. */
export async function postHubReceipt(hub: HubClient, receiptJson: string): Promise<ReceiptPostResult> {
  let answer;
  try {
    answer = await hub.call("POST", "/hub/receipt", { bodyJson: receiptJson, read: "text" });
  } catch (err) {
    // No answer before the deadline: the receipt stays queued for the next try, the reason beside it.
    return { outcome: "retry", status: 0, detail: (err as Error).message };
  }
  if (isHubSuccess(answer)) return { outcome: "accepted", status: answer.status, detail: "" };
  const permanent = answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429;
  return { outcome: permanent ? "refused" : "retry", status: answer.status, detail: hubDetail(answer) };
}

/**
 * GET /hub/history: records the agent sent or received. With `after`, the ones after it, oldest first;
 * without, the newest 100 (the hub lists them newest first) — returned oldest first either way.
 */
export async function fetchHubHistory(hub: HubClient, after: string | null): Promise<HubPage> {
  const path = `/hub/history?limit=${HISTORY_LIMIT}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
  const page = readPage(await hubAnswerText(hub, "GET", path, { maxBytes: HUB_PAGE_MAX_BYTES }), `GET ${path}`, HISTORY_LIMIT);
  return after ? page : { ...page, messages: page.messages.reverse(), hasMore: false };
}

const INBOX_PATH = `/hub/inbox?limit=${PULL_LIMIT}&timeout=0&ack=false`;

/** GET /hub/inbox?ack=false: waiting records, leased ("processing", 120 s) until acknowledged. */
export async function pullHubInbox(hub: HubClient): Promise<HubPage> {
  return readPage(await hubAnswerText(hub, "GET", INBOX_PATH, { maxBytes: HUB_PAGE_MAX_BYTES }), `GET ${INBOX_PATH}`, PULL_LIMIT);
}

/** POST /hub/inbox/lease/renew: keeps records leased to us while we are still storing them. */
export async function renewHubLeases(hub: HubClient, hubMsgIds: string[]): Promise<void> {
  await hubJson(hub, "POST", "/hub/inbox/lease/renew", { body: { message_ids: hubMsgIds } });
}

/** POST /hub/inbox/ack: the records are stored here; the hub marks them delivered. */
export async function ackHubInbox(hub: HubClient, hubMsgIds: string[]): Promise<void> {
  await hubJson(hub, "POST", "/hub/inbox/ack", { body: { message_ids: hubMsgIds } });
}
