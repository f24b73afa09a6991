// The hub's flat 2.x webhook bodies, read and written. A webhook-era hub posts
//   {"message": "<flat text>", "name": "Alice (ag_x)", "channel": "last", "sessionKey": "<ns>:<room>"}
// to <prefix>_inbox/agent — no msg_id, no signature: the relay finds the signed original by the sender,
// the text and the room the key names (worker/hub/hub-bridge.ts). For a record pulled from today's hub,
// which pushes nothing, the relay writes the same body through the one renderer (hub-render.ts), so the
// gateway's mappings and sessions carry on, with the record's room, topic and ids as fields of their own.
// Covered by test/protocol/hub-flat.test.ts and test/node/hub-render.test.ts.
import type { Envelope } from "./envelope.ts";
import { gatewayBody, renderHubMessage } from "./hub-render.ts";
import type { GatewayLeaf, HubContext } from "./hub-render.ts";
import type { HubRoom } from "./hub-text.ts";

export interface FlatHubBody {
  /** The sender's id, from the "… (ag_x) says:" line (and `name`, which must agree). */
  sender: string;
  /** Everything after "says: ": the message body as the hub rendered it. */
  text: string;
  sessionKey: string;
  /** Lines before the "says:" line: a group room's header, topic, goal and mention markers. */
  context: string[];
}

const SAYS = /^(?:.*? \()?(ag_[0-9a-f]{12})\)? says: /;
const NAME_ID = /\((ag_[0-9a-f]{12})\)$/;
const SESSION_KEY = /^[A-Za-z][A-Za-z0-9_.-]*:\S/;

/** A flat /agent body of a message, or null when the bytes are not one (a wake body, a probe, other JSON). */
export function parseFlatHubBody(bytes: Uint8Array): FlatHubBody | null {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const { message, name, sessionKey } = value as Record<string, unknown>;
  if (typeof message !== "string" || typeof sessionKey !== "string" || !SESSION_KEY.test(sessionKey)) return null;
  const lines = message.split("\n");
  const at = lines.findIndex((line) => SAYS.test(line));
  if (at < 0) return null;
  const line = lines[at]!;
  const match = SAYS.exec(line)!;
  const sender = match[1]!;
  // `name` is "Alice (ag_x)", or the id alone when the hub knows no display name.
  if (typeof name === "string" && (NAME_ID.exec(name)?.[1] ?? name) !== sender) return null;
  const text = [line.slice(match[0].length), ...lines.slice(at + 1)].join("\n");
  return { sender, text, sessionKey, context: lines.slice(0, at) };
}

/** A record of today's hub (GET /hub/inbox), its fields as the hub names them. */
export interface PulledHubRecord {
  hub_msg_id: string;
  text: string | null;
  room_id: string | null;
  room_name: string | null;
  room_member_count: number | null;
  room_member_names: string[] | null;
  my_role: string | null;
  my_can_send: boolean | null;
  topic: string | null;
  topic_id: string | null;
  goal: string | null;
  mentioned: boolean;
  source_type: string | null;
  source_user_name: string | null;
  source_session_kind: string | null;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The record's fields read defensively (the hub adds fields over time; what we need may be null). */
export function readPulledRecord(value: Record<string, unknown>): PulledHubRecord | null {
  if (typeof value.hub_msg_id !== "string" || value.hub_msg_id === "") return null;
  const names = Array.isArray(value.room_member_names) ? value.room_member_names.filter((n): n is string => typeof n === "string") : null;
  return {
    hub_msg_id: value.hub_msg_id,
    text: str(value.text),
    room_id: str(value.room_id),
    room_name: str(value.room_name),
    room_member_count: typeof value.room_member_count === "number" ? value.room_member_count : null,
    room_member_names: names,
    my_role: str(value.my_role),
    my_can_send: typeof value.my_can_send === "boolean" ? value.my_can_send : null,
    topic: str(value.topic),
    topic_id: str(value.topic_id),
    goal: str(value.goal),
    mentioned: value.mentioned === true,
    source_type: str(value.source_type),
    source_user_name: str(value.source_user_name),
    source_session_kind: str(value.source_session_kind),
  };
}

/** How the relay knows who sent a pulled record: its signature, or only the hub's word (unsigned). */
export type SenderCheck = "signature" | "hub";

/**
 * What the hub alone knows of a record, for the renderer: its room and topic, the room's header fields,
 * the topic's id, the goal, the body it rendered, the display name of a dashboard user, mentions (from the
 * raw envelope: no a2a version signs them) and whether this agent is among them.
 */
function pulledContext(record: PulledHubRecord, envelope: Envelope, mentions: readonly string[] | null): HubContext {
  const room: HubRoom | null =
    record.room_id && record.room_member_count !== null
      ? { id: record.room_id, name: record.room_name, memberCount: record.room_member_count, memberNames: record.room_member_names ?? [], myRole: record.my_role, myCanSend: record.my_can_send }
      : null;
  const who = pulledSender(record, envelope);
  return {
    place: { roomId: record.room_id, topic: record.topic },
    goal: record.goal,
    senderName: who.name,
    senderId: who.id,
    body: record.text,
    topicId: record.topic_id,
    mentions,
    mentioned: record.mentioned,
    room,
  };
}

/**
 * The body a webhook-era hub would have posted for this record (plus its ids, room and topic as
 * fields), and which of the two sub-paths it goes to. `mentions` come from the raw envelope.
 */
export function pulledRecordBody(
  record: PulledHubRecord,
  envelope: Envelope,
  verifiedBy: SenderCheck,
  mentions: readonly string[] | null,
): { leaf: GatewayLeaf; body: Record<string, unknown> } {
  const rendered = renderHubMessage(envelope, pulledContext(record, envelope, mentions));
  const fields = {
    hub_msg_id: record.hub_msg_id,
    msg_id: envelope.msg_id,
    from: envelope.from,
    type: envelope.type,
    room_id: record.room_id,
    room_name: record.room_name,
    topic: record.topic,
    topic_id: record.topic_id,
    goal: record.goal,
    source_type: record.source_type,
    source_user_name: record.source_user_name,
    verified_by: verifiedBy,
  };
  return { leaf: rendered.leaf, body: { ...gatewayBody(rendered), ...fields } };
}

/**
 * Who the gateway should see as the sender. An agent's records carry no display name (its id stands
 * alone, as the hub writes it then); a dashboard user's carry the user's name. The owner's own chat
 * comes "from" the agent itself (from = to), so it is labelled as the owner's, not the agent's.
 */
function pulledSender(record: PulledHubRecord, envelope: Envelope): { name: string | null; id: string } {
  if (record.source_session_kind === "owner_chat" || (record.source_type === "dashboard_user_chat" && envelope.from === envelope.to)) {
    return { name: record.source_user_name ?? "your owner", id: "owner, on the dashboard" };
  }
  return { name: record.source_user_name, id: envelope.from };
}
