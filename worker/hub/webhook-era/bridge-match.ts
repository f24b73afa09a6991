// Webhook era: matching a hub's flat webhook bodies (claims) to the signed records of its history —
// by sender, by the text after "says: " and by the room the body's session key names, in any
// namespace — and when the bridge looks again. Pure; used by hub-bridge.ts, covered by
// test/worker/hub-bridge.test.ts.
import { messageBody, parseEnvelope, sessionKeyNamesRoom, sha256Hex } from "../../../protocol/index.ts";
import type { Envelope } from "../../../protocol/index.ts";
import type { HubRecord } from "../../../protocol/index.ts";
import type { BridgeClaim } from "../hub-settings.ts";

export const textHash = (text: string) => sha256Hex(text);

/** Held claims share seq 0: a claim is told apart by when it came and what it says as well. */
export const claimKey = (c: BridgeClaim) => `${c.seq}/${c.at}/${c.sender}/${c.text_hash}`;

export function envelopeOf(record: HubRecord): Envelope | null {
  try {
    return parseEnvelope(record.envelope);
  } catch {
    // Not an envelope the relay reads (the hub's own notes): nothing to match.
    return null;
  }
}

/** A signed message some other agent sent this inbox (directly, or in a room it is in). */
export function isOurs(envelope: Envelope, record: HubRecord, agentId: string): boolean {
  if (envelope.type !== "message" || envelope.from === agentId || envelope.sig.value === "") return false;
  return envelope.to === agentId || (typeof record.room_id === "string" && envelope.to === record.room_id);
}

export const roomOf = (record: HubRecord): string | null => (typeof record.room_id === "string" ? record.room_id : null);

/** `exact`: the same text too; else sender and room alone (once the record's grace is over). */
export async function claimFor(claims: BridgeClaim[], envelope: Envelope, record: HubRecord, exact: boolean): Promise<BridgeClaim | undefined> {
  const hash = exact ? await textHash(messageBody(envelope.payload)) : null;
  const room = roomOf(record);
  const topic = typeof record.topic === "string" ? record.topic : null;
  for (const claim of claims) {
    if (claim.sender !== envelope.from || (hash !== null && claim.text_hash !== hash)) continue;
    // A held copy is released only by a record with its very text: sender and room are not enough.
    if (claim.held && !exact) continue;
    // A key that names a room must name this one; one that names none (another namespace) is no help.
    const names = sessionKeyNamesRoom(claim.session_key, room, topic);
    if (names === true || (names === null && exact)) return claim;
  }
  return undefined;
}

/** When to look again: soon while a claim is young, then less often. */
export function nextLook(claims: BridgeClaim[], open: boolean, nowMs: number): number | null {
  if (claims.length === 0) return open ? nowMs + 60_000 : null;
  const youngest = Math.max(...claims.map((c) => c.at));
  const age = nowMs - youngest;
  return nowMs + (age < 10_000 ? 2000 : age < 60_000 ? 10_000 : 60_000);
}
