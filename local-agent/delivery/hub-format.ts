// Turns what the relay delivers into the request the hub would have made to the gateway through a
// tunnel (docs/openclaw-setup.md, "The mappings"), so existing hooks.mappings keep working.
import { forwardableHeaders, fromBase64, hubSubpaths, parseEnvelope, utf8 } from "../../protocol/index.ts";
import type { DeliveryFrame, Envelope, HubPrefix } from "../../protocol/index.ts";

export const AGENT_SUBPATH = "agentgram_inbox/agent";
export const WAKE_SUBPATH = "agentgram_inbox/wake";

export interface GatewayRequest {
  subpath: string;
  contentType: string;
  body: Uint8Array;
  /** A webhook source's headers of interest (x-github-event, x-clawrelay-source …), posted as they are. */
  headers?: Record<string, string>;
}

function frameBytes(frame: DeliveryFrame): Uint8Array {
  return frame.encoding === "utf8" ? utf8(frame.body) : (fromBase64(frame.body) ?? new Uint8Array(0));
}

function text(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Who sent it, as the gateway sees it: the signed `from`. A display name is not signed in a2a/0.1, so
 * the relay does not carry one (anyone could claim to be "Alice"). Room messages arrive through the
 * hub's webhook as its own flat text, never as envelopes here: an inbox only takes envelopes to itself.
 */
export function senderLabel(envelope: Envelope): string {
  return envelope.from;
}

/** The flat text the hub puts in `message` (or the wake `text`). */
export function flatText(envelope: Envelope): string {
  const who = senderLabel(envelope);
  const p = envelope.payload;
  switch (envelope.type) {
    case "message":
      return `${who} says: ${text(p.text ?? p)}`;
    case "result":
      return `${who} sent the result for your message ${envelope.reply_to}: ${text(p.text ?? p)}`;
    case "error": {
      const error = (p.error ?? {}) as { code?: unknown; message?: unknown };
      return `${who} could not handle your message ${envelope.reply_to}: ${String(error.code ?? "ERROR")}: ${String(error.message ?? "")}`.trimEnd();
    }
    case "ack":
      return `${who} received your message ${envelope.reply_to}`;
    case "contact_request":
      return `${who} wants to add you as a contact${p.text ? `: ${text(p.text)}` : ""}`;
    case "contact_request_response":
      return `${who} ${p.accepted === false || p.state === "rejected" ? "declined" : "accepted"} your contact request`;
    case "contact_removed":
      return `${who} removed you from their contacts`;
    case "system":
      return text(p.text ?? p);
  }
}

const WAKE_TYPES: ReadonlySet<string> = new Set(["contact_request", "contact_request_response", "contact_removed"]);

function json(value: unknown): Uint8Array {
  return utf8(JSON.stringify(value));
}

/**
 * The gateway request for a delivered envelope: /agent for messages and receipts, /wake for contacts,
 * under the prefix the inbox's hub uses (the relay says which in `ready`), so one pair of mappings serves.
 */
export function envelopeRequest(envelope: Envelope, prefix: HubPrefix = "agentgram"): GatewayRequest {
  const subpaths = hubSubpaths(prefix);
  const message = flatText(envelope);
  const sessionKey = `agentline:${envelope.from}`;
  if (WAKE_TYPES.has(envelope.type)) {
    // The hub's code sends `body`, its guide says `text`; the built-in /wake needs `text`. Send both.
    return { subpath: subpaths.wake, contentType: "application/json", body: json({ text: message, body: message, mode: "now", sessionKey }) };
  }
  return {
    subpath: subpaths.agent,
    contentType: "application/json",
    body: json({ message, name: senderLabel(envelope), channel: "last", sessionKey }),
  };
}

/** The envelope an envelope frame carries; null for hook frames. */
export function frameEnvelope(frame: DeliveryFrame): Envelope | null {
  return frame.kind === "envelope" ? parseEnvelope(JSON.parse(frame.body)) : null;
}

/** What to post for a delivered frame: hook bodies unchanged, envelopes as the hub would format them. */
export function gatewayRequestFor(frame: DeliveryFrame, envelope: Envelope | null = frameEnvelope(frame), prefix: HubPrefix = "agentgram"): GatewayRequest {
  if (!envelope) {
    const request = { subpath: frame.subpath ?? hubSubpaths(prefix).agent, contentType: frame.content_type, body: frameBytes(frame) };
    // Filtered again here: whatever the relay sent, none may replace a header the gateway reads itself.
    return frame.headers ? { ...request, headers: forwardableHeaders(frame.headers) } : request;
  }
  return envelopeRequest(envelope, prefix);
}
