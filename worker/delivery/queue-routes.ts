// What the inbox's owner can see and do with stored messages: list them by state (and the lanes that
// wait), show one with its body (a kept, delivered one too: history-store.ts), replay a dead or kept one,
// drop one — a kept one, or one in the hands of a lanes agent too (it is told to abandon it), never one an
// older agent holds. The history's own routes are worker/history/. Every call is a signed
// request by a key of the inbox (docs/protocol.md, "Signed requests"); replay and drop also spend their
// nonce, so a captured request cannot be played again. A sender's credentials are never shown: redacted. Mounted by inbox-routes.ts; covered by
// test/worker/queue.test.ts and test/worker/history.test.ts.
import { Hono } from "hono";
import { LANES_LISTED, RelayError, redactHeaderRecord } from "../../protocol/index.ts";
import type { AbandonFrame, HistorySummary, LiveSummary, MessageState, QueueItem, QueueSummary } from "../../protocol/index.ts";
import { shownFrame } from "./delivery-frame.ts";
import type { Abandoned } from "./socket-session.ts";
import type { ForwardTargets } from "./delivery-frame.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import { parseKeptRequest, shownRequest } from "../storage/kept-request.ts";
import type { KeptCredentials } from "../sources/kept-credentials.ts";
import { holds } from "../storage/in-flight.ts";
import type { InFlight } from "../storage/in-flight.ts";
import type { MessageMeta, StoredMessage } from "../storage/stored-message.ts";
import { sourceNameOf } from "../sources/source-config.ts";
import { queryInteger } from "./query-params.ts";
import { requireOwner } from "../access/request-auth.ts";
import type { JobFailure } from "../housekeeping.ts";

/** What these routes need of the inbox. */
export interface QueueHost {
  readonly store: InboxStore;
  requireConfig(): InboxConfig;
  inFlight(): InFlight | null;
  /** Tells a lanes agent holding these to stop (socket-session.ts abandon); sends what then has room. */
  abandon(which: Abandoned, reason: AbandonFrame["reason"]): void;
  /** A replayed message is queued: send it to the connected agent. */
  wakeConsumers(): void;
  ensureAlarm(at: number): Promise<void>;
  /** Where each source's events go now (delivery-frame.ts). */
  readonly forwardTargets: ForwardTargets;
  /** What the alarm's jobs failed at, by job (housekeeping.ts): shown with the listing. */
  housekeepingFailures(): Record<string, JobFailure>;
  /** Live requests in flight, answered, the newest's time (worker/live/). */
  liveSummary(): LiveSummary;
  /** How senders' credentials are kept for forward targets (sources/kept-credentials.ts). */
  readonly keptCredentials: KeptCredentials;
}

const LIST_MAX = 200;

/** A listed row: the queue's, or a kept one's (delivered, with its time; a search's excerpt). */
export type ListedMeta = Omit<MessageMeta, "state"> & {
  state: MessageMeta["state"] | "delivered";
  delivered_at?: number | null;
  excerpt?: string | null;
  /** A live request's entry (history-scan.ts): its live-log fields, or 1 for one held as a message. */
  live?: string | null;
  held_live?: number;
};

function itemState(meta: Pick<ListedMeta, "seq" | "state">, inFlight: InFlight | null): MessageState {
  if (meta.state === "dead" || meta.state === "delivered") return meta.state;
  return holds(inFlight, meta.seq) ? "sent" : "queued";
}

export function queueItem(meta: ListedMeta, inFlight: InFlight | null): QueueItem {
  return {
    id: meta.seq,
    state: itemState(meta, inFlight),
    kind: meta.kind,
    subpath: meta.subpath,
    content_type: meta.content_type,
    size: meta.size,
    received_at: meta.received_at,
    expires_at: meta.expires_at,
    sender: meta.sender,
    msg_id: meta.msg_id,
    type: meta.env_type,
    attempts: meta.attempts,
    reason: meta.reason,
    last_status: meta.last_status,
    dead_at: meta.dead_at,
    replay_of: meta.replay_of,
    ...(meta.lane !== null ? { lane: meta.lane } : {}),
    ...(meta.delivered_at !== undefined ? { delivered_at: meta.delivered_at } : {}),
    ...(sourceNameOf(meta.sender) !== null ? { source: sourceNameOf(meta.sender) } : {}),
    ...(typeof meta.excerpt === "string" ? { excerpt: meta.excerpt } : {}),
    ...((typeof meta.live === "string" || meta.held_live === 1) ? { live: true as const } : {}),
  };
}

/** What is kept after delivery, for `status` (a count of the day not yet closed: the owner's call only). */
function historySummary(store: InboxStore): HistorySummary {
  const gaveWay = store.readMeta("history_gave_way");
  const oldest = store.history.oldest();
  return {
    kept: store.history.keptCount(),
    oldest_at: oldest?.received_at ?? null,
    retention_sec: store.retentionMs / 1000,
    ...(gaveWay !== null ? { gave_way: JSON.parse(gaveWay) as { count: number; last_at: number } } : {}),
  };
}

export function queueSummary(host: QueueHost): QueueSummary {
  const inFlight = host.inFlight();
  const s = host.store.summary(inFlight);
  const lanes = host.store.lanes().summaries((seq) => holds(inFlight, seq), LANES_LISTED);
  const { store } = host;
  const storage = { rows_read: store.rowsRead, rows_written: store.rowsWritten, pump_rows_read: store.pumpCost.rowsRead, messages_sent: store.pumpCost.sent };
  return { queued: s.queued, sent: s.sent, dead: s.dead, oldest_waiting_at: s.oldestWaitingAt, lanes, storage, live: host.liveSummary(), credentials: host.keptCredentials.keeping(), history: historySummary(store) };
}

function messageId(text: string): number {
  const id = /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id)) throw new RelayError(400, "invalid_message_id", `"${text}" is not a message id: ids are positive integers`);
  return id;
}

function notFound(id: number): RelayError {
  return new RelayError(404, "message_not_found", `no message ${id} in this inbox: it was dropped, replayed under a new id, or delivered and not kept (or no longer: limits.retention_sec); list them with GET …/history`);
}

export function queueRoutes(host: QueueHost): Hono {
  const app = new Hono();

  app.get("/inbox/:agent_id/queue", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: false });
    const stateText = c.req.query("state") ?? "all";
    if (stateText !== "all" && stateText !== "queued" && stateText !== "sent" && stateText !== "dead") {
      throw new RelayError(400, "invalid_query", 'state must be "queued", "sent", "dead" or "all"');
    }
    const after = queryInteger(c.req.query("after"), "after", 0, Number.MAX_SAFE_INTEGER, 0);
    const limit = queryInteger(c.req.query("limit"), "limit", 1, LIST_MAX, 50);
    const inFlight = host.inFlight();
    // One more than asked, to know whether there is more.
    const items = host.store.list(after, limit + 1, stateText, inFlight).map((meta) => queueItem(meta, inFlight));
    const messages = items.slice(0, limit);
    return c.json({
      messages,
      count: messages.length,
      has_more: items.length > limit,
      next_after: messages.length > 0 ? messages[messages.length - 1]!.id : after,
      summary: queueSummary(host),
      housekeeping_failures: host.housekeepingFailures(),
    });
  });

  app.get("/inbox/:agent_id/queue/:id", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: false });
    const id = messageId(c.req.param("id"));
    // A kept message has every column of a queue row (history-store.ts); the frame does not read its state.
    const message = host.store.find(id) ?? (host.store.history.find(id) as unknown as StoredMessage | null);
    if (!message) throw notFound(id);
    const frame = shownFrame(message, host.forwardTargets);
    // `request` as stored (null for everything but a source event kept since schema 5), every credential
    // redacted, sealed or not (protocol/credential-headers.ts); `forward` the target its frame would carry.
    const request = message.request ? shownRequest(parseKeptRequest(message.request)) : null;
    return c.json({
      message: queueItem(message, host.inFlight()),
      body: frame.body,
      encoding: frame.encoding,
      headers: frame.headers ? redactHeaderRecord(frame.headers) : null,
      request,
      forward: frame.forward?.target ?? null,
    });
  });

  app.post("/inbox/:agent_id/queue/:id/replay", async (c) => {
    const config = await requireOwner(host, c.req.raw, { spendNonce: true });
    const id = messageId(c.req.param("id"));
    const message = host.store.find(id);
    if (message && message.state !== "dead") {
      throw new RelayError(409, "not_dead", `message ${id} is ${itemState(message, host.inFlight())}, not dead: only dead messages are replayed (it will be delivered anyway)`);
    }
    const expiresAt = Date.now() + config.limits.hook_ttl_sec * 1000;
    // Not in the queue: a kept (delivered, or dead past its shelf) message is queued again as a copy; it stays kept.
    const next = message ? host.store.replay(id, expiresAt) : host.store.replayKept(id, expiresAt);
    if (next === null) throw notFound(id);
    await host.ensureAlarm(expiresAt);
    host.wakeConsumers();
    return c.json({ replayed: id, id: next, state: "queued" });
  });

  app.delete("/inbox/:agent_id/queue/:id", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: true });
    const id = messageId(c.req.param("id"));
    // An older agent holding it would still post it (and retry it) into the gateway: deleting it here could
    // not take it back, so a drop that says "dropped" while it goes on being delivered is refused. A lanes
    // agent is told to abandon it.
    const inFlight = host.inFlight();
    const lanesHeld = inFlight !== null && "ids" in inFlight && holds(inFlight, id);
    const was = host.store.drop(id, lanesHeld ? null : inFlight);
    if (lanesHeld && was !== null) {
      host.abandon({ ids: [id] }, "dropped");
      return c.json({ dropped: id, was: "sent" });
    }
    if (was === "in_flight") {
      throw new RelayError(409, "in_flight", `message ${id} is sent: the connected agent is delivering it now. Wait until the gateway takes it (then it is gone) or refuses it (then it is dead, and can be dropped); or stop the agent, after which it is queued and can be dropped`);
    }
    const kept = was === null ? host.store.removeKept(id) : null;
    if (!was && !kept) throw notFound(id);
    return c.json({ dropped: id, was: was ?? kept });
  });

  return app;
}
