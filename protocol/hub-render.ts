// The one renderer for everything the hub or a peer sends: given an envelope, and for a record pulled
// from the hub the hub-only context that came with it, what the gateway gets — the sub-path leaf, the
// hub's flat text (hub-text.ts), the sender's name and the hub's session key (hub-session-key.ts). The
// relay calls it for records it pulls (hub-flat.ts pulledRecordBody), the agent for envelopes delivered
// as themselves (local-agent/delivery/hub-format.ts): the same signed fields give the same text and the
// same key whichever way a message came. Only the hub knows a group room's header, mention markers, a
// display name, a topic's hub id and the body it rendered itself; those come in `HubContext`.
// Covered by test/node/hub-render.test.ts (both paths, against the recorded hub texts).
import type { Envelope } from "./envelope.ts";
import { HUB_SENDER } from "./envelope.ts";
import { hubSessionKey } from "./hub-session-key.ts";
import { hubText, senderLabelOf } from "./hub-text.ts";
import type { HubTextOptions } from "./hub-text.ts";

/** The types the hub posts to `<prefix>_inbox/wake` (forward.py _WAKE_TYPES); the rest go to /agent. */
export const WAKE_TYPES: ReadonlySet<string> = new Set(["contact_request", "contact_request_response", "contact_removed"]);

export type GatewayLeaf = "agent" | "wake";

/** Where the hub files a message: the room and topic its session key is seeded with. */
export interface HubPlace {
  roomId: string | null;
  topic: string | null;
}

/** The fields of an envelope its place depends on (all signed; `topic` only in a2a/0.2). */
export type PlacedEnvelope = Pick<Envelope, "from" | "to" | "type"> & { topic?: string | null };

/** The hub's DM room of two parties: `rm_dm_` + Python's sorted() of the two ids (code-point order). */
export function dmRoomId(a: string, b: string): string {
  const [first, second] = a < b ? [a, b] : [b, a];
  return `rm_dm_${first}_${second}`;
}

/**
 * Where the hub files an envelope, read from its signed fields alone (hub.py at 9d900985 and today):
 * a contact request makes no DM room, and the contact notices and the hub's own messages are stored
 * with none ("default"); a message or receipt between two agents is in their DM room, a receipt with the
 * original's room, which between two agents is that DM room. A topic counts only when signed (a2a/0.2;
 * parseEnvelope drops a2a/0.1's unsigned one).
 */
export function placeOfEnvelope(envelope: PlacedEnvelope): HubPlace {
  if (WAKE_TYPES.has(envelope.type) || envelope.from === HUB_SENDER) return { roomId: null, topic: null };
  const roomId = envelope.to.startsWith("rm_") ? envelope.to : dmRoomId(envelope.from, envelope.to);
  return { roomId, topic: envelope.topic || null };
}

/** The session key of an envelope that came without a hub record: the one the hub gives its place. */
export function envelopeSessionKey(envelope: PlacedEnvelope): string {
  const place = placeOfEnvelope(envelope);
  return hubSessionKey(place.roomId, place.topic);
}

/** What only the hub knows, passed by the relay for a pulled record; empty for a direct envelope. */
export interface HubContext extends Omit<HubTextOptions, "topic" | "goal"> {
  /** The record's room and topic (the hub's word, a2a/0.1's unsigned topic included). */
  place?: HubPlace;
  /** The record's goal; by default the envelope's signed one (a2a/0.2). */
  goal?: string | null;
}

export interface RenderedMessage {
  leaf: GatewayLeaf;
  /** The flat text: the body's `message` at /agent, its `text` and `body` at /wake. */
  text: string;
  /** "Alice (ag_x)" with a display name, else the id. */
  name: string;
  sessionKey: string;
}

export function renderHubMessage(envelope: Envelope, context: HubContext = {}): RenderedMessage {
  const place = context.place ?? placeOfEnvelope(envelope);
  const text = hubText(envelope, { ...context, topic: place.topic, goal: context.goal === undefined ? (envelope.goal ?? null) : context.goal });
  return {
    leaf: WAKE_TYPES.has(envelope.type) ? "wake" : "agent",
    text,
    name: senderLabelOf(context.senderId ?? envelope.from, context.senderName),
    sessionKey: hubSessionKey(place.roomId, place.topic),
  };
}

/**
 * The body the gateway's mappings read, in the hub's webhook shape (forward.py
 * convert_payload_for_openclaw). At /wake the hub's code sends `body`, its guide says `text`, and the
 * gateway's built-in /wake needs `text`: both are sent.
 */
export function gatewayBody(rendered: RenderedMessage): Record<string, unknown> {
  const { text, name, sessionKey } = rendered;
  return rendered.leaf === "wake" ? { text, body: text, mode: "now", sessionKey } : { message: text, name, channel: "last", sessionKey };
}
