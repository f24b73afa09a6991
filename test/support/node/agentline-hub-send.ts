// POST /hub/send and POST /hub/receipt at the stand-in hub, in the real hub's order of checks (token,
// sender, type, rate limits, then the envelope), DMs and room fan-out, contact requests, and receipts.
// The webhook era pushes INSIDE the request, before its records are committed (fact 8: history,
// status and inbox do not see them until the push answered), and answers only after the push; today's
// hub commits, announces (`inbox_update`) and answers "queued". Imported by agentline-hub.ts.
import { randomUUID } from "node:crypto";
import { HubError, invalidBody } from "./agentline-hub-errors.ts";
import type { Pusher } from "./agentline-hub-push.ts";
import { addRecord, visible } from "./agentline-hub-records.ts";
import type { Registry } from "./agentline-hub-registry.ts";
import { canSend, ensureDmRoom, roomContext, topicId } from "./agentline-hub-rooms.ts";
import { answer, hex } from "./agentline-hub-world.ts";
import type { Answer, HubRecord, HubRequest, HubWorld } from "./agentline-hub-world.ts";
import { hubMadeEnvelope, parseEnvelope, payloadHashOf, signingInput, verifyBytes } from "./agentline-hub-wire.ts";
import type { Envelope } from "./agentline-hub-wire.ts";

const SEND_TYPES = ["message", "contact_request", "result", "error"];
const RECEIPT_TYPES = ["ack", "result", "error"];
const MAX_SKEW_SEC = 300;

export interface Sender {
  send(req: HubRequest): Promise<Answer>;
  receipt(req: HubRequest): Promise<Answer>;
  /** A hub-made notice "from" an agent (key id "system", unsigned): committed, then (webhook era) pushed to /wake. */
  notice(from: string, to: string, type: string, payload: Record<string, unknown>): Promise<void>;
}

export function createSender(world: HubWorld, registry: Registry, pusher: Pusher): Sender {
  const webhookEra = world.generation === "webhook-era";
  const windows = new Map<string, number[]>();
  const lastPayload = new Map<string, string>();

  /** A sliding 60 s window per agent, then per (agent, target); today with Retry-After. */
  function rateLimit(agentId: string, target: string): void {
    const now = Date.now();
    const check = (key: string, limit: number, code: string) => {
      const window = (windows.get(key) ?? []).filter((t) => t > now - 60_000);
      windows.set(key, window);
      if (window.length >= limit) {
        const retryAfter = Math.max(1, Math.ceil((60_000 - (now - window[0]!)) / 1000));
        throw new HubError(429, code, { args: { limit }, headers: { "Retry-After": String(retryAfter) } });
      }
      window.push(now);
    };
    check(agentId, world.rateLimitPerMinute, "rate_limit_exceeded");
    check(`${agentId}\n${target}`, world.pairRateLimitPerMinute, "conversation_rate_limit_exceeded");
  }

  function verifyEnvelope(e: Envelope): void {
    if (Math.abs(Math.floor(Date.now() / 1000) - e.ts) > MAX_SKEW_SEC) throw new HubError(400, "timestamp_out_of_range");
    if (payloadHashOf(e.payload) !== e.payload_hash) throw new HubError(400, "payload_hash_mismatch");
    const owner = [...world.agents.values()].find((a) => a.keys.get(e.sig.key_id)?.state === "active");
    if (!owner) throw new HubError(400, "signing_key_not_found_or_inactive");
    if (owner.agent_id !== e.from) throw new HubError(400, "key_does_not_belong_to_sender");
    if (!verifyBytes(owner.keys.get(e.sig.key_id)!.pubkey, signingInput(e), e.sig.value)) throw new HubError(400, "signature_verification_failed");
  }

  const envelopeOf = async (req: HubRequest): Promise<Envelope> => {
    const parsed = parseEnvelope(await req.json());
    if (Array.isArray(parsed)) throw invalidBody(parsed);
    return parsed;
  };

  const existingFor = (msgId: string, receiver: string) => world.records.find((r) => r.msg_id === msgId && r.receiver_id === receiver);
  const sendAnswer = (r: HubRecord, status: string) => answer({ queued: true, hub_msg_id: r.hub_msg_id, status, topic_id: r.topic_id }, 202);

  /** Marks records as committed: from now on history, status and the inbox see them. */
  function commit(records: HubRecord[], announce: string[]): void {
    for (const r of records) r.committed = true;
    for (const id of announce) world.notify(id);
  }

  function admitDirect(sender: string, e: Envelope): void {
    const receiver = world.agents.get(e.to);
    if (!receiver) throw new HubError(404, "unknown_agent");
    if (e.type === "contact_request" || receiver.message_policy === "open" || receiver.contacts.has(sender)) return;
    if (!webhookEra) {
      // Today's bypasses: the same owner, or any room the two share (a DM room the receiver made counts).
      const sameOwner = receiver.owner !== null && receiver.owner === world.agents.get(sender)?.owner;
      const shared = [...world.rooms.values()].some((room) => room.members.some((m) => m.agent_id === sender) && room.members.some((m) => m.agent_id === e.to));
      if (sameOwner || shared) return;
    }
    throw new HubError(403, "not_in_contacts");
  }

  function contactRequest(e: Envelope): void {
    if (e.from === e.to) throw new HubError(400, "cannot_send_contact_request_to_self");
    const receiver = world.agents.get(e.to)!;
    if (receiver.contacts.has(e.from)) throw new HubError(409, "already_in_contacts");
    const existing = world.contactRequests.find((r) => r.from_agent_id === e.from && r.to_agent_id === e.to);
    if (existing?.state === "pending") throw new HubError(409, "contact_request_already_pending");
    if (existing?.state === "accepted") throw new HubError(409, "contact_request_already_accepted");
    if (existing) Object.assign(existing, { state: "pending", resolved_at: null, message: e.payload.message ?? null });
    else if (!webhookEra && receiver.owner !== null) world.approvals.push({ id: randomUUID(), agent_id: e.to, kind: "contact_request", payload: { from_participant_id: e.from, message: e.payload.message ?? null, msg_id: e.msg_id } });
    else world.contactRequests.push({ id: world.contactRequests.length + 1, from_agent_id: e.from, to_agent_id: e.to, state: "pending", message: e.payload.message ?? null, created_at: Date.now(), resolved_at: null });
  }

  async function direct(e: Envelope, topic: string | null): Promise<Answer> {
    admitDirect(e.from, e);
    if (e.type === "contact_request") contactRequest(e);
    const roomId = e.type === "contact_request" ? null : ensureDmRoom(world, e.from, e.to);
    const topic_id = topic && roomId ? topicId(world, roomId, topic) : null;
    const existing = existingFor(e.msg_id, e.to);
    if (existing) return sendAnswer(existing, existing.state);
    const record = addRecord(world, { envelope: e, sender_id: e.from, receiver_id: e.to, room_id: roomId, topic, topic_id, goal: e.goal ?? null, mentioned: true }, !webhookEra);
    if (!webhookEra) {
      commit([], [e.to]);
      return sendAnswer(record, "queued");
    }
    await pusher.deliverNow(record, { roomId, topic, room: null });
    commit([record], record.state === "queued" ? [e.to] : []);
    return sendAnswer(record, record.state);
  }

  async function toRoom(e: Envelope, topic: string | null): Promise<Answer> {
    const room = world.rooms.get(e.to);
    if (!room) throw new HubError(404, "room_not_found");
    const me = room.members.find((m) => m.agent_id === e.from);
    if (!me) throw new HubError(403, "not_a_member");
    if (!canSend(room, me)) throw new HubError(403, "only_owner_admin_can_post");
    const hash = payloadHashOf(e.payload);
    const key = `${room.room_id}\n${e.from}`;
    if (!room.room_id.startsWith("rm_oc_") && lastPayload.get(key) === hash) throw new HubError(429, "duplicate_content");
    lastPayload.set(key, hash);
    const topic_id = topic ? topicId(world, room.room_id, topic) : null;
    const receivers = room.members.filter((m) => m.agent_id !== e.from && !m.muted).map((m) => m.agent_id);
    const mentions = new Set(e.mentions ?? []);
    const made: HubRecord[] = [];
    let first: HubRecord | undefined;
    for (const receiver of receivers) {
      const existing = existingFor(e.msg_id, receiver);
      if (existing) {
        first ??= existing;
        continue;
      }
      const mentioned = mentions.size > 0 && (mentions.has(receiver) || mentions.has("@all"));
      const record = addRecord(world, { envelope: e, sender_id: e.from, receiver_id: receiver, room_id: room.room_id, topic, topic_id, goal: e.goal ?? null, mentioned }, !webhookEra);
      first ??= record;
      made.push(record);
      if (webhookEra) await pusher.deliverNow(record, { roomId: room.room_id, topic, room: roomContext(world, room, receiver) });
    }
    commit(made, receivers);
    if (!first) return answer({ queued: false, hub_msg_id: `h_${hex(16)}`, status: "no_receivers", topic_id }, 202);
    return answer({ queued: true, hub_msg_id: first.hub_msg_id, status: "queued", topic_id }, 202);
  }

  async function send(req: HubRequest): Promise<Answer> {
    const me = registry.authenticate(req, "db");
    const e = await envelopeOf(req);
    if (e.from !== me) throw new HubError(403, "sender_does_not_match_token");
    if (!SEND_TYPES.includes(e.type)) throw new HubError(400, "send_invalid_type");
    const topic = e.topic || req.url.searchParams.get("topic") || null;
    rateLimit(me, e.to);
    verifyEnvelope(e);
    return e.to.startsWith("rm_") ? toRoom(e, topic) : direct(e, topic);
  }

  /** POST /hub/receipt: a signed ack/result/error from the original's receiver; no token. */
  async function receipt(req: HubRequest): Promise<Answer> {
    const e = await envelopeOf(req);
    if (!RECEIPT_TYPES.includes(e.type)) throw new HubError(400, "receipt_invalid_type");
    verifyEnvelope(e);
    if (!e.reply_to) throw new HubError(400, "receipt_must_have_reply_to");
    const original = visible(world).find((r) => r.msg_id === e.reply_to && r.receiver_id === e.from);
    if (!original) throw new HubError(404, "original_message_not_found");
    // A receipt already recorded changes nothing: the hub's transaction ends without a commit.
    if (existingFor(e.msg_id, original.sender_id)) return answer({ received: true });
    const now = Date.now();
    const apply = () => {
      if (e.type === "ack") [original.state, original.acked_at] = ["acked", now];
      else if (e.type === "result") [original.state, original.acked_at] = ["done", original.acked_at ?? now];
      else [original.state, original.last_error] = ["failed", String((e.payload.error as { code?: unknown } | undefined)?.code ?? "UNKNOWN")];
    };
    const fields = { envelope: e, sender_id: e.from, receiver_id: original.sender_id, room_id: original.room_id, topic: e.topic || original.topic, topic_id: original.topic_id, goal: e.goal ?? null };
    const record = addRecord(world, fields, !webhookEra);
    if (webhookEra) await pusher.deliverNow(record, { roomId: null, topic: null, room: null });
    apply();
    commit([record], record.state === "queued" ? [original.sender_id] : []);
    return answer({ received: true });
  }

  async function notice(from: string, to: string, type: string, payload: Record<string, unknown>): Promise<void> {
    const envelope = hubMadeEnvelope(from, to, type, payload, "system");
    // Committed before its push (unlike /hub/send).
    const record = addRecord(world, { envelope, sender_id: from, receiver_id: to });
    if (webhookEra && world.agents.get(to)?.endpoint?.state === "active") await pusher.deliverNow(record, { roomId: null, topic: null, room: null });
    else if (webhookEra && world.agents.get(to)?.endpoint) [record.last_error, record.next_retry_at] = ["ENDPOINT_UNREACHABLE", null];
    if (record.state === "queued") world.notify(to);
  }

  return { send, receipt, notice };
}
