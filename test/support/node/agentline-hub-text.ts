// The words the hub writes for a person: the flat text of an envelope (MessageEnvelope.to_text of both
// generations), the group-room header, Python's json.dumps, and the flat webhook bodies of the webhook
// era (hub/forward.py at 9d900985). Imported by the agentline-hub*.ts files and
// test/node/agentline-hub.test.ts, which replays the recorded payloads through it byte for byte.
import type { Envelope } from "./agentline-hub-wire.ts";
import { isObject, sessionKey } from "./agentline-hub-wire.ts";

/** Python's json.dumps(value, ensure_ascii=False): ", " and ": " separators, keys in insertion order. */
export function pyJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  if (isObject(value)) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`).join(", ")}}`;
  return JSON.stringify(String(value));
}

/** Python's str() of a payload value the hub puts into an f-string (text that is not a string). */
function pyStr(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value === null || value === undefined) return "None";
  if (typeof value === "number") return String(value);
  const repr = (v: unknown): string =>
    typeof v === "string" ? `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'` : Array.isArray(v) ? `[${v.map(repr).join(", ")}]` : isObject(v) ? `{${Object.entries(v).map(([k, x]) => `${repr(k)}: ${repr(x)}`).join(", ")}}` : pyStr(v);
  return repr(value);
}

/** Python truthiness, for `p.get("text") or p.get("body") or p.get("message")`. */
const truthy = (v: unknown): boolean => !(v === undefined || v === null || v === false || v === 0 || v === "" || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0));

export interface RoomContext {
  room_id: string;
  name: string;
  member_count: number;
  member_names: string[];
  /** The receiver's role; the retry loop has none, so its header has no "权限" part. */
  my_role: string | null;
  my_can_send: boolean | null;
}

export function roomHeader(ctx: RoomContext): string {
  const parts = [`群聊「${ctx.name}」(${ctx.room_id})`];
  if (ctx.member_names.length > 0) {
    let names = ctx.member_names.slice(0, 10).join(", ");
    if (ctx.member_names.length > 10) names += ` 等${ctx.member_count}人`;
    parts.push(`${ctx.member_count}人: ${names}`);
  } else parts.push(`${ctx.member_count}人`);
  if (ctx.my_role !== null) parts.push(`权限: ${ctx.my_role}, ${ctx.my_can_send ? "可发言" : "禁言中"}`);
  return `[${parts.join(" | ")}]`;
}

function attachmentsLines(p: Record<string, unknown>): string {
  const list = Array.isArray(p.attachments) ? p.attachments.filter(isObject) : [];
  if (list.length === 0) return "";
  const lines = list.map((att) => `  📎 ${pyStr(att.filename ?? "file")}${truthy(att.size_bytes) ? `, ${pyStr(att.size_bytes)} bytes` : ""}: ${pyStr(att.url ?? "")}`);
  return "\n【Attachments】\n" + lines.join("\n");
}

/** MessageEnvelope.to_text: the main line by type, after 【Topic】/【Goal】/【Mentions】 lines from the envelope. */
export function envelopeText(e: Envelope, senderName: string | null, options: { mentioned?: boolean; includeSender?: boolean } = {}): string {
  const p = e.payload;
  const who = senderName ? `${senderName} (${e.from})` : e.from;
  let main: string;
  if (e.type === "message") {
    const text = [p.text, p.body, p.message].find(truthy);
    const body = (text !== undefined ? pyStr(text) : pyJson(p)) + attachmentsLines(p);
    main = options.includeSender === false ? body : `${who} says: ${body}`;
  } else if (e.type === "contact_request") {
    main = `${who} sent you a contact request.` + (truthy(p.message) ? ` Message: "${pyStr(p.message)}"` : "");
  } else if (e.type === "contact_request_response") {
    const state = pyStr(p.state ?? "unknown");
    main = state === "accepted" ? `${who} accepted your contact request. You are now contacts.` : state === "rejected" ? `${who} rejected your contact request.` : `${who} responded to your contact request: ${state}.`;
    if (truthy(p.request_id)) main += ` (request_id: ${pyStr(p.request_id)})`;
  } else if (e.type === "contact_removed") main = `${who} removed you from their contacts.`;
  else if (e.type === "error") {
    const err = isObject(p.error) ? p.error : {};
    const code = pyStr(err.code ?? "UNKNOWN");
    main = `Error from ${who}: ${truthy(err.message) ? `${code}: ${pyStr(err.message)}` : code}`;
  } else if (e.type === "result") main = `Result from ${who}: ${pyJson(p)}`;
  else if (e.type === "ack") main = `${who} acknowledged your message ${e.reply_to || e.msg_id}.`;
  else main = `[${e.type}] from ${who}: ${pyJson(p)}`;
  const lines: string[] = [];
  if (e.topic) lines.push(`【Topic: ${e.topic}】`);
  if (e.goal) lines.push(`【Goal: ${e.goal}】`);
  if (e.mentions && e.mentions.length > 0) {
    lines.push(`【Mentions: ${e.mentions.join(", ")}】`);
    if (options.mentioned) lines.push("【⚠️ You were mentioned】");
  }
  return lines.length > 0 ? [...lines, main].join("\n") : main;
}

/** build_flat_text: the envelope's text, under the room header for rooms of more than two members. */
export function flatText(e: Envelope, senderName: string | null, room: RoomContext | null, mentioned = false): string {
  const text = envelopeText(e, senderName, { mentioned });
  return room && room.member_count > 2 ? `${roomHeader(room)}\n${text}` : text;
}

/** Today's /hub/inbox `text`: the sender's body alone (message, contact request), else to_text without a name. */
export function bodyText(e: Envelope): string {
  const p = e.payload;
  if (e.type === "message") {
    const text = [p.text, p.body, p.message].find(truthy);
    return (typeof text === "string" && text ? text : pyJson(p)) + attachmentsLines(p);
  }
  if (e.type === "contact_request") return typeof p.message === "string" && p.message ? p.message : "sent you a contact request.";
  return envelopeText(e, null, { includeSender: false });
}

export const WAKE_TYPES: ReadonlySet<string> = new Set(["contact_request", "contact_request_response", "contact_removed"]);

/**
 * convert_payload_for_openclaw: the /agent body {message, name, channel, sessionKey} or the /wake body
 * {body, mode, sessionKey}, in that key order (the hub's dict order; httpx writes it compact, raw UTF-8).
 */
export function webhookBody(e: Envelope, senderName: string | null, roomId: string | null, topic: string | null, room: RoomContext | null): { leaf: "agent" | "wake"; body: Record<string, string> } {
  const text = flatText(e, senderName, room);
  const key = sessionKey(roomId, topic);
  if (WAKE_TYPES.has(e.type)) return { leaf: "wake", body: { body: text, mode: "now", sessionKey: key } };
  return { leaf: "agent", body: { message: text, name: senderName ? `${senderName} (${e.from})` : e.from, channel: "last", sessionKey: key } };
}
