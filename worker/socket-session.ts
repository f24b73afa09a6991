// One local agent's WebSocket: challenge, authentication, windowed delivery and acknowledgements.
// State lives in the socket's attachment so it survives hibernation (≤ 16 KB, cloudflare.md).
import {
  AUTH_DEADLINE_MS,
  CLOSE_CODES,
  DEFAULT_WINDOW,
  MAX_WINDOW,
  connectSigningInput,
  fromBase64,
  parsePublicKey,
  randomBytes,
  toBase64Url,
  verifyWebCrypto,
} from "../protocol/index.ts";
import type { ClientFrame, ServerFrame } from "../protocol/index.ts";
import { deliveryFrame } from "./delivery-frame.ts";
import { keyMayActFor } from "./inbox-config.ts";
import type { InboxConfig } from "./inbox-config.ts";
import type { InboxStore } from "./inbox-store.ts";

export type SocketState =
  | { authed: false; nonce: string; deadline: number }
  | { authed: true; sentUpTo: number; window: number };

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

/** Closes with a reason, ignoring a socket that is already closing. */
export function closeSocket(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed by the peer: nothing left to tell it.
  }
}

export function stateOf(ws: WebSocket): SocketState | null {
  return (ws.deserializeAttachment() as SocketState | null) ?? null;
}

/** Starts a session: the client must answer this challenge within AUTH_DEADLINE_MS. */
export function openSession(ws: WebSocket, agentId: string, nowMs: number): number {
  const nonce = toBase64Url(randomBytes(24));
  const deadline = nowMs + AUTH_DEADLINE_MS;
  ws.serializeAttachment({ authed: false, nonce, deadline } satisfies SocketState);
  send(ws, { type: "challenge", agent_id: agentId, nonce });
  return deadline;
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
    keyMayActFor(config, config.agent_id, frame.key) &&
    (await verifyWebCrypto(key, connectSigningInput(config.agent_id, state.nonce), signature));
  if (!ok) {
    send(ws, { type: "error", code: "auth_failed", message: `sign "clawrelay-connect/1\\n${config.agent_id}\\n<nonce>" with a key of this inbox` });
    closeSocket(ws, CLOSE_CODES.authFailed, "auth_failed");
  }
  return ok;
}

/** Marks the socket authenticated, resuming after `after` (already acknowledged by the caller). */
export function beginDelivery(ws: WebSocket, store: InboxStore, after: number, requestedWindow: number | undefined): void {
  const window = Math.min(MAX_WINDOW, Math.max(1, requestedWindow ?? DEFAULT_WINDOW));
  ws.serializeAttachment({ authed: true, sentUpTo: after, window } satisfies SocketState);
  send(ws, { type: "ready", after, backlog: store.queueStats().count, window });
  pump(ws, store);
}

/** Sends stored messages in order until `window` are unacknowledged on this socket. */
export function pump(ws: WebSocket, store: InboxStore): void {
  const state = stateOf(ws);
  if (!state?.authed || ws.readyState !== WebSocket.OPEN) return;
  const free = state.window - store.countUpTo(state.sentUpTo);
  if (free <= 0) return;
  const batch = store.messagesAfter(state.sentUpTo, free);
  if (batch.length === 0) return;
  for (const message of batch) send(ws, deliveryFrame(message));
  ws.serializeAttachment({ ...state, sentUpTo: batch[batch.length - 1]!.seq } satisfies SocketState);
}
