// How the hub writes an envelope for a human (its MessageEnvelope.to_text and the room header of its
// webhook era): "Alice (ag_x) says: hi", 【Topic】/【Goal】 lines, "[群聊「Room」(rm_x) | 3人: …]".
// The renderer (hub-render.ts) writes every flat text with it, for pulled records and direct envelopes
// alike; the bridge (worker/hub/hub-bridge.ts) renders a message's body with it to recognise which
// signed original a webhook body stands for. Covered by test/protocol/hub-flat.test.ts and
// test/node/hub-render.test.ts.
import type { Envelope } from "./envelope.ts";

/** Python's json.dumps(value, ensure_ascii=False), which the hub uses for payloads without text. */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(", ")}]`;
  const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`);
  return `{${entries.join(", ")}}`;
}

/** Python's truthiness of a payload field (the hub picks the first truthy of text, body, message). */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object" && value !== null) return Object.keys(value).length > 0;
  return Boolean(value);
}

function pythonStr(value: unknown): string {
  return typeof value === "string" ? value : value === true ? "True" : value === false ? "False" : pythonJson(value);
}

/** A message's body: its text (or body, or message), else the payload as JSON, then its attachments. */
export function messageBody(payload: Record<string, unknown>, hubUrl = ""): string {
  const chosen = [payload.text, payload.body, payload.message].find(truthy);
  let body = chosen === undefined ? pythonJson(payload) : pythonStr(chosen);
  const attachments = payload.attachments;
  if (Array.isArray(attachments) && attachments.length > 0) {
    const lines = attachments
      .filter((a): a is Record<string, unknown> => typeof a === "object" && a !== null && !Array.isArray(a))
      .map((a) => {
        const url = typeof a.url === "string" ? a.url : "";
        const size = truthy(a.size_bytes) ? `, ${pythonStr(a.size_bytes)} bytes` : "";
        return `  📎 ${pythonStr(a.filename ?? "file")}${size}: ${url.startsWith("/") ? hubUrl + url : url}`;
      });
    body = `${body}\n【Attachments】\n${lines.join("\n")}`;
  }
  return body;
}

export interface HubTextOptions {
  /** The sender's display name, when the hub knows one: "Alice (ag_x)" instead of "ag_x". */
  senderName?: string | null;
  /** What stands in the parentheses instead of the envelope's `from` (the owner's own chat). */
  senderId?: string;
  /** The message body as the hub already rendered it (a pulled record's `text`), for type message. */
  body?: string | null;
  /** Topic, goal and mentions as the hub's record has them (a2a/0.1 envelopes carry them unsigned). */
  topic?: string | null;
  topicId?: string | null;
  goal?: string | null;
  mentions?: readonly string[] | null;
  /** The record says this agent was mentioned. */
  mentioned?: boolean;
  /** Room context; a header line is written for rooms of more than two members. */
  room?: HubRoom | null;
}

export interface HubRoom {
  id: string;
  name: string | null;
  memberCount: number;
  memberNames: readonly string[];
  myRole?: string | null;
  myCanSend?: boolean | null;
}

/** "[群聊「Room」(rm_x) | 3人: A, B, C | 权限: member, 可发言]", as the hub heads group-room messages. */
export function roomHeader(room: HubRoom): string {
  const parts = [`群聊「${room.name ?? room.id}」(${room.id})`];
  if (room.memberNames.length > 0) {
    let names = room.memberNames.slice(0, 10).join(", ");
    if (room.memberNames.length > 10) names += ` 等${room.memberCount}人`;
    parts.push(`${room.memberCount}人: ${names}`);
  } else parts.push(`${room.memberCount}人`);
  if (room.myRole) parts.push(`权限: ${room.myRole}, ${room.myCanSend ? "可发言" : "禁言中"}`);
  return `[${parts.join(" | ")}]`;
}

/** The hub's "who": "Alice (ag_x)" with a display name, else the id alone. */
export function senderLabelOf(from: string, senderName?: string | null): string {
  return senderName ? `${senderName} (${from})` : from;
}

function mainLine(e: Envelope, who: string, options: HubTextOptions): string {
  const p = e.payload;
  switch (e.type) {
    case "message":
      return `${who} says: ${typeof options.body === "string" ? options.body : messageBody(p)}`;
    case "contact_request":
      return `${who} sent you a contact request.${truthy(p.message) ? ` Message: "${pythonStr(p.message)}"` : ""}`;
    case "contact_request_response": {
      const state = p.state ?? "unknown";
      const main = state === "accepted" ? `${who} accepted your contact request. You are now contacts.` : state === "rejected" ? `${who} rejected your contact request.` : `${who} responded to your contact request: ${pythonStr(state)}.`;
      return truthy(p.request_id) ? `${main} (request_id: ${pythonStr(p.request_id)})` : main;
    }
    case "contact_removed":
      return `${who} removed you from their contacts.`;
    case "error": {
      const err = (typeof p.error === "object" && p.error !== null ? p.error : {}) as Record<string, unknown>;
      const code = pythonStr(err.code ?? "UNKNOWN");
      return `Error from ${who}: ${truthy(err.message) ? `${code}: ${pythonStr(err.message)}` : code}`;
    }
    case "result":
      return `Result from ${who}: ${pythonJson(p)}`;
    case "ack":
      return `${who} acknowledged your message ${e.reply_to ?? e.msg_id}.`;
    default:
      return `[${e.type}] from ${who}: ${pythonJson(p)}`;
  }
}

/** The whole flat text the hub writes for `e`: room header, topic/goal/mention markers, the main line. */
export function hubText(e: Envelope, options: HubTextOptions = {}): string {
  const lines: string[] = [];
  if (options.room && options.room.memberCount > 2) lines.push(roomHeader(options.room));
  const { topic, goal, mentions } = options;
  if (topic) lines.push(options.topicId ? `【Topic: ${topic} | ID: ${options.topicId}】` : `【Topic: ${topic}】`);
  if (goal) lines.push(`【Goal: ${goal}】`);
  if (mentions && mentions.length > 0) {
    lines.push(`【Mentions: ${mentions.join(", ")}】`);
    if (options.mentioned) lines.push("【⚠️ You were mentioned】");
  }
  lines.push(mainLine(e, senderLabelOf(options.senderId ?? e.from, options.senderName), options));
  return lines.join("\n");
}
