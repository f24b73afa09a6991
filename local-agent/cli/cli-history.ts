// `clawrelay messages` over the inbox's history: the flags that ask for it (--state delivered|all, --since,
// --until, --source, --from, --conversation, --search, --limit) read into a relay/history.ts filter, and
// `messages replay --since T …` (the bulk replay). A time flag is an ISO 8601 time or a duration back from
// now. The flags are read before the settings, so a typing mistake is said first. Loaded by cli-messages.ts when one of them is given; covered by test/node/history-text.test.ts and
// history-cli.e2e.test.ts.
import { HISTORY_SEARCH_MAX_CHARS } from "../../protocol/index.ts";
import { listHistory, replayHistory, HISTORY_STATES, REPLAY_STATES } from "../relay/history.ts";
import type { HistoryFilter, HistoryState, ReplayState } from "../relay/history.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { UsageError } from "./cli-args.ts";
import type { Values } from "./cli-args.ts";
import { choiceFlag, stringFlag, switchFlag } from "./cli-flags.ts";
import { bulkReplayText, historyListingJson, historyListingText } from "./history-text.ts";

/** The flags only history answers: any of them (or --state delivered|all) makes `messages` read it. */
export const HISTORY_FLAGS = ["since", "until", "source", "from", "conversation", "search", "limit"] as const;
export const LIST_LIMIT_DEFAULT = 200;
export const LIST_LIMIT_MAX = 10_000;

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(\d{1,7})([smhdw])$/;
/** A date, or a date and time with an optional fraction and zone: what Date.parse reads the same everywhere. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * A time flag's value in unix ms: an ISO 8601 time (2026-12-07T05:00:00Z; a date alone is its midnight
 * UTC, a time without a zone the machine's local time, as JavaScript reads them) or a duration back from
 * `nowMs` (90m, 2h, 7d; s, m, h, d, w).
 */
export function timeFlagMs(name: string, value: string, nowMs: number): number {
  const duration = DURATION.exec(value);
  if (duration) return nowMs - Number(duration[1]) * UNIT_MS[duration[2]!]!;
  const ms = ISO_8601.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be an ISO 8601 time such as 2026-12-07T05:00:00Z, or a duration back from now such as 90m, 2h or 7d (not "${value}")`);
  return ms;
}

function optionalTime(values: Values, name: string, nowMs: number): number | undefined {
  const value = stringFlag(values, name);
  return value === undefined ? undefined : timeFlagMs(name, value, nowMs);
}

/** Whether the flags ask for history rather than today's queue. */
export function wantsHistory(values: Values): boolean {
  const state = stringFlag(values, "state");
  return state === "delivered" || state === "all" || HISTORY_FLAGS.some((name) => values[name] !== undefined);
}

/** The list's filter from the flags; a mistake in one is a UsageError naming it. */
export function historyFilter(values: Values, nowMs: number): HistoryFilter {
  const state = choiceFlag<HistoryState>(values, "state", HISTORY_STATES);
  const sinceMs = optionalTime(values, "since", nowMs);
  const untilMs = optionalTime(values, "until", nowMs);
  if (sinceMs !== undefined && untilMs !== undefined && untilMs < sinceMs) throw new UsageError("--until is before --since: nothing can match");
  const search = stringFlag(values, "search");
  if (search !== undefined && (search.length === 0 || search.length > HISTORY_SEARCH_MAX_CHARS)) throw new UsageError(`--search takes 1 to ${HISTORY_SEARCH_MAX_CHARS} characters`);
  const filter: HistoryFilter = {};
  if (state !== undefined) filter.state = state;
  if (sinceMs !== undefined) filter.sinceMs = sinceMs;
  if (untilMs !== undefined) filter.untilMs = untilMs;
  for (const name of ["source", "from", "conversation"] as const) {
    const value = stringFlag(values, name);
    if (value !== undefined) filter[name] = value;
  }
  if (search !== undefined) filter.search = search;
  return filter;
}

export function limitFlag(values: Values): number {
  const text = stringFlag(values, "limit");
  if (text === undefined) return LIST_LIMIT_DEFAULT;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > LIST_LIMIT_MAX) throw new UsageError(`--limit must be a whole number from 1 to ${LIST_LIMIT_MAX}, not "${text}"`);
  return n;
}

/** `messages` with history's flags: the matching messages in id order, `--limit` at most. */
export async function historyListCommand(access: () => Promise<InboxAccess>, values: Values, nowMs: number): Promise<string> {
  const filter = historyFilter(values, nowMs);
  const limit = limitFlag(values);
  const listing = await listHistory(await access(), filter, limit);
  return switchFlag(values, "json") ? historyListingJson(listing, nowMs) : historyListingText(listing, nowMs);
}

/** Whether `messages replay` was given the bulk form's flags (--since and the rest) rather than an id. */
export function isBulkReplay(values: Values): boolean {
  return ["since", "until", "source", "dry-run"].some((name) => values[name] !== undefined);
}

/** `messages replay --since T [--until T] [--source S] [--state delivered|dead|all] [--dry-run]`: at once, no prompt. */
export async function bulkReplayCommand(access: () => Promise<InboxAccess>, values: Values, nowMs: number): Promise<string> {
  for (const name of ["from", "conversation", "search", "limit"]) {
    if (values[name] !== undefined) throw new UsageError(`--${name} is for listing; messages replay --since takes --until, --source, --state and --dry-run`);
  }
  const sinceMs = optionalTime(values, "since", nowMs);
  if (sinceMs === undefined) throw new UsageError("messages replay needs a message id, or --since TIME to replay every kept message since then");
  const untilMs = optionalTime(values, "until", nowMs);
  if (untilMs !== undefined && untilMs < sinceMs) throw new UsageError("--until is before --since: nothing can match");
  const state = choiceFlag<ReplayState>(values, "state", REPLAY_STATES);
  const source = stringFlag(values, "source");
  const dryRun = switchFlag(values, "dry-run");
  const answer = await replayHistory(await access(), {
    sinceMs,
    ...(untilMs !== undefined ? { untilMs } : {}),
    ...(source !== undefined ? { source } : {}),
    ...(state !== undefined ? { state } : {}),
    dryRun,
  });
  return switchFlag(values, "json") ? JSON.stringify({ ...answer, dry_run: dryRun }, null, 2) : bulkReplayText(answer, dryRun);
}
