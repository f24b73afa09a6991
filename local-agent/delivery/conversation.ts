// Which conversation a delivered message belongs to. Order is kept within a conversation, not across
// them, so one retrying message holds up only its own (delivery.ts). Pure.
//
// One order per conversation, and a hub message's conversation is its OpenClaw session: the hub's
// `sessionKey` (protocol/conversation-key.ts). A hub's flat body carries it; an envelope the relay
// delivers itself gets the key the hub would have given it (its DM room's), the same the renderer
// writes into its body, so a sender's messages are one order whichever way they came — sent straight to
// the inbox, pulled from today's hub, or pushed by a webhook-era one. A webhook without a sessionKey is
// ordered with its sub-path; a source's events forwarded to a local app (local-agent/forward/) with
// their source, one at a time. Covered by test/node/conversations.e2e.test.ts.
import { SESSION_KEY_MAX_CHARS, SOURCE_HEADERS, conversationKey, forwardConversation, fromBase64, hookBodySessionKey } from "../../protocol/index.ts";
import type { DeliveryFrame, Envelope } from "../../protocol/index.ts";

export { forwardConversation };

/** The frame's body decoded (base64 of the largest body parsed is under twice its length: not decoded past that). */
function hookSessionKey(frame: DeliveryFrame): string | null {
  if (frame.body.length > SESSION_KEY_MAX_CHARS * 2) return null;
  const text = frame.encoding === "utf8" ? frame.body : new TextDecoder().decode(fromBase64(frame.body) ?? new Uint8Array(0));
  return hookBodySessionKey(frame.content_type, text);
}

export function conversationOf(frame: DeliveryFrame, envelope: Envelope | null): string {
  if (frame.forward) return conversationKey({ forwardSource: frame.forward.source });
  if (envelope) return conversationKey({ envelope });
  return conversationKey({ sessionKey: hookSessionKey(frame), subpath: frame.subpath });
}

const AGENTLINE_SESSION = "agentline:";

/** An envelope's signed sender; a webhook source's name; the name an Agentline-style key carries. */
export function senderOf(frame: DeliveryFrame, envelope: Envelope | null, conversation: string): string | null {
  if (envelope) return envelope.from;
  if (frame.forward) return `source:${frame.forward.source}`;
  const source = frame.headers?.[SOURCE_HEADERS.source];
  if (source) return `source:${source}`;
  return conversation.startsWith(AGENTLINE_SESSION) ? conversation.slice(AGENTLINE_SESSION.length) : null;
}
