// What bounds the inbox's sockets: how many may wait for authentication at once, how big a client
// frame may be, and how long a socket the server closed may wait for its peer's close frame before the
// inbox ends it (never while the owner's agent is connected). Counted from ctx.getWebSockets() and each socket's attachment, never from memory, since
// sockets outlive hibernation. Used by inbox-routes.ts (the upgrade), client-frames.ts (the frame size),
// housekeeping.ts and inbox.ts (the alarm, webSocketError); covered by test/worker/websocket-limits.test.ts,
// test/worker/websocket-proof.test.ts, test/node/socket-close.e2e.test.ts and test/node/lockout.e2e.test.ts.
import { RelayError, utf8 } from "../../protocol/index.ts";
import { closeSocket, stateOf } from "./socket-session.ts";
import { socketTimings } from "./socket-timings.ts";

export { CLOSE_ANSWER_GRACE_MS } from "./socket-timings.ts";

/**
 * Anonymous sockets of one inbox that have not authenticated, open or closed by the server and not yet
 * answered. One older agent needs one; a restart or two a few more. Above it an upgrade is refused, so a
 * flood of connections holds at most this many (it was unbounded: 2,000 were all accepted). A proven
 * upgrade (upgrade-proof.ts: the owner's agent signed it) is neither counted nor refused.
 */
export const UNAUTHENTICATED_SOCKET_CAP = 16;

/**
 * While the owner's agent is connected, or its proven upgrade is open, a socket that ignores the close
 * frame is not ended (ctx.abort() ends every connection, the agent's too): it stays counted under the cap
 * until the runtime drops it, and the alarm looks again this often to end it once the agent is gone.
 */
export const UNANSWERED_RECHECK_MS = 60_000;

/**
 * A client frame is a few hundred bytes (auth, ack, a reject's reason cut to 1,000 characters, a hub
 * token of at most 4,096), a live answer's at most LIVE.answerChunkBytes of body (about 350 KiB as base64
 * with its headers). Anything past this is refused before it is parsed; the runtime itself stops
 * at 32 MiB.
 */
export const MAX_CLIENT_FRAME_BYTES = 1024 * 1024;

/** RFC 6455's close code for a message too big to process. */
export const CLOSE_MESSAGE_TOO_BIG = 1009;

/** The owner's agent is connected, or on its way: an open authenticated socket, or an open proven one. */
function ownerHere(sockets: readonly WebSocket[]): boolean {
  return sockets.some((ws) => {
    const state = ws.readyState === WebSocket.OPEN ? stateOf(ws) : null;
    return state !== null && (state.authed || state.proven === true);
  });
}

/**
 * When each anonymous unauthenticated socket is gone at the latest: an open one is closed at its deadline,
 * a closed one ended by the inbox once its peer had its grace to answer.
 */
function endsAt(sockets: readonly WebSocket[]): number[] {
  const wait = socketTimings().closeAnswerGraceMs;
  const out: number[] = [];
  for (const ws of sockets) {
    const state = stateOf(ws);
    if (!state || state.authed || state.proven || ws.readyState === WebSocket.CLOSED) continue;
    out.push((state.closedAt ?? Math.max(state.deadline, 0)) + wait);
  }
  return out;
}

/**
 * Refuses an anonymous upgrade while UNAUTHENTICATED_SOCKET_CAP such sockets wait (429, Retry-After), else
 * null. `refusedProof`: why the upgrade's proof did not hold, when it carried one (named in the 429).
 */
export function admitSocket(sockets: readonly WebSocket[], nowMs: number, refusedProof: string | null = null): RelayError | null {
  const waiting = endsAt(sockets);
  if (waiting.length < UNAUTHENTICATED_SOCKET_CAP) return null;
  const retryAfter = Math.max(1, Math.ceil((Math.min(...waiting) - nowMs) / 1000));
  const bypass = refusedProof
    ? `this upgrade's proof was refused (${refusedProof}), so it waits with the others`
    : "the inbox's own agent is never refused when it signs its upgrade: update clawrelay on the agent's machine";
  return new RelayError(
    429,
    "too_many_connections",
    `this inbox already has ${waiting.length} connections that have not authenticated (at most ${UNAUTHENTICATED_SOCKET_CAP}, each answers its challenge within ${socketTimings().authDeadlineMs / 1000} s or is closed): retry in ${retryAfter} s; ${bypass}`,
    { "retry-after": String(retryAfter) },
  );
}

export interface ReapPlan {
  /** Why every connection of the inbox must end now, or null. */
  reap: string | null;
  /** When to look again (an unanswered close whose grace has not run out, or one held for the agent), or null. */
  checkAt: number | null;
}

/**
 * Unauthenticated sockets the server closed and whose peer never answered. The runtime keeps such a
 * connection until the peer answers or drops it (measured on local workerd: over 120 s, idle or still
 * sending; hibernation does not end it either) and has no call that ends one socket, so the inbox ends
 * them all with ctx.abort() — only while the owner's agent is neither connected nor connecting with a
 * proven upgrade: a peer that ignores closes never disconnects the agent (it once did, after 62 s).
 */
export function reapPlan(sockets: readonly WebSocket[], nowMs: number): ReapPlan {
  const wait = socketTimings().closeAnswerGraceMs;
  let overdue = 0;
  let checkAt: number | null = null;
  const lookAt = (at: number) => (checkAt = checkAt === null ? at : Math.min(checkAt, at));
  for (const ws of sockets) {
    const state = stateOf(ws);
    if (!state || state.authed || state.closedAt === undefined || ws.readyState !== WebSocket.CLOSING) continue;
    const due = state.closedAt + wait;
    if (due <= nowMs) overdue += 1;
    else lookAt(due);
  }
  if (overdue === 0) return { reap: null, checkAt };
  if (ownerHere(sockets)) return { reap: null, checkAt: lookAt(nowMs + UNANSWERED_RECHECK_MS) };
  return { reap: `${overdue} unauthenticated socket(s) did not answer the close frame within ${wait / 1000} s`, checkAt };
}

/**
 * Resets the object: the only way the runtime offers to end a socket whose peer ignores the close (it
 * waits for the peer for ever), and it ends every connection of the inbox — none of them the owner's agent
 * (reapPlan waits while it is connected or connecting). What is stored, the next alarm included, is kept.
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
