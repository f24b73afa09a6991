// Which conversation a delivered message belongs to. Order is kept within a conversation, not across
// them, so one retrying message holds up only its own (delivery.ts). Pure.
//
// The hub names a conversation by `sessionKey` (agentline:<sender>); an envelope the relay delivers
// itself gets the same key the hub would have given it, so a sender's hub-posted and direct messages
// stay in one order. A webhook without a sessionKey is ordered with its sub-path; a source's events
// forwarded to a local app (local-agent/forward/) with their source, one at a time.
import { SOURCE_HEADERS, fromBase64 } from "../../protocol/index.ts";
import type { DeliveryFrame, Envelope } from "../../protocol/index.ts";

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
    return null;
  }
}

/** A forwarding source's events are one conversation. */
export function forwardConversation(source: string): string {
  return `forward:${source}`;
}

export function conversationOf(frame: DeliveryFrame, envelope: Envelope | null): string {
  if (frame.forward) return forwardConversation(frame.forward.source);
  if (envelope) return `session:agentline:${envelope.from}`;
  const session = hookSessionKey(frame);
  return session ? `session:${session}` : `subpath:${frame.subpath ?? ""}`;
}

/** An envelope's signed sender; a hub body's from its sessionKey; a webhook source's name. */
export function senderOf(frame: DeliveryFrame, envelope: Envelope | null, conversation: string): string | null {
  if (envelope) return envelope.from;
  if (frame.forward) return `source:${frame.forward.source}`;
  const source = frame.headers?.[SOURCE_HEADERS.source];
  if (source) return `source:${source}`;
  return conversation.startsWith("session:agentline:") ? conversation.slice("session:agentline:".length) : null;
}
