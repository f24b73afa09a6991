// POST /inbox/{id}/history/replay: kept (delivered) and dead messages received in a time range queued again,
// each once, in id order, under new ids (replay_of names the original: delivered ones stay kept, dead ones
// leave the shelf as a single replay does). Live requests are never replayed (their caller had its answer);
// nor is a replay whose original is still kept (the original is what matches), so going on with `after`
// never replays a copy made by the call before. At most HISTORY_REPLAY_MAX a call, and never past the
// queue's capacity: has_more and next_after then. Used by history-routes.ts; covered by
// test/worker/history.test.ts.
import { HISTORY_REPLAY_MAX, RelayError } from "../../protocol/index.ts";
import type { HistoryReplayResult, HistoryState } from "../../protocol/index.ts";
import { requireOwnerJson } from "../access/request-auth.ts";
import { sourceSender } from "../sources/source-config.ts";
import { parseKeptRequest } from "../storage/kept-request.ts";
import type { StoredMessage } from "../storage/stored-message.ts";
import type { KeptMessage } from "../storage/history-store.ts";
import type { QueueHost } from "../delivery/queue-routes.ts";

/** What the history routes need of the inbox beyond the queue routes' host (history-routes.ts and this file). */
export interface HistoryHost extends QueueHost {
  /** Resolves when a message is stored or after `ms` (delivery/message-waiters.ts). */
  waitForMessage(ms: number): Promise<void>;
}

const FIELDS = ["since", "until", "source", "state", "dry_run", "after"];
/** Scans a call may make (each bounded: history-scan.ts) before it answers has_more. */
const MAX_SCANS = 20;

const invalid = (message: string) => new RelayError(400, "invalid_replay", message);

interface ReplayAsk {
  since: number;
  until: number | null;
  source: string | null;
  state: "delivered" | "dead" | "all";
  dryRun: boolean;
  after: number;
}

function integerField(body: Record<string, unknown>, name: string): number | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) throw invalid(`${name} must be a non-negative integer (unix ms for since and until, a message id for after)`);
  return value;
}

function parseAsk(json: unknown): ReplayAsk {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw invalid("the body must be a JSON object");
  const body = json as Record<string, unknown>;
  const extra = Object.keys(body).filter((k) => !FIELDS.includes(k));
  if (extra.length > 0) throw invalid(`unknown field "${extra[0]!.slice(0, 40)}"; known: ${FIELDS.join(", ")}`);
  const since = integerField(body, "since");
  if (since === null) throw invalid("since is required (unix ms): replay messages received from then on");
  const state = body.state ?? "delivered";
  if (state !== "delivered" && state !== "dead" && state !== "all") throw invalid('state must be "delivered", "dead" or "all" (queued messages are delivered anyway)');
  if (body.source !== undefined && (typeof body.source !== "string" || body.source.length === 0 || body.source.length > 200)) throw invalid("source must be a source's name");
  if (body.dry_run !== undefined && typeof body.dry_run !== "boolean") throw invalid("dry_run must be true or false");
  return { since, until: integerField(body, "until"), source: (body.source as string | undefined) ?? null, state, dryRun: body.dry_run === true, after: integerField(body, "after") ?? 0 };
}

/** Answered at once (a kept live entry), or held and stored as a message (its request names the live request). */
function isLive(message: StoredMessage | KeptMessage): boolean {
  if ("live" in message && message.live !== null) return true;
  return message.request !== null && parseKeptRequest(message.request).live_rid !== undefined;
}

export async function replayRoute(host: HistoryHost, request: Request): Promise<HistoryReplayResult> {
  const { config, json } = await requireOwnerJson(host, request, 4096, "a history replay", "send a small JSON object: since, until, source, state, dry_run, after");
  const ask = parseAsk(json);
  const { store } = host;
  const result: HistoryReplayResult = { matched: 0, replayed: 0, skipped_live: 0, ids: [], has_more: false };
  const expiresAt = Date.now() + config.limits.hook_ttl_sec * 1000;
  let after = ask.after;
  let lastDone = ask.after;
  for (let scans = 0; scans < MAX_SCANS && !result.has_more; scans++) {
    const scan = store.historyPage({
      after, limit: HISTORY_REPLAY_MAX, state: ask.state as HistoryState, since: ask.since, until: ask.until,
      sender: ask.source === null ? null : sourceSender(ask.source), lane: null, search: null, inFlight: null,
    });
    const more = scan.rows.length > HISTORY_REPLAY_MAX;
    for (const row of scan.rows.slice(0, HISTORY_REPLAY_MAX)) {
      if (row.state !== "delivered" && row.state !== "dead") continue;
      const seq = Number(row.seq);
      const queued = store.find(seq);
      const message: StoredMessage | KeptMessage | null = queued ?? store.history.find(seq);
      if (!message) continue;
      if (message.replay_of !== null && (store.find(message.replay_of) ?? store.history.find(message.replay_of))) continue;
      if (isLive(message)) {
        result.skipped_live += 1;
        lastDone = seq;
        continue;
      }
      const { count, bytes } = store.queueStats();
      const full = count + 1 > config.limits.max_queue_messages || bytes + message.size > config.limits.max_queue_bytes;
      if (result.matched >= HISTORY_REPLAY_MAX || (!ask.dryRun && full)) {
        result.has_more = true;
        break;
      }
      result.matched += 1;
      lastDone = seq;
      if (ask.dryRun) continue;
      // As a single replay (queue-routes.ts): a dead one in the queue leaves the shelf, a kept one is copied.
      const to = queued?.state === "dead" ? store.replay(seq, expiresAt) : store.replayKept(seq, expiresAt);
      if (to === null) continue;
      result.replayed += 1;
      result.ids.push({ from: seq, to });
    }
    if (more) result.has_more = true;
    if (result.has_more || scan.lastScanned === null) break;
    after = scan.lastScanned;
    if (scans === MAX_SCANS - 1) {
      result.has_more = true;
      lastDone = after;
    }
  }
  if (result.has_more) result.next_after = lastDone;
  if (result.replayed > 0) {
    await host.ensureAlarm(expiresAt);
    host.wakeConsumers();
  }
  return result;
}
