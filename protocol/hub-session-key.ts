// The hub's session key: one OpenClaw session per room (and topic). The public hub code (forward.py
// build_session_key at 9d900985) derives it as "botcord:" + UUIDv5(namespace = UUIDv5(DNS, "botcord"),
// name = room_id or "room_id:topic"), "default" when there is no room; Agentline's guide writes
// "agentline:<room_id>". The renderer (hub-render.ts) writes the first form for every message it renders,
// pulled or direct, and the bridge (worker/hub/hub-bridge.ts) checks either form when matching a webhook
// body to its signed original. Synchronous (noble's SHA-1, not WebCrypto's), because the agent orders
// its deliveries by this key as it takes each frame (conversation-key.ts). Covered by
// test/protocol/hub-flat.test.ts.
import { sha1 } from "@noble/hashes/legacy.js";
import { toHex, utf8 } from "./encoding.ts";

/** UUIDv5(NAMESPACE_DNS, "botcord"), computed once and checked by test/protocol/hub-flat.test.ts. */
export const BOTCORD_SESSION_NAMESPACE = "77cc0f3e-9689-5bf4-8ef1-de33175fa594";

/** The namespace of the keys the hub gives and the renderer writes. */
export const HUB_SESSION_PREFIX = "botcord:";

/**
 * Every prefix a hub message's session key reaches the gateway with: the hub's own (what the renderer
 * writes for direct and pulled messages, and what a webhook-era hub posts) and Agentline's (its service's
 * webhook bodies name "agentline:<room_id>" and are delivered as they came). The gateway's
 * hooks.allowedSessionKeyPrefixes must allow both; doctor says so, as docs/openclaw-setup.md does.
 */
export const HUB_SESSION_KEY_PREFIXES: readonly string[] = [HUB_SESSION_PREFIX, "agentline:"];

function uuidBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, "");
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** RFC 4122 version 5: SHA-1 of namespace bytes + name, version and variant bits set. */
export function uuidV5(namespace: string, name: string): string {
  const nameBytes = utf8(name);
  const input = new Uint8Array(16 + nameBytes.length);
  input.set(uuidBytes(namespace));
  input.set(nameBytes, 16);
  const hash = sha1(input).slice(0, 16);
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = toHex(hash);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The session key the hub gives a room (and topic), in its own form. */
export function hubSessionKey(roomId: string | null, topic: string | null): string {
  const seed = roomId ? (topic ? `${roomId}:${topic}` : roomId) : "default";
  return `${HUB_SESSION_PREFIX}${uuidV5(BOTCORD_SESSION_NAMESPACE, seed)}`;
}

/**
 * Whether a webhook body's session key can stand for this room and topic: true for the hub's UUID
 * form of them and for Agentline's "agentline:<room_id>"; null when the key is in a form that names
 * no room we can check (another namespace), so the caller decides on the rest alone.
 */
export function sessionKeyNamesRoom(sessionKey: string, roomId: string | null, topic: string | null): boolean | null {
  const colon = sessionKey.indexOf(":");
  const namespace = sessionKey.slice(0, colon);
  const rest = sessionKey.slice(colon + 1);
  if (namespace === "botcord" && /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(rest)) {
    return sessionKey === hubSessionKey(roomId, topic);
  }
  // Agentline names the room ("rm_…"); a key naming anything else says nothing we can check.
  if (namespace === "agentline" && rest.startsWith("rm_")) return roomId !== null && (rest === roomId || rest === `${roomId}:${topic ?? ""}`);
  return null;
}
