// Turns what the relay delivers into the request the hub would have made to the gateway through a
// tunnel (docs/openclaw-setup.md, "The mappings"), so existing hooks.mappings keep working: hook bodies
// as they came, envelopes through the one renderer the relay also uses for pulled records
// (protocol/hub-render.ts). Imported by pending-message.ts; covered by test/node/hub-format.test.ts and
// test/node/hub-render.test.ts (both paths).
import { forwardableHeaders, fromBase64, gatewayBody, hubSubpaths, parseEnvelope, renderHubMessage, utf8 } from "../../protocol/index.ts";
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

/**
 * The gateway request for a delivered envelope: /agent for messages and receipts, /wake for contacts,
 * under the prefix the inbox's hub uses (the relay says which in `ready`), so one pair of mappings serves.
 * The sender is named by its signed id alone: a display name is not signed, so the relay carries none.
 */
export function envelopeRequest(envelope: Envelope, prefix: HubPrefix = "agentgram"): GatewayRequest {
  const rendered = renderHubMessage(envelope);
  return { subpath: hubSubpaths(prefix)[rendered.leaf], contentType: "application/json", body: utf8(JSON.stringify(gatewayBody(rendered))) };
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
