// What bounds the inbox's sockets: how many may wait for authentication at once, how big a client
// frame may be, and how long a socket the server closed may wait for its peer's close frame before the
// inbox ends it. Counted from ctx.getWebSockets() and each socket's attachment, never from memory, since
// sockets outlive hibernation. Used by inbox-routes.ts (the upgrade), client-frames.ts (the frame size),
// housekeeping.ts and inbox.ts (the alarm, webSocketError); covered by test/worker/websocket-limits.test.ts and
// test/node/socket-close.e2e.test.ts.
import { RelayError, utf8 } from "../../protocol/index.ts";
import { closeSocket, stateOf } from "./socket-session.ts";
import { socketTimings } from "./socket-timings.ts";

export { CLOSE_ANSWER_GRACE_MS } from "./socket-timings.ts";

/**
 * Sockets of one inbox that have not authenticated, open or closed by the server and not yet answered.
 * One agent needs one; a restart or two a few more. Above it an upgrade is refused, so a flood of
 * connections holds at most this many (it was unbounded: 2,000 were all accepted).
 */
export const UNAUTHENTICATED_SOCKET_CAP = 16;

/**
 * While an agent is connected, ending the connections that never answered also ends the agent's
 * (ctx.abort() is all-or-nothing): they wait this much longer, so a peer that ignores close frames
 * costs the agent at most one reconnect a minute, and an unanswered socket still ends within ~62 s.
 */
export const UNANSWERED_WAIT_WITH_AGENT_MS = 60_000;

/**
 * A client frame is a few hundred bytes (auth, ack, a reject's reason cut to 1,000 characters, a hub
 * token of at most 4,096), a live answer's at most LIVE.answerChunkBytes of body (about 350 KiB as base64
 * with its headers). Anything past this is refused before it is parsed; the runtime itself stops
 * at 32 MiB.
 */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;

/** RFC 6455's close code for a message too big to process. */
export const CLOSE_MESSAGE_TOO_BIG = 1009;

function agentConnected(sockets: readonly WebSocket[]): boolean {
  return sockets.some((ws) => ws.readyState === WebSocket.OPEN && stateOf(ws)?.authed === true);
}

/** How long after the server's close frame an unanswered socket is ended. */
function closeWait(sockets: readonly WebSocket[]): number {
  return socketTimings().closeAnswerGraceMs + (agentConnected(sockets) ? UNANSWERED_WAIT_WITH_AGENT_MS : 0);
}

/**
 * When each unauthenticated socket is gone at the latest: an open one is closed at its deadline, a
 * closed one ended by the inbox once its peer had its grace to answer.
 */
function endsAt(sockets: readonly WebSocket[]): number[] {
  const wait = closeWait(sockets);
  const out: number[] = [];
  for (const ws of sockets) {
    const state = stateOf(ws);
    if (!state || state.authed || ws.readyState === WebSocket.CLOSED) continue;
    out.push((state.closedAt ?? Math.max(state.deadline, 0)) + wait);
  }
  return out;
}

/** Refuses an upgrade while UNAUTHENTICATED_SOCKET_CAP sockets wait (429, Retry-After), else null. */
export function admitSocket(sockets: readonly WebSocket[], nowMs: number): RelayError | null {
  const waiting = endsAt(sockets);
  if (waiting.length < UNAUTHENTICATED_SOCKET_CAP) return null;
  const retryAfter = Math.max(1, Math.ceil((Math.min(...waiting) - nowMs) / 1000));
  return new RelayError(
    429,
    "too_many_connections",
    `this inbox already has ${waiting.length} connections that have not authenticated (at most ${UNAUTHENTICATED_SOCKET_CAP}, each answers its challenge within ${socketTimings().authDeadlineMs / 1000} s or is closed): retry in ${retryAfter} s`,
    { "retry-after": String(retryAfter) },
  );
}

export interface ReapPlan {
  /** Why every connection of the inbox must end now, or null. */
  reap: string | null;
  /** When to look again (an unanswered close whose grace has not run out yet), or null. */
  checkAt: number | null;
}

/**
 * Unauthenticated sockets the server closed and whose peer never answered. The runtime keeps such a
 * connection until the peer answers or drops it (measured on local workerd: over 120 s, idle or still
 * sending; hibernation does not end it either) and has no call that ends one socket, so the inbox ends
 * them all with ctx.abort() — at once when no agent is connected, else after UNANSWERED_WAIT_WITH_AGENT_MS.
 */
export function reapPlan(sockets: readonly WebSocket[], nowMs: number): ReapPlan {
  const wait = closeWait(sockets);
  let overdue = 0;
  let checkAt: number | null = null;
  for (const ws of sockets) {
    const state = stateOf(ws);
    if (!state || state.authed || state.closedAt === undefined || ws.readyState !== WebSocket.CLOSING) continue;
    const due = state.closedAt + wait;
    if (due <= nowMs) overdue += 1;
    else checkAt = checkAt === null ? due : Math.min(checkAt, due);
  }
  const reap = overdue > 0 ? `${overdue} unauthenticated socket(s) did not answer the close frame within ${wait / 1000} s` : null;
  return { reap, checkAt };
}

/**
 * Resets the object: the only way the runtime offers to end a socket whose peer ignores the close (it
 * waits for the peer for ever), and it ends every connection of the inbox. What is stored, the next
 * alarm included, is kept; a connected agent reconnects and resumes from its cursor, as after a deploy.
 * ctx.abort() throws, so the alarm that calls it last is retried by the runtime (housekeeping is idempotent).
 */
export async function endEveryConnection(ctx: DurableObjectState, why: string): Promise<void> {
  console.warn(`Inbox.alarm: ${why}; ending every connection of this inbox`);
  await ctx.storage.sync();
  ctx.abort(`clawrelay: ${why}`);
}

/** Whether a frame is over MAX_CLIENT_FRAME_BYTES in UTF-8 (short text is never encoded to be measured). */
export function frameTooLarge(data: string | ArrayBuffer): boolean {
  if (typeof data !== "string") return data.byteLength > MAX_CLIENT_FRAME_BYTES;
  // A UTF-16 unit is 1 to 3 UTF-8 bytes.
  if (data.length * 3 <= MAX_CLIENT_FRAME_BYTES) return false;
  return data.length > MAX_CLIENT_FRAME_BYTES || utf8(data).byteLength > MAX_CLIENT_FRAME_BYTES;
}

/**
 * The Durable Object's webSocketError. A frame over the runtime's 32 MiB limit lands here, not in
 * webSocketMessage ("WebSocket protocol error; protocolError.statusCode = 1009; … Message is too large"):
 * the runtime has sent close 1009 itself and drops the socket after this event. A refusal of the peer's,
 * not a failure of the relay, so it is one warning line; the close is repeated in case it was not sent.
 */
export function answerSocketError(ws: WebSocket, error: unknown): void {
  const text = error instanceof Error ? error.message : String(error);
  if (!/statusCode = 1009|message is too large/i.test(text)) {
    console.error("Inbox.webSocketError:", error);
    return;
  }
  console.warn(`Inbox.webSocketError: a frame over the runtime's 32 MiB limit, closed with ${CLOSE_MESSAGE_TOO_BIG}`);
  closeSocket(ws, CLOSE_MESSAGE_TOO_BIG, "frame_too_large");
}
