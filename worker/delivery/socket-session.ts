// One local agent's WebSocket: challenge, authentication, windowed delivery and acknowledgements.
// State lives in the socket's attachment so it survives hibernation (the runtime keeps at most 16 KB per socket).
// Two modes once authenticated: an older agent's (no "lanes" in its auth) is sent queued ids in order over
// one contiguous range, as before; a lanes agent's is sent what each lane has room for (lane-pump.ts), and
// its attachment holds the ids in flight (at most MAX_WINDOW of them: a few KB). Covered by
// test/worker/websocket-delivery.test.ts (older agents) and test/worker/websocket-lanes.test.ts.
import {
  CLOSE_CODES,
  DEFAULT_WINDOW,
  MAX_WINDOW,
  PROTOCOL_FEATURES,
  connectSigningInput,
  fromBase64,
  parsePublicKey,
  randomBytes,
  toBase64Url,
  verifyWebCrypto,
} from "../../protocol/index.ts";
import type { AbandonFrame, ClientFrame, HubLinkMode, RejectFrame, ServerFrame } from "../../protocol/index.ts";
import { deliveryFrame } from "./delivery-frame.ts";
import type { ForwardTargets } from "./delivery-frame.ts";
import { nextToSend } from "./lane-pump.ts";
import { keyMayActFor } from "../inbox-config.ts";
import { deadTtlSec } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { InFlight } from "../storage/in-flight.ts";
import { socketTimings } from "./socket-timings.ts";

/** An older agent's socket was sent every queued id in (from, sentUpTo]: those still queued are in flight on it. */
export interface RangeSocket {
  authed: true;
  /** The cursor it authenticated with (sockets from before it existed lack it). */
  from?: number;
  sentUpTo: number;
  window: number;
}

/** A lanes agent's socket: exactly `inflight` were sent on it and are not finished (ids only: the 16 KB limit). */
export interface LanesSocket {
  authed: true;
  lanes: true;
  window: number;
  inflight: number[];
  /** The last floor this socket was told (on a message frame or a floor frame). */
  floor?: number;
}

export type SocketState =
  /** `closedAt`: when the server sent its close frame (socket-limits.ts ends the connection if the peer never answers). */
  | { authed: false; nonce: string; deadline: number; closedAt?: number }
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

/** Starts a session: the client must answer this challenge within the auth deadline (socket-timings.ts). */
export function openSession(ws: WebSocket, config: InboxConfig, nowMs: number): number {
  const nonce = toBase64Url(randomBytes(24));
  const deadline = nowMs + socketTimings().authDeadlineMs;
  ws.serializeAttachment({ authed: false, nonce, deadline } satisfies SocketState);
  send(ws, { type: "challenge", agent_id: config.agent_id, nonce, epoch: inboxEpoch(config) });
  return deadline;
}

/**
 * Closes a socket that has not authenticated by its deadline (4001). Returns the deadline when it
 * still has time, null otherwise (closed now, or authenticated).
 */
export function closeIfAuthOverdue(ws: WebSocket, nowMs: number): number | null {
  const state = stateOf(ws);
  if (!state || state.authed) return null;
  if (state.deadline > nowMs) return state.deadline;
  send(ws, { type: "error", code: "auth_timeout", message: `no auth frame arrived within ${socketTimings().authDeadlineMs / 1000} s of the challenge` });
  closeSocket(ws, CLOSE_CODES.authTimeout, "auth_timeout", nowMs);
  return null;
}

export async function authenticate(
  ws: WebSocket,
  state: Extract<SocketState, { authed: false }>,
  frame: Extract<ClientFrame, { type: "auth" }>,
  config: InboxConfig,
): Promise<boolean> {
  const key = parsePublicKey(frame.key);
  const signature = fromBase64(frame.signature);
  const ok =
    !!key &&
    !!signature &&
    (await keyMayActFor(config, config.agent_id, frame.key)) &&
    (await verifyWebCrypto(key, connectSigningInput(config.agent_id, state.nonce), signature));
  if (!ok) {
    send(ws, { type: "error", code: "auth_failed", message: `sign "clawrelay-connect/1\\n${config.agent_id}\\n<nonce>" with a key of this inbox` });
    closeSocket(ws, CLOSE_CODES.authFailed, "auth_failed");
  }
  return ok;
}

/** What sending messages needs: the queue, and where each source's events go now (delivery-frame.ts). */
export interface Outgoing {
  readonly store: InboxStore;
  readonly forwardTargets: ForwardTargets;
}

/** Whether an auth frame's features and this relay's make a lanes connection. */
export function speaksLanes(features: readonly string[] | undefined): boolean {
  return features?.includes(PROTOCOL_FEATURES.lanes) === true;
}

/** Marks the socket authenticated, resuming after `after` (already acknowledged by the caller); `lanes` from speaksLanes. */
export function beginDelivery(ws: WebSocket, out: Outgoing, after: number, requestedWindow: number | undefined, hub: { prefix: string; mode: HubLinkMode }, lanes: boolean): void {
  const { store } = out;
  const window = Math.min(MAX_WINDOW, Math.max(1, requestedWindow ?? DEFAULT_WINDOW));
  const state: SocketState = lanes ? { authed: true, lanes: true, window, inflight: [] } : { authed: true, from: after, sentUpTo: after, window };
  ws.serializeAttachment(state);
  const summary = store.summary(null);
  send(ws, {
    type: "ready", after, backlog: summary.queued, window, dead: summary.dead, last_id: store.queueStats().lastSeq, hub_prefix: hub.prefix, hub_mode: hub.mode,
    ...(lanes ? { features: [PROTOCOL_FEATURES.lanes] } : {}),
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

/** The inbox's life: when it was first claimed (kept by every later claim, new only after a wipe). */
export function inboxEpoch(config: InboxConfig): string {
  return String(config.claimed_at);
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
function pumpLanes(ws: WebSocket, state: LanesSocket, { store, forwardTargets }: Outgoing): number {
  const index = store.lanes();
  const inflight = state.inflight.filter((id) => index.laneOf(id) !== null);
  const next = nextToSend(index, inflight, state.window, forwardTargets);
  const floor = (index.lowest() ?? store.queueStats().lastSeq + 1) - 1;
  // Holding nothing and sent nothing: the agent hears of a floor that moved on, or its resume cursor
  // would wait for the next message to pass what it finished.
  const idleFloor = next.length === 0 && inflight.length === 0 && floor > (state.floor ?? 0);
  if (next.length === 0 && inflight.length === state.inflight.length && !idleFloor) return 0;
  for (const seq of next) {
    const message = store.find(seq)!;
    send(ws, { ...deliveryFrame(message, forwardTargets), lane: index.laneOf(seq)!, floor, ...(message.restored ? { restored: true } : {}) });
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
function pumpRange(ws: WebSocket, state: RangeSocket, { store, forwardTargets }: Outgoing): number {
  const free = state.window - store.countQueuedIn(state.from ?? 0, state.sentUpTo);
  if (free <= 0) return 0;
  const batch = store.messagesAfter(state.sentUpTo, free);
  if (batch.length === 0) return 0;
  for (const message of batch) send(ws, deliveryFrame(message, forwardTargets));
  ws.serializeAttachment({ ...state, sentUpTo: batch[batch.length - 1]!.seq } satisfies RangeSocket);
  return batch.length;
}
