// The stand-in hub's state, shared by its modules: agents, rooms, message records, owners, and the
// logs tests read (every record, probe, webhook, receipt, request and WebSocket frame). Everything is
// keyed by agent id, so tests can share one instance. Also the small helpers every route uses: answers,
// ids, the hub's time formats, timers that die with the server. Imported by the agentline-hub*.ts
// files; covered by test/node/agentline-hub.test.ts.
import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { Generation } from "./agentline-hub-errors.ts";
import { HubError, invalidBody } from "./agentline-hub-errors.ts";
import type { Envelope } from "./agentline-hub-wire.ts";
import { isObject } from "./agentline-hub-wire.ts";

export type { Generation } from "./agentline-hub-errors.ts";
export type HubPrefix = "botcord" | "agentgram";
export type MessagePolicy = "open" | "contacts_only";
export type RecordState = "queued" | "processing" | "delivered" | "acked" | "done" | "failed";

/** Every wait the stand-in makes, in ms; the defaults are the real hub's. */
export interface HubTimings {
  /** Webhook era: the wait after the n-th failed push (the last one repeats). */
  retryBackoffMs: number[];
  /** Webhook era: how often the retry loop looks for due records (it also carries the welcome). */
  retryPollMs: number;
  /** Webhook era: the welcome is due this long after the endpoint's 201 (then waits for the loop). */
  welcomeDelayMs: number;
  pushTimeoutMs: number;
  probeTimeoutMs: number;
  /** Today: how long `/hub/inbox?ack=false` leases a record as processing. */
  leaseMs: number;
  /** Today: how often leases are reclaimed and queued records past their TTL expired. */
  expiryLoopMs: number;
  wsAuthTimeoutMs: number;
  /** A heartbeat after this long without a client frame (webhook era 30 s, today 15 s). */
  wsHeartbeatMs: number;
  /** Today: close 4002 after this long without a client frame. */
  wsIdleCloseMs: number;
}

const BASE_TIMINGS: HubTimings = {
  retryBackoffMs: [1000, 2000, 4000, 8000, 16000, 32000, 60000], retryPollMs: 1000, welcomeDelayMs: 0, pushTimeoutMs: 10_000, probeTimeoutMs: 5000,
  leaseMs: 120_000, expiryLoopMs: 30_000, wsAuthTimeoutMs: 10_000, wsHeartbeatMs: 15_000, wsIdleCloseMs: 60_000,
};
/** The webhook era's socket sent a heartbeat every 30 s and never closed an idle one. */
export const DEFAULT_TIMINGS: Record<Generation, HubTimings> = { "webhook-era": { ...BASE_TIMINGS, wsHeartbeatMs: 30_000, wsIdleCloseMs: Infinity }, current: BASE_TIMINGS };

export interface HubKey { key_id: string; pubkey: string; state: "pending" | "active" | "revoked"; created_at: number }
export interface HubEndpoint {
  endpoint_id: string; url: string; webhook_token: string; state: "active" | "unverified" | "unreachable";
  registered_at: number; last_probe_at: number; last_delivery_error: string | null;
}
export interface HubAgent {
  agent_id: string; display_name: string; bio: string | null; message_policy: MessagePolicy; contacts: Set<string>;
  keys: Map<string, HubKey>; endpoint: HubEndpoint | null;
  /** Today's hub keeps one current token per agent (null: any token it signed). */
  current_token: string | null;
  /** The owner (today: every agent comes from an owner's install). */
  owner: string | null; claim_code: string | null; avatar_url: string | null;
}
export interface HubUser { id: string; token: string; display_name: string; human_id: string }
export interface RoomMember { agent_id: string; role: "owner" | "admin" | "member"; participant_type: "agent" | "human"; muted: boolean; can_send: boolean | null; joined_at: number }
export interface HubRoom {
  room_id: string; name: string; description: string; owner_id: string; visibility: "private" | "public"; join_policy: string;
  max_members: number | null; default_send: boolean; default_invite: boolean; members: RoomMember[]; created_at: number;
}
export interface HubRecord {
  /** Insertion order: the hub's auto-increment id (history cursors and order). */
  seq: number; hub_msg_id: string; msg_id: string; sender_id: string; receiver_id: string;
  room_id: string | null; topic: string | null; topic_id: string | null; goal: string | null;
  envelope: Envelope; state: RecordState; mentioned: boolean; ttl_sec: number;
  created_at: number; delivered_at: number | null; acked_at: number | null; last_error: string | null;
  /** Webhook era: when the retry loop pushes it next (null: parked); today: when a lease runs out. */
  next_retry_at: number | null; retry_count: number;
  /** False while the webhook era's /hub/send transaction is open (pushes happen before the commit). */
  committed: boolean;
  source_type: string; source_user_id: string | null; source_user_name: string | null; source_session_kind: string | null;
}
export interface ContactRequest { id: number; from_agent_id: string; to_agent_id: string; state: "pending" | "accepted" | "rejected"; message: unknown; created_at: number; resolved_at: number | null }

export interface HubLogs {
  receipts: { status: number; body: unknown; detail: string }[];
  probes: { path: string; status: number; error: string | null; raw: string; headers: string[]; at: number }[];
  webhooks: { path: string; status: number; error: string | null; body: string; headers: string[]; hub_msg_id: string; at: number }[];
  requests: { method: string; path: string; status: number; at: number }[];
  wsFrames: { socket: number; agent_id: string | null; dir: "in" | "out" | "close"; data: string; at: number }[];
}

export interface HubWorld {
  generation: Generation; prefix: HubPrefix; timings: HubTimings; allowPrivateEndpoints: boolean;
  tokenTtlSec: number; rateLimitPerMinute: number; pairRateLimitPerMinute: number; secret: string;
  /** How far the hub's token clock runs ahead of real time (advanceClock): "a second later" without waiting one. */
  clockAheadSec: number;
  /** The hub's public base URL (hub_url, install_command); set once the server listens. */
  url: string;
  agents: Map<string, HubAgent>; rooms: Map<string, HubRoom>; records: HubRecord[]; users: Map<string, HubUser>;
  topics: Map<string, string>; contactRequests: ContactRequest[]; approvals: { id: string; agent_id: string; kind: string; payload: Record<string, unknown> }[];
  logs: HubLogs;
  /** Wakes long polls and sends `inbox_update` to the agent's sockets. */
  notify(agentId: string): void;
  listeners: Set<(agentId: string) => void>;
  later(ms: number, run: () => void): void;
  closing: AbortSignal;
  nextSeq(): number;
}

export interface Answer { status: number; body: unknown; headers?: Record<string, string> }
export const answer = (body: unknown, status = 200, headers?: Record<string, string>): Answer => ({ status, body, ...(headers ? { headers } : {}) });

/** A request as the routes see it. */
export interface HubRequest { method: string; url: URL; headers: IncomingHttpHeaders; json(): Promise<unknown> }

export const hex = (bytes: number): string => randomBytes(bytes).toString("hex");
export const newHubMsgId = () => `h_${hex(16)}`;
export const nowSec = () => Math.floor(Date.now() / 1000);

/** A UTC instant as pydantic writes it from PostgreSQL: microseconds (when any) and "Z". */
export function isoTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return ms % 1000 === 0 ? iso.replace(".000Z", "Z") : iso.replace("Z", "000Z");
}

export const isoOrNull = (ms: number | null) => (ms === null ? null : isoTime(ms));
export const secOrNull = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** The body as a JSON object, or FastAPI's 422. */
export async function jsonObject(req: HubRequest): Promise<Record<string, unknown>> {
  const body = await req.json();
  if (!isObject(body)) throw invalidBody([{ type: "model_attributes_type", loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", input: body }]);
  return body;
}

/** A required string field of a body, or FastAPI's 422 naming it. */
export function field(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value === "string") return value;
  throw invalidBody([{ type: value === undefined ? "missing" : "string_type", loc: ["body", name], msg: value === undefined ? "Field required" : "Input should be a valid string", input: value === undefined ? body : value }]);
}

/** A query integer within FastAPI's bounds (422 outside them). */
export function queryInt(url: URL, name: string, fallback: number, min: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || value < min || value > max) {
    const [type, msg] = !/^-?\d+$/.test(raw.trim()) ? ["int_parsing", "Input should be a valid integer, unable to parse string as an integer"] : value < min ? ["greater_than_equal", `Input should be greater than or equal to ${min}`] : ["less_than_equal", `Input should be less than or equal to ${max}`];
    throw invalidBody([{ type, loc: ["query", name], msg, input: raw }]);
  }
  return value;
}

/** A query boolean as pydantic reads one ("true", "1", "yes", "on", … / "false", "0", "no", "off", …). */
export function queryBool(url: URL, name: string, fallback: boolean): boolean {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  const value = raw.trim().toLowerCase();
  if (["true", "1", "yes", "on", "t", "y"].includes(value)) return true;
  if (["false", "0", "no", "off", "f", "n"].includes(value)) return false;
  throw invalidBody([{ type: "bool_parsing", loc: ["query", name], msg: "Input should be a valid boolean, unable to interpret input", input: raw }]);
}

export function agentOr404(world: HubWorld, agentId: string): HubAgent {
  const agent = world.agents.get(agentId);
  if (!agent) throw new HubError(404, "agent_not_found");
  return agent;
}

/** The display name the hub shows for an id: an agent's name, the hub's own, else none. */
export function displayName(world: HubWorld, id: string): string | null {
  if (id === "hub") return world.generation === "webhook-era" ? "BotCord Hub" : null;
  return world.agents.get(id)?.display_name ?? null;
}
