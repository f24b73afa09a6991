// A local agent's socket before it is authenticated: the challenge, its deadline (socket-timings.ts), and
// checking the auth frame's signature against the inbox's keys (a proven upgrade's socket answers the same
// challenge). Moved out of socket-session.ts, which takes over once the socket is authenticated. Used by
// inbox-routes.ts (openSession), client-frames.ts and housekeeping.ts (closeIfAuthOverdue); covered by
// test/worker/websocket-auth.test.ts, test/worker/websocket-limits.test.ts and test/worker/websocket-proof.test.ts.
import { CLOSE_CODES, connectSigningInput, fromBase64, parsePublicKey, randomBytes, toBase64Url, verifyWebCrypto } from "../../protocol/index.ts";
import type { ClientFrame } from "../../protocol/index.ts";
import { keyMayActFor } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import { closeSocket, send, stateOf } from "./socket-session.ts";
import type { SocketState } from "./socket-session.ts";
import { socketTimings } from "./socket-timings.ts";

/**
 * Starts a session: the client must answer this challenge within the auth deadline (socket-timings.ts),
 * a proven upgrade (upgrade-proof.ts) too — the proof only spares it the cap, it authenticates nothing.
 */
export function openSession(ws: WebSocket, config: InboxConfig, nowMs: number, proven = false): number {
  const nonce = toBase64Url(randomBytes(24));
  const deadline = nowMs + socketTimings().authDeadlineMs;
  ws.serializeAttachment({ authed: false, nonce, deadline, ...(proven ? { proven: true as const } : {}) } satisfies SocketState);
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

/** The inbox's life: when it was first claimed (kept by every later claim, new only after a wipe). */
export function inboxEpoch(config: InboxConfig): string {
  return String(config.claimed_at);
}
