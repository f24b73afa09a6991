// One local agent's WebSocket once authenticated: windowed delivery, acknowledgements and rejects.
// State lives in the socket's attachment so it survives hibernation (the runtime keeps at most 16 KB per socket).
// Two modes once authenticated: an older agent's (no "lanes" in its auth) is sent queued ids in order over
// one contiguous range, as before; a lanes agent's is sent what each lane has room for (lane-pump.ts), and
// its attachment holds the ids in flight (at most MAX_WINDOW of them: a few KB). Either may speak live too
// (it may be sent live requests: worker/live/). The challenge and auth are socket-auth.ts's. Covered by
// test/worker/websocket-delivery.test.ts (older agents) and test/worker/websocket-lanes.test.ts.
import { DEFAULT_WINDOW, MAX_WINDOW, PROTOCOL_FEATURES } from "../../protocol/index.ts";
import type { AbandonFrame, HubLinkMode, RejectFrame, ServerFrame } from "../../protocol/index.ts";
import { deliveryFrame, framesReady } from "./delivery-frame.ts";
import type { FrameSources } from "./delivery-frame.ts";
import { nextToSend } from "./lane-pump.ts";
import { deadTtlSec } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { InFlight } from "../storage/in-flight.ts";

/** An older agent's socket was sent every queued id in (from, sentUpTo]: those still queued are in flight on it. */
export interface RangeSocket {
  authed: true;
  /** The cursor it authenticated with (sockets from before it existed lack it). */
  from?: number;
  sentUpTo: number;
  window: number;
  /** It named "live": it may be sent live requests (worker/live/). */
  live?: true;
}

/** A lanes agent's socket: exactly `inflight` were sent on it and are not finished (ids only: the 16 KB limit). */
export interface LanesSocket {
  authed: true;
  lanes: true;
  window: number;
  inflight: number[];
  /** The last floor this socket was told (on a message frame or a floor frame). */
  floor?: number;
  live?: true;
}

export type SocketState =
  /**
   * `closedAt`: when the server sent its close frame (socket-limits.ts ends the connection if the peer never
   * answers). `proven`: its upgrade was signed by a key of the inbox (upgrade-proof.ts): the cap does not count it.
   */
  | { authed: false; nonce: string; deadline: number; closedAt?: number; proven?: true }
  | RangeSocket
  | LanesSocket;

function lanesState(state: SocketState | null): LanesSocket | null {
  return state?.authed && "lanes" in state ? state : null;
}

/**
 * Sends a frame if the socket is still open. A socket the server closed stays in getWebSockets()
 * until the peer answers the close (a vanished peer never does), and send() on it throws.
 */
export function send(ws: WebSocket, frame: ServerFrame): boolean {
  if (ws.readyState !== WebSocket.OPEN) return false;
  try {
    ws.send(JSON.stringify(frame));
    return true;
  } catch {
    return false;
  }
}

/**
 * Closes with a reason, ignoring a socket that is already closing. An unauthenticated socket keeps
 * when, so the alarm can end its connection if the peer never answers (socket-limits.ts).
 */
export function closeSocket(ws: WebSocket, code: number, reason: string, nowMs = Date.now()): void {
  const state = stateOf(ws);
  if (state && !state.authed && state.closedAt === undefined && ws.readyState === WebSocket.OPEN) {
    ws.serializeAttachment({ ...state, closedAt: nowMs } satisfies SocketState);
  }
  try {
    ws.close(code, reason);
  } catch {
    // Already closed by the peer: nothing left to tell it.
  }
}

export function stateOf(ws: WebSocket): SocketState | null {
  return (ws.deserializeAttachment() as SocketState | null) ?? null;
}

/** What sending messages needs: the queue, where each source's events go now and their kept credentials (delivery-frame.ts). */
export interface Outgoing extends FrameSources {
  readonly store: InboxStore;
}

/** Whether an auth frame's features and this relay's make a lanes connection. */
export function speaksLanes(features: readonly string[] | undefined): boolean {
  return features?.includes(PROTOCOL_FEATURES.lanes) === true;
}

/** Whether an auth frame's features make a live connection (the relay may send it `request` frames). */
export function speaksLive(features: readonly string[] | undefined): boolean {
  return features?.includes(PROTOCOL_FEATURES.live) === true;
}

/** Of an open authenticated socket, whether it speaks live; null for any other socket. */
export function speaksLiveNow(ws: WebSocket): boolean | null {
  const state = stateOf(ws);
  if (!state?.authed || ws.readyState !== WebSocket.OPEN) return null;
  return state.live === true;
}

/** Marks the socket authenticated, resuming after `after` (already acknowledged by the caller); `speaks` from speaksLanes and speaksLive. */
export function beginDelivery(ws: WebSocket, out: Outgoing, after: number, requestedWindow: number | undefined, hub: { prefix: string; mode: HubLinkMode }, speaks: { lanes: boolean; live: boolean }): void {
  const { store } = out;
  const window = Math.min(MAX_WINDOW, Math.max(1, requestedWindow ?? DEFAULT_WINDOW));
  const live = speaks.live ? { live: true as const } : {};
  const state: SocketState = speaks.lanes ? { authed: true, lanes: true, window, inflight: [], ...live } : { authed: true, from: after, sentUpTo: after, window, ...live };
  ws.serializeAttachment(state);
  const summary = store.summary(null);
  const features = [...(speaks.lanes ? [PROTOCOL_FEATURES.lanes] : []), ...(speaks.live ? [PROTOCOL_FEATURES.live] : [])];
  send(ws, {
    type: "ready", after, backlog: summary.queued, window, dead: summary.dead, last_id: store.queueStats().lastSeq, hub_prefix: hub.prefix, hub_mode: hub.mode,
    ...(features.length > 0 ? { features } : {}),
  });
  pump(ws, out);
}

/**
 * An ack or reject must name a message this socket was sent and that is still queued; anything else
 * (an id never sent, one already finished, a guess) changes nothing and is answered with an error.
 * The store checks it in the same statement that deletes or shelves the message.
 */
function inFlightHere(ws: WebSocket): InFlight | null {
  const state = stateOf(ws);
  if (!state?.authed) return null;
  return "lanes" in state ? { ids: state.inflight } : { from: state.from ?? 0, upTo: state.sentUpTo };
}

/** A lanes socket no longer holds `ids` (finished, dropped, or to be sent again). */
function release(ws: WebSocket, ids: readonly number[]): void {
  const state = lanesState(stateOf(ws));
  if (!state) return;
  ws.serializeAttachment({ ...state, inflight: state.inflight.filter((id) => !ids.includes(id)) } satisfies LanesSocket);
}

/** Messages a lanes agent is to abandon: these ids, or every one it holds of a lane. */
export type Abandoned = { ids: readonly number[] } | { lane: string };

/**
 * Tells a lanes socket it no longer holds these messages (the owner dropped them: already deleted; or their
 * source's target or policy changed: sent again now with the new `forward`), then sends what has room.
 * An older agent's socket is left alone.
 */
export function abandon(ws: WebSocket, out: Outgoing, which: Abandoned, reason: AbandonFrame["reason"]): void {
  const state = lanesState(stateOf(ws));
  if (!state || ws.readyState !== WebSocket.OPEN) return;
  const index = out.store.lanes();
  const held = state.inflight.filter((id) => ("ids" in which ? which.ids.includes(id) : index.laneOf(id) === which.lane));
  if (held.length === 0) return;
  for (const id of held) send(ws, { type: "abandon", id, reason });
  release(ws, held);
  pump(ws, out);
}

/** What the authenticated socket among `sockets` holds in flight (one consumer at a time). */
export function inFlightOf(sockets: readonly WebSocket[]): InFlight | null {
  for (const ws of sockets) {
    const inFlight = ws.readyState === WebSocket.OPEN ? inFlightHere(ws) : null;
    if (inFlight) return inFlight;
  }
  return null;
}

function refuseFrame(ws: WebSocket, frame: "ack" | "reject", id: number): void {
  send(ws, {
    type: "error",
    code: "not_in_flight",
    id,
    message: `${frame} of id ${id} ignored: it was not sent on this connection or is already finished; nothing changed`,
  });
}

/** The agent finished `id`: delete it and send the next. */
export function acknowledge(ws: WebSocket, out: Outgoing, id: number): void {
  const inFlight = inFlightHere(ws);
  if (!inFlight || out.store.acknowledge({ id, inFlight }) === 0) return refuseFrame(ws, "ack", id);
  release(ws, [id]);
  pump(ws, out);
}

/**
 * The gateway refused `id` for its content: shelve it with the agent's reason and free its slot.
 * Returns when the shelf lets go of it (for the alarm), or null when the reject was refused.
 */
export function reject(ws: WebSocket, out: Outgoing, config: InboxConfig, frame: RejectFrame, nowMs: number): number | null {
  const inFlight = inFlightHere(ws);
  const dead = {
    reason: frame.reason,
    status: frame.status ?? null,
    attempts: frame.attempts ?? 1,
    nowMs,
    keepUntil: nowMs + deadTtlSec(config) * 1000,
  };
  if (!inFlight || !out.store.markDead(frame.id, dead, inFlight)) {
    refuseFrame(ws, "reject", frame.id);
    return null;
  }
  // Confirmed, so the client's resume cursor may pass it: an `after` deletes queued messages only,
  // and until this frame the client cannot know the relay did not lose its reject.
  send(ws, { type: "rejected", id: frame.id });
  release(ws, [frame.id]);
  pump(ws, out);
  return dead.keepUntil;
}

/**
 * A lanes socket: what each lane has room for (lane-pump.ts), each frame with its lane, the floor (no id
 * at or below it is queued now) and whether it was restored. Ids it holds that are no longer queued are
 * let go first (a drop or expiry never takes one, but a late ack on the socket it replaced may).
 */
function pumpLanes(ws: WebSocket, state: LanesSocket, out: Outgoing): number {
  const { store, forwardTargets } = out;
  const index = store.lanes();
  const inflight = state.inflight.filter((id) => index.laneOf(id) !== null);
  // Those whose kept credentials are still being opened wait for the next pump (framesReady).
  const ready = framesReady(nextToSend(index, inflight, state.window, forwardTargets).map((seq) => store.find(seq)!), out);
  const next = ready.map((message) => message.seq);
  const floor = (index.lowest() ?? store.queueStats().lastSeq + 1) - 1;
  // Holding nothing and sent nothing: the agent hears of a floor that moved on, or its resume cursor
  // would wait for the next message to pass what it finished.
  const idleFloor = next.length === 0 && inflight.length === 0 && floor > (state.floor ?? 0);
  if (next.length === 0 && inflight.length === state.inflight.length && !idleFloor) return 0;
  for (const message of ready) {
    send(ws, { ...deliveryFrame(message, out), lane: index.laneOf(message.seq)!, floor, ...(message.restored ? { restored: true } : {}) });
  }
  if (idleFloor) send(ws, { type: "floor", floor });
  ws.serializeAttachment({ ...state, inflight: [...inflight, ...next], ...(next.length > 0 || idleFloor ? { floor } : {}) } satisfies LanesSocket);
  return next.length;
}

/**
 * Sends queued messages until `window` are unacknowledged on this socket: in id order, or by lane. The
 * rows its reads cost and the messages it sent are counted (the owner's queue summary shows them).
 */
export function pump(ws: WebSocket, out: Outgoing): void {
  const state = stateOf(ws);
  if (!state?.authed || ws.readyState !== WebSocket.OPEN) return;
  const rowsBefore = out.store.rowsRead;
  const sent = "lanes" in state ? pumpLanes(ws, state, out) : pumpRange(ws, state, out);
  out.store.notePump(out.store.rowsRead - rowsBefore, sent);
}

/** An older agent's socket: the next ids after what it was sent, while fewer than `window` are unacknowledged. */
function pumpRange(ws: WebSocket, state: RangeSocket, out: Outgoing): number {
  const { store } = out;
  const free = state.window - store.countQueuedIn(state.from ?? 0, state.sentUpTo);
  if (free <= 0) return 0;
  const batch = framesReady(store.messagesAfter(state.sentUpTo, free), out);
  if (batch.length === 0) return 0;
  for (const message of batch) send(ws, deliveryFrame(message, out));
  ws.serializeAttachment({ ...state, sentUpTo: batch[batch.length - 1]!.seq } satisfies RangeSocket);
  return batch.length;
}
