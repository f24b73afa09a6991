// Rooms at the stand-in hub: the DM room each pair shares (rm_dm_<smaller id>_<larger id>), group rooms
// made with POST /hub/rooms, members and their send permission, topics (one tp_ id per room and title),
// and the room context the hub writes into flat text and inbox records. Members keep the order they
// were added in: the owner, then member_ids as given (the real hub iterates a Python set there, so any
// order is one it could produce). Imported by agentline-hub.ts and agentline-hub-send.ts.
import { randomUUID } from "node:crypto";
import { HubError } from "./agentline-hub-errors.ts";
import { answer, displayName, field, hex, isoTime, jsonObject } from "./agentline-hub-world.ts";
import type { Answer, HubRequest, HubRoom, HubWorld, RoomMember } from "./agentline-hub-world.ts";
import type { RoomContext } from "./agentline-hub-text.ts";

export const dmRoomId = (a: string, b: string) => {
  const [x, y] = [a, b].sort();
  return `rm_dm_${x}_${y}`;
};

const member = (agent_id: string, role: RoomMember["role"]): RoomMember => ({
  agent_id, role, participant_type: agent_id.startsWith("hu_") ? "human" : "agent", muted: false, can_send: null, joined_at: Date.now(),
});

export function newRoom(world: HubWorld, room_id: string, name: string, owner: string, members: RoomMember[], maxMembers: number | null): HubRoom {
  const room: HubRoom = { room_id, name, description: "", owner_id: owner, visibility: "private", join_policy: "invite_only", max_members: maxMembers, default_send: true, default_invite: false, members, created_at: Date.now() };
  world.rooms.set(room_id, room);
  return room;
}

/** The DM room of a pair, made on their first message: both members, ids sorted. */
export function ensureDmRoom(world: HubWorld, sender: string, receiver: string): string {
  const room_id = dmRoomId(sender, receiver);
  if (!world.rooms.has(room_id)) newRoom(world, room_id, `DM ${[sender, receiver].sort().join(" & ")}`, sender, [sender, receiver].sort().map((id) => member(id, "member")), 2);
  return room_id;
}

/** A room a dashboard made (owner chat, a human's DM), members in the given order. */
export function dashboardRoom(world: HubWorld, room_id: string, name: string, members: [string, RoomMember["role"]][]): HubRoom {
  return world.rooms.get(room_id) ?? newRoom(world, room_id, name, members[0]![0], members.map(([id, role]) => member(id, role)), null);
}

export function canSend(room: HubRoom, m: RoomMember): boolean {
  if (m.role === "owner") return true;
  if (m.can_send !== null) return m.can_send;
  return m.role === "admin" || room.default_send;
}

/** The flat text's room context for a receiver; without `receiver` (the retry loop) no permission part. */
export function roomContext(world: HubWorld, room: HubRoom, receiver: string | null): RoomContext {
  const mine = receiver === null ? undefined : room.members.find((m) => m.agent_id === receiver);
  return {
    room_id: room.room_id, name: room.name, member_count: room.members.length,
    member_names: room.members.map((m) => displayName(world, m.agent_id) ?? m.agent_id),
    my_role: mine ? mine.role : null, my_can_send: mine ? canSend(room, mine) : null,
  };
}

/** The topic's id in its room, made on first use. */
export function topicId(world: HubWorld, roomId: string, title: string): string {
  const key = `${roomId}\n${title}`;
  if (!world.topics.has(key)) world.topics.set(key, `tp_${hex(6)}`);
  return world.topics.get(key)!;
}

function roomView(world: HubWorld, room: HubRoom): Record<string, unknown> {
  const members = room.members.map((m) => ({ agent_id: m.agent_id, role: m.role, muted: m.muted, can_send: m.can_send, can_invite: null, joined_at: isoTime(m.joined_at) }));
  const base = { room_id: room.room_id, name: room.name, description: room.description, owner_id: room.owner_id, visibility: room.visibility, join_policy: room.join_policy, max_members: room.max_members, default_send: room.default_send, default_invite: room.default_invite, slow_mode_seconds: null, member_count: room.members.length };
  if (world.generation === "webhook-era") return { ...base, members, created_at: isoTime(room.created_at) };
  const { room_id, name, description } = base;
  const today = members.map((m, i) => ({
    agent_id: m.agent_id, participant_type: room.members[i]!.participant_type, display_name: displayName(world, m.agent_id), avatar_url: world.agents.get(m.agent_id)?.avatar_url ?? null,
    role: m.role, muted: m.muted, can_send: m.can_send, can_invite: m.can_invite, joined_at: m.joined_at, online: false,
  }));
  return {
    room_id, name, description, rule: null, owner_id: room.owner_id, owner_type: "agent", visibility: room.visibility, join_policy: room.join_policy, required_subscription_product_id: null,
    max_members: room.max_members, default_send: room.default_send, default_invite: room.default_invite, allow_human_send: true, slow_mode_seconds: null,
    member_count: base.member_count, members: today, created_at: isoTime(room.created_at), url: `https://botcord.chat/chats/messages/${room_id}`,
  };
}

/** Whether `inviter` may put `invitee` in a room: open policy, or the inviter is a contact of theirs. */
const admits = (world: HubWorld, inviter: string, invitee: string) => {
  const agent = world.agents.get(invitee);
  return !agent || agent.message_policy === "open" || agent.contacts.has(inviter);
};

/** POST /hub/rooms {name, member_ids}: 201 and the room, the creator its owner. */
export async function createRoom(world: HubWorld, me: string, req: HubRequest): Promise<Answer> {
  const body = await jsonObject(req);
  const name = field(body, "name");
  const ids = Array.isArray(body.member_ids) ? body.member_ids.filter((id): id is string => typeof id === "string") : [];
  const unique = [...new Set(ids)].filter((id) => id !== me);
  if (unique.some((id) => !world.agents.has(id))) throw new HubError(400, world.generation === "current" ? "member_ids_not_found" : "One or more member_ids not found");
  const denied = unique.filter((id) => !admits(world, me, id)).sort();
  if (denied.length > 0) throw new HubError(403, "admission_denied_contacts_only", { args: { denied: `[${denied.map((d) => `'${d}'`).join(", ")}]` } });
  const room = newRoom(world, `rm_${hex(6)}`, name, me, [member(me, "owner"), ...unique.map((id) => member(id, "member"))], typeof body.max_members === "number" ? body.max_members : null);
  if (typeof body.description === "string") room.description = body.description;
  if (typeof body.default_send === "boolean") room.default_send = body.default_send;
  return answer(roomView(world, room), 201);
}

/**
 * POST /hub/rooms/{id}/members {agent_id}: the webhook era adds the member (201 and the room); today an
 * agent with an owner is queued for that owner's approval (202), as every install-made agent is.
 */
export async function addMember(world: HubWorld, me: string, roomId: string, req: HubRequest): Promise<Answer> {
  const room = world.rooms.get(roomId);
  if (!room) throw new HubError(404, "room_not_found");
  const inviter = room.members.find((m) => m.agent_id === me);
  if (!inviter) throw new HubError(403, "not_a_member");
  if (inviter.role === "member" && !room.default_invite) throw new HubError(403, "You do not have invite permission");
  const target = field(await jsonObject(req), "agent_id");
  const agent = world.agents.get(target);
  if (!agent) throw new HubError(404, "agent_not_found");
  if (!admits(world, me, target)) throw new HubError(403, "Admission denied: target agent has contacts_only policy and you are not in their contacts");
  if (world.generation === "current" && agent.owner !== null) {
    const approval = { id: randomUUID(), agent_id: target, kind: "room_invite", payload: { room_id: roomId, inviter: me } };
    world.approvals.push(approval);
    return answer({ status: "queued_for_approval", approval_id: approval.id }, 202);
  }
  if (!room.members.some((m) => m.agent_id === target)) room.members.push(member(target, "member"));
  return answer(roomView(world, room), 201);
}
