// The relay's history routes as `clawrelay mcp` calls them (docs/protocol.md, "History"): a page of kept
// messages after a cursor (GET /inbox/{id}/history, also held open with `wait`) and a bulk replay
// (POST /inbox/{id}/history/replay), each a request signed with the agent's key. Reads only: nothing
// here acknowledges a message or opens the inbox's socket (a second socket would replace the running
// agent's). Used by mcp-tools-inbox.ts and mcp-tools-actions.ts; covered by test/node/mcp-server.e2e.test.ts.
import { HISTORY_WAIT_MAX_SEC } from "../../protocol/index.ts";
import type { HistoryPage, HistoryReplayResult, HistoryState } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { relayErrorText, signedRelayCall } from "../relay/relay-api.ts";
import type { RelayAnswer } from "../relay/relay-api.ts";

export type { HistoryPage, HistoryReplayResult, HistoryState } from "../../protocol/index.ts";

/** The relay holds a history request at most this long (its documented maximum of `wait`). */
export const MAX_WAIT_SEC = HISTORY_WAIT_MAX_SEC;
/** A held request's answer may take this long past its `wait` (the relay's own work, the network). */
const WAIT_MARGIN_MS = 15_000;

export type HistoryGap = NonNullable<HistoryPage["gap"]>;

export interface HistoryQuery {
  cursor?: string;
  limit?: number;
  state?: HistoryState;
  sinceMs?: number;
  untilMs?: number;
  source?: string;
  from?: string;
  conversation?: string;
  search?: string;
  /** Seconds the relay may hold the request when nothing matches yet (0–MAX_WAIT_SEC). */
  waitSec?: number;
}

export interface ReplayRequest {
  since: number;
  until?: number;
  source?: string;
  state?: "delivered" | "dead" | "all";
  dry_run?: boolean;
  /** next_after of the call before, when it answered has_more. */
  after?: number;
}

/** A relay from before history answers its routes 404 not_found (worker/http-errors.ts answerNotFound). */
const OLDER_RELAY = "the relay is older than this agent: it keeps no history (GET /inbox/{id}/history answered 404); update the relay to read past messages";

function checked(answer: RelayAnswer, what: string): RelayAnswer {
  if (answer.status >= 200 && answer.status <= 299) return answer;
  const code = (answer.body.error as { code?: unknown } | undefined)?.code;
  if (answer.status === 404 && code === "not_found") throw new AgentError("relay_without_history", OLDER_RELAY, 404);
  throw new AgentError("relay_refused", `${what}: the relay answered ${relayErrorText(answer)}`, answer.status);
}

/** The query string of a history request; absent fields are left out (the relay's defaults apply). */
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

export async function historyPage(access: InboxAccess, query: HistoryQuery): Promise<HistoryPage> {
  const timeoutMs = (query.waitSec ?? 0) * 1000 + WAIT_MARGIN_MS;
  const path = `/inbox/${access.agentId}/history${historyQueryString(query)}`;
  const answer = await signedRelayCall(access.relayUrl, access.identity, "GET", path, undefined, {}, timeoutMs);
  return checked(answer, "cannot read the inbox's history").body as unknown as HistoryPage;
}

export async function replayHistory(access: InboxAccess, request: ReplayRequest): Promise<HistoryReplayResult> {
  const answer = await signedRelayCall(access.relayUrl, access.identity, "POST", `/inbox/${access.agentId}/history/replay`, request);
  return checked(answer, "cannot replay the inbox's history").body as unknown as HistoryReplayResult;
}
