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
import { SOURCE_HEADERS, conversationKey, forwardConversation, fromBase64 } from "../../protocol/index.ts";
import type { DeliveryFrame, Envelope } from "../../protocol/index.ts";

export { forwardConversation };

/** Bodies above this are not parsed just to find a key (the gateway refuses them anyway). */
const MAX_PARSED_BYTES = 256 * 1024;

function hookSessionKey(frame: DeliveryFrame): string | null {
  if (!/json/i.test(frame.content_type) || frame.body.length > MAX_PARSED_BYTES * 2) return null;
  try {
    const text = frame.encoding === "utf8" ? frame.body : new TextDecoder().decode(fromBase64(frame.body) ?? new Uint8Array(0));
    if (text.length > MAX_PARSED_BYTES) return null;
    const body: unknown = JSON.parse(text);
    const key = typeof body === "object" && body !== null ? (body as { sessionKey?: unknown }).sessionKey : undefined;
    return typeof key === "string" && key !== "" ? key : null;
  } catch {
    // Not JSON after all: a body without a key, ordered with its sub-path.
    return null;
  }
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
