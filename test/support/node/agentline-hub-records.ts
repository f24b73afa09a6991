// The stand-in hub's message records and the routes that read them: /hub/history, /hub/status/{msg_id},
// the pull inbox (GET /hub/inbox, its long poll, today's lease and POST /hub/inbox/ack and
// /lease/renew), and today's expiry loop (leases back to queued, TTL_EXPIRED). Only COMMITTED records
// are seen: the webhook era pushes inside /hub/send before it commits (fact 8). Imported by
// agentline-hub.ts and agentline-hub-send.ts; covered by test/node/agentline-hub.test.ts.
import { HubError, invalidBody } from "./agentline-hub-errors.ts";
import { roomContext } from "./agentline-hub-rooms.ts";
import { bodyText, flatText } from "./agentline-hub-text.ts";
import { answer, displayName, isoTime, jsonObject, newHubMsgId, queryBool, queryInt, secOrNull } from "./agentline-hub-world.ts";
import type { Answer, HubRecord, HubRequest, HubWorld } from "./agentline-hub-world.ts";
import { hubMadeEnvelope, modelEnvelope } from "./agentline-hub-wire.ts";
import type { Envelope } from "./agentline-hub-wire.ts";

export function addRecord(world: HubWorld, fields: Partial<HubRecord> & Pick<HubRecord, "envelope" | "sender_id" | "receiver_id">, committed = true): HubRecord {
  const record: HubRecord = {
    seq: world.nextSeq(), hub_msg_id: newHubMsgId(), msg_id: fields.envelope.msg_id, room_id: null, topic: null, topic_id: null, goal: null,
    state: "queued", mentioned: false, ttl_sec: fields.envelope.ttl_sec, created_at: Date.now(), delivered_at: null, acked_at: null, last_error: null,
    next_retry_at: null, retry_count: 0, committed, source_type: "agent", source_user_id: null, source_user_name: null, source_session_kind: null, ...fields,
  };
  world.records.push(record);
  return record;
}

export const visible = (world: HubWorld) => world.records.filter((r) => r.committed);
const today = (world: HubWorld) => world.generation === "current";
const model = (world: HubWorld, e: Envelope) => modelEnvelope(e, today(world));

function historyView(world: HubWorld, r: HubRecord, mentioned: boolean): Record<string, unknown> {
  const view: Record<string, unknown> = { hub_msg_id: r.hub_msg_id, envelope: model(world, r.envelope), room_id: r.room_id, topic: r.topic, topic_id: r.topic_id, goal: r.goal, state: r.state, created_at: isoTime(r.created_at), mentioned };
  if (today(world)) view.reply_preview = null;
  return view;
}

/** GET /hub/history: newest first; `after` oldest first (exclusive); `before` newest first below it. */
export function history(world: HubWorld, me: string, url: URL): Answer {
  const q = (name: string) => url.searchParams.get(name);
  const limit = queryInt(url, "limit", 20, 1, 100);
  const roomId = q("room_id");
  let rows = visible(world);
  let dedupe = false;
  if (roomId !== null) {
    const room = world.rooms.get(roomId);
    if (!room) throw new HubError(404, "room_not_found");
    if (!room.members.some((m) => m.agent_id === me)) throw new HubError(403, "not_a_member");
    // Today (and a public room of the webhook era): one record per msg_id, the lowest, whoever's it is.
    dedupe = today(world) || room.visibility === "public";
  }
  if (dedupe) {
    const first = new Map<string, HubRecord>();
    for (const r of rows) if (r.room_id === roomId && (today(world) || r.state !== "failed") && !first.has(r.msg_id)) first.set(r.msg_id, r);
    rows = [...first.values()];
  } else rows = rows.filter((r) => (r.sender_id === me || r.receiver_id === me) && r.state !== "failed" && (roomId === null || r.room_id === roomId));
  if (q("topic") !== null) rows = rows.filter((r) => r.topic === q("topic"));
  if (q("topic_id") !== null) rows = rows.filter((r) => r.topic_id === q("topic_id"));
  const peer = q("peer");
  if (peer !== null) rows = dedupe ? rows.filter((r) => r.sender_id === peer) : rows.filter((r) => (r.sender_id === me && r.receiver_id === peer) || (r.sender_id === peer && r.receiver_id === me));
  const cursorName = q("before") !== null ? "before" : q("after") !== null ? "after" : null;
  if (cursorName !== null) {
    const cursor = visible(world).find((r) => r.hub_msg_id === q(cursorName));
    if (!cursor) throw new HubError(400, "invalid_cursor");
    rows = rows.filter((r) => (cursorName === "after" ? r.seq > cursor.seq : r.seq < cursor.seq));
  }
  rows.sort((a, b) => (cursorName === "after" ? a.seq - b.seq : b.seq - a.seq));
  const page = rows.slice(0, limit);
  const own = (r: HubRecord) => (roomId === null ? r.mentioned : visible(world).find((x) => x.msg_id === r.msg_id && x.receiver_id === me)?.mentioned ?? false);
  const messages = page.map((r) => historyView(world, r, dedupe && today(world) ? own(r) : r.mentioned));
  return answer({ messages, count: messages.length, has_more: rows.length > limit });
}

/** GET /hub/status/{msg_id}: the sender's first record of it. */
export function status(world: HubWorld, me: string, msgId: string): Answer {
  const all = visible(world).filter((r) => r.msg_id === msgId);
  if (all.length === 0) throw new HubError(404, "message_not_found");
  const r = all.find((x) => x.sender_id === me);
  if (!r) throw new HubError(403, "not_the_sender");
  return answer({ msg_id: r.msg_id, state: r.state, created_at: secOrNull(r.created_at), delivered_at: secOrNull(r.delivered_at), acked_at: secOrNull(r.acked_at), last_error: r.last_error });
}

const OLD_NOTES: Record<string, string> = {
  "HTTP 401": "Webhook 认证失败 (HTTP 401)。请检查 webhook_token 是否正确。", "HTTP 403": "Webhook 认证被拒绝 (HTTP 403)。请检查 webhook_token 权限。",
  "HTTP 404": "Endpoint 返回 404。请检查 endpoint URL 路径是否正确。", CONNECTION_REFUSED: "无法连接到 endpoint。请检查目标服务是否在运行。",
  TIMEOUT: "Webhook 请求超时。请检查目标服务响应速度或网络状况。", TTL_EXPIRED: "Webhook 投递超时，重试已耗尽。请检查 endpoint 配置。",
  NO_ENDPOINT: "未注册 endpoint。请先注册 webhook endpoint。",
  ENDPOINT_UNREACHABLE: "Endpoint 已被标记为不可达。请重新注册 endpoint: POST /registry/agents/{agent_id}/endpoints。在此之前只能通过轮询 /hub/inbox 获取消息。",
};

function deliveryNote(world: HubWorld, lastError: string | null): string | null {
  if (!lastError) return null;
  if (today(world)) return lastError === "TTL_EXPIRED" ? "消息在队列中过期，接收方未及时拉取。" : null;
  if (OLD_NOTES[lastError]) return OLD_NOTES[lastError]!;
  if (lastError.startsWith("HTTP 5")) return `目标服务返回服务器错误 (${lastError})。请检查目标服务运行状态。`;
  if (lastError.startsWith("HTTP 4")) return `Webhook 请求被拒绝 (${lastError})。请检查 endpoint 配置。`;
  return `Webhook 投递失败: ${lastError}。请检查 endpoint 配置是否正确。`;
}

/** One record as /hub/inbox lists it to its receiver, in the generation's fields and order. */
export function inboxView(world: HubWorld, r: HubRecord): Record<string, unknown> {
  const room = r.room_id ? world.rooms.get(r.room_id) : undefined;
  const ctx = room ? roomContext(world, room, r.receiver_id) : null;
  const roomFields = (withRule: boolean) => ({ room_id: r.room_id, room_name: ctx?.name ?? null, ...(withRule ? { room_rule: null } : {}), room_member_count: ctx?.member_count ?? null, room_member_names: ctx?.member_names ?? null, my_role: ctx?.my_role ?? null, my_can_send: ctx?.my_can_send ?? null });
  const common = { topic: r.topic, topic_id: r.topic_id, goal: r.goal, delivery_note: deliveryNote(world, r.last_error), mentioned: r.mentioned };
  if (!today(world)) {
    const text = flatText(r.envelope, displayName(world, r.sender_id), ctx, r.mentioned);
    return { hub_msg_id: r.hub_msg_id, envelope: model(world, r.envelope), text, ...roomFields(false), ...common };
  }
  const source = { source_type: r.source_type, source_user_id: r.source_user_id, source_user_name: r.source_user_name, source_session_kind: r.source_session_kind, reply_preview: null };
  return { hub_msg_id: r.hub_msg_id, envelope: model(world, r.envelope), text: bodyText(r.envelope), ...roomFields(true), ...common, ...source };
}

const queuedFor = (world: HubWorld, me: string, roomId: string | null) => visible(world).filter((r) => r.receiver_id === me && r.state === "queued" && (roomId === null || r.room_id === roomId)).sort((a, b) => a.created_at - b.created_at || a.seq - b.seq);

function waitForMail(world: HubWorld, me: string, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      world.listeners.delete(listener);
      world.closing.removeEventListener("abort", done);
      resolve();
    };
    const listener = (agentId: string) => agentId === me && done();
    const timer = setTimeout(done, ms);
    world.listeners.add(listener);
    world.closing.addEventListener("abort", done);
  });
}

/** GET /hub/inbox?limit&timeout&ack&room_id: queued records oldest first; ack=false leases them today. */
export async function inbox(world: HubWorld, me: string, url: URL): Promise<Answer> {
  const [limit, timeout, ack] = [queryInt(url, "limit", 10, 1, 50), queryInt(url, "timeout", 0, 0, 30), queryBool(url, "ack", true)];
  const roomId = url.searchParams.get("room_id");
  if (queuedFor(world, me, roomId).length === 0 && timeout > 0) await waitForMail(world, me, timeout * 1000);
  const rows = queuedFor(world, me, roomId);
  const page = rows.slice(0, limit);
  const messages = page.map((r) => inboxView(world, r));
  const now = Date.now();
  for (const r of page) {
    if (ack) [r.state, r.delivered_at, r.next_retry_at] = ["delivered", now, null];
    // The webhook era leaves an ack=false pull as it was; today leases it.
    else if (today(world)) [r.state, r.next_retry_at] = ["processing", now + world.timings.leaseMs];
  }
  return answer({ messages, count: messages.length, has_more: rows.length > limit });
}

async function messageIds(req: HubRequest): Promise<string[]> {
  const ids = (await jsonObject(req)).message_ids;
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) throw invalidBody([{ type: "list_type", loc: ["body", "message_ids"], msg: "Input should be a valid list", input: ids }]);
  return ids;
}

/** POST /hub/inbox/ack: queued or leased records of the caller become delivered (delivered_at and acked_at). */
export async function inboxAck(world: HubWorld, me: string, req: HubRequest): Promise<Answer> {
  const ids = await messageIds(req);
  const rows = visible(world).filter((r) => r.receiver_id === me && ids.includes(r.hub_msg_id) && (r.state === "queued" || r.state === "processing"));
  const now = Date.now();
  for (const r of rows) [r.state, r.delivered_at, r.acked_at, r.next_retry_at] = ["delivered", now, now, null];
  return answer({ acked: rows.length });
}

/** POST /hub/inbox/lease/renew: the caller's leased records get a full lease again. */
export async function leaseRenew(world: HubWorld, me: string, req: HubRequest): Promise<Answer> {
  const ids = await messageIds(req);
  const rows = visible(world).filter((r) => r.receiver_id === me && ids.includes(r.hub_msg_id) && r.state === "processing");
  for (const r of rows) r.next_retry_at = Date.now() + world.timings.leaseMs;
  return answer({ renewed: rows.length });
}

/** The hub's TTL_EXPIRED notice to the sender of `original`. */
export function ttlError(world: HubWorld, original: HubRecord): HubRecord {
  const envelope = hubMadeEnvelope("hub", original.sender_id, "error", { error: { code: "TTL_EXPIRED", message: "Message delivery timed out" } }, "hub", original.msg_id);
  return addRecord(world, { envelope, sender_id: "hub", receiver_id: original.sender_id });
}

/** Today's expiry loop: leases that ran out go back to queued (with inbox_update); queued past TTL fail. */
export function expiryTick(world: HubWorld): void {
  const now = Date.now();
  const reclaimed = new Set<string>();
  for (const r of visible(world)) {
    if (r.state === "processing" && r.next_retry_at !== null && r.next_retry_at <= now) {
      [r.state, r.next_retry_at] = ["queued", null];
      reclaimed.add(r.receiver_id);
    }
  }
  for (const agentId of reclaimed) world.notify(agentId);
  for (const r of visible(world)) {
    if (r.state !== "queued" || r.created_at + r.ttl_sec * 1000 > now) continue;
    [r.state, r.last_error, r.next_retry_at] = ["failed", "TTL_EXPIRED", null];
    if (["ack", "result", "error"].includes(r.envelope.type)) continue;
    ttlError(world, r);
    world.notify(r.sender_id);
  }
}
