// The inbox's history as its owner reads it: the relay's `GET /inbox/{id}/history` (messages in any state,
// delivered ones kept for the retention window, filtered and searched, paged with an opaque cursor) and
// `POST /inbox/{id}/history/replay` (replay at once, in order, each once; live requests never). Signed with
// the agent's key like every owner call (relay-api.ts). A relay from before history answers 404
// not_found: that becomes one line saying the relay is older. Used by `clawrelay messages` (cli/cli-messages.ts,
// cli/history-text.ts), the inspector (inspector/inspector-routes.ts) and `clawrelay mcp` (mcp/); covered by
// test/node/history-cli.e2e.test.ts, history-text.test.ts, inspector-history.browser.test.ts and mcp-server.e2e.test.ts.
import { HISTORY_LIMIT_MAX, HISTORY_STATES } from "../../protocol/index.ts";
import type { HistoryPage, HistoryReplayResult, HistoryState, QueueItem } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import type { InboxAccess } from "./messages.ts";
import { relayErrorText, signedRelayCall } from "./relay-api.ts";

export { HISTORY_STATES };
export type { HistoryPage, HistoryState, HistorySummary } from "../../protocol/index.ts";
/** What a bulk replay takes from: delivered (the default), dead, or both. */
export const REPLAY_STATES = ["delivered", "dead", "all"] as const;
export type ReplayState = (typeof REPLAY_STATES)[number];

/** A message as history lists it: a queue item in any state, with what only history says (delivered_at, source, a search's excerpt). */
export type HistoryItem = QueueItem;
export type HistoryGap = NonNullable<HistoryPage["gap"]>;
/** A bulk replay's answer, as the relay gives it (next_after: where to go on when has_more). */
export type BulkReplayAnswer = HistoryReplayResult;

/** Filters of one history read; times in unix ms. */
export interface HistoryFilter {
  state?: HistoryState;
  sinceMs?: number;
  untilMs?: number;
  source?: string;
  from?: string;
  conversation?: string;
  search?: string;
}

export interface HistoryQuery extends HistoryFilter {
  cursor?: string;
  /** 1..HISTORY_LIMIT_MAX (protocol/limits.ts). */
  limit?: number;
  /** Seconds the relay may hold the request when nothing matches yet (0..HISTORY_WAIT_MAX_SEC, protocol/limits.ts). */
  waitSec?: number;
}

/** The query string of a history read, its parameters in the contract's names. */
export function historyQueryString(query: HistoryQuery): string {
  const params = new URLSearchParams();
  const add = (name: string, value: string | number | undefined) => {
    if (value !== undefined) params.set(name, String(value));
  };
  add("cursor", query.cursor);
  add("limit", query.limit);
  add("state", query.state);
  add("since", query.sinceMs);
  add("until", query.untilMs);
  add("source", query.source);
  add("from", query.from);
  add("conversation", query.conversation);
  add("search", query.search);
  add("wait", query.waitSec);
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** A relay without history answers the route 404 with the code not_found (its router's "no route"): said in one line, not as a bare 404. */
async function historyCall(access: InboxAccess, method: string, path: string, what: string, body?: unknown, timeoutMs?: number): Promise<Record<string, unknown>> {
  const answer = await signedRelayCall(access.relayUrl, access.identity, method, `/inbox/${access.agentId}${path}`, body, {}, timeoutMs);
  const code = (answer.body.error as { code?: unknown } | undefined)?.code;
  if (answer.status === 404 && code === "not_found") {
    throw new AgentError(
      "relay_too_old",
      `${what}: the relay at ${access.relayUrl} is older and keeps no message history (it has no /inbox/{id}/history); update the relay, or list today's queue with clawrelay messages [--state queued|sent|dead]`,
      404,
    );
  }
  if (answer.status < 200 || answer.status > 299) throw new AgentError("relay_refused", `${what}: the relay answered ${relayErrorText(answer)}`, answer.status);
  return answer.body;
}

/** A held request's answer may take this long past its `wait` (the relay's own work, the network). */
const WAIT_MARGIN_MS = 15_000;

/** One page of history, as the relay answers it; with `waitSec` the call waits that long plus a margin. */
export async function historyPage(access: InboxAccess, query: HistoryQuery): Promise<HistoryPage> {
  const timeoutMs = (query.waitSec ?? 0) * 1000 + WAIT_MARGIN_MS;
  return (await historyCall(access, "GET", `/history${historyQueryString(query)}`, "cannot read the inbox's history", undefined, timeoutMs)) as unknown as HistoryPage;
}

export interface HistoryListing {
  messages: HistoryItem[];
  /** Where to continue: the last page's next_cursor when `limit` was reached before the end, else null. */
  next_cursor: string | null;
  gap: HistoryGap | null;
  /** Rows the relay read for all the pages together. */
  scanned: number;
}

/**
 * History matching `filter`, `limit` at most, in id order: pages of up to 200 followed by next_cursor (a
 * page the relay cut at its scan bound may hold fewer, or none, and still carry a cursor) until `limit` or
 * the end. `cursor`: where to start (absent: the oldest kept).
 */
export async function listHistory(access: InboxAccess, filter: HistoryFilter, limit: number, cursor?: string): Promise<HistoryListing> {
  const messages: HistoryItem[] = [];
  let at = cursor;
  let gap: HistoryGap | null = null;
  let scanned = 0;
  for (let first = true; ; first = false) {
    const page = await historyPage(access, { ...filter, limit: Math.min(HISTORY_LIMIT_MAX, limit - messages.length), ...(at !== undefined ? { cursor: at } : {}) });
    if (first) gap = page.gap;
    scanned += page.scanned;
    messages.push(...page.messages.slice(0, limit - messages.length));
    // A cursor the relay hands back unchanged would never move on: the end, as far as this listing goes.
    const next = page.next_cursor !== null && page.next_cursor !== at ? page.next_cursor : null;
    if (next === null || messages.length >= limit) return { messages, next_cursor: messages.length >= limit ? next : null, gap, scanned };
    at = next;
  }
}

export interface BulkReplayRequest {
  sinceMs: number;
  untilMs?: number;
  source?: string;
  state?: ReplayState;
  dryRun?: boolean;
  /** Go on after this id (a call before answered has_more with next_after). */
  after?: number;
}

/** One call of the relay's bulk replay (at most the relay's per-call bound; `has_more` then). */
export async function replayHistoryOnce(access: InboxAccess, request: BulkReplayRequest): Promise<BulkReplayAnswer> {
  const body = {
    since: request.sinceMs,
    ...(request.untilMs !== undefined ? { until: request.untilMs } : {}),
    ...(request.source !== undefined ? { source: request.source } : {}),
    ...(request.state !== undefined ? { state: request.state } : {}),
    ...(request.dryRun ? { dry_run: true } : {}),
    ...(request.after !== undefined ? { after: request.after } : {}),
  };
  return (await historyCall(access, "POST", "/history/replay", "cannot replay the inbox's history", body)) as unknown as BulkReplayAnswer;
}

/**
 * Every matching message replayed at once, in order, each once: calls again while the relay says
 * has_more, after the id it said (the relay never replays a copy made by the call before). A dry run
 * only counts, going on the same way.
 */
export async function replayHistory(access: InboxAccess, request: BulkReplayRequest): Promise<BulkReplayAnswer> {
  const total: BulkReplayAnswer = { matched: 0, replayed: 0, skipped_live: 0, ids: [], has_more: false };
  let after = request.after;
  for (;;) {
    const answer = await replayHistoryOnce(access, { ...request, ...(after !== undefined ? { after } : {}) });
    total.matched += answer.matched;
    total.replayed += answer.replayed;
    total.skipped_live += answer.skipped_live;
    total.ids.push(...answer.ids);
    const next = answer.next_after;
    if (!answer.has_more) return total;
    // Without the relay's word on where to go on (or one that does not move), stopping is the safe way: a guess could replay one twice.
    if (next === undefined || (after !== undefined && next <= after)) return { ...total, has_more: true };
    after = next;
  }
}
