// Which conversation a message belongs to, the one key that order is kept within: the agent's delivery
// lines (local-agent/delivery/conversation.ts) key on it now, the relay's per-destination lanes and the
// message history are to. Its input is what either side holds — a delivery frame on the agent, a stored
// message on the relay — reduced to the three things that decide: a webhook source forwarded to a local
// app, a signed envelope delivered as itself, or a hook body (a hub's flat body among them).
//
// A hub message's conversation is its session key (hub-render.ts): an envelope sent straight to the
// inbox gets the key the hub would have given it, so a sender's direct and hub messages are one order,
// as they are one OpenClaw session. Covered by test/node/hub-render.test.ts and
// test/node/conversations.e2e.test.ts.
import { envelopeSessionKey } from "./hub-render.ts";
import type { PlacedEnvelope } from "./hub-render.ts";

export type ConversationSource =
  /** A webhook source's event forwarded to its local app (the frame's or stored row's forward target). */
  | { forwardSource: string }
  /** A verified envelope delivered as itself. */
  | { envelope: PlacedEnvelope }
  /** A hook body: its own `sessionKey` field when it has one (every hub body does), and its sub-path. */
  | { sessionKey: string | null; subpath: string | null };

/** Bodies longer than this are not parsed just to find a key (the gateway refuses them anyway). */
export const SESSION_KEY_MAX_CHARS = 256 * 1024;

/**
 * A hook body's own `sessionKey` (every hub body has one), read the same way on both sides so the relay's
 * lane and the agent's order agree: a JSON content type, at most SESSION_KEY_MAX_CHARS, a non-empty string.
 */
export function hookBodySessionKey(contentType: string, text: string): string | null {
  if (!/json/i.test(contentType) || text.length > SESSION_KEY_MAX_CHARS) return null;
  try {
    const body: unknown = JSON.parse(text);
    const key = typeof body === "object" && body !== null ? (body as { sessionKey?: unknown }).sessionKey : undefined;
    return typeof key === "string" && key !== "" ? key : null;
  } catch {
    // Not JSON after all: a body without a key, ordered with its sub-path.
    return null;
  }
}

/** A forwarding source's events are one conversation: one at a time to its app. */
export function forwardConversation(source: string): string {
  return `forward:${source}`;
}

export function conversationKey(source: ConversationSource): string {
  if ("forwardSource" in source) return forwardConversation(source.forwardSource);
  if ("envelope" in source) return envelopeSessionKey(source.envelope);
  return source.sessionKey || `subpath:${source.subpath ?? ""}`;
}
