// What an inbox keeps to publish its gateway's A2A channel (protocol/a2a.ts): the peers let through (names
// and their tokens' SHA-256, never a token), the deadline of a call, and the Agent Card last fetched (served
// while the agent is offline). Reading an owner's PUT body, and checking a caller's bearer against every
// peer in constant time. Pure; used by a2a-book.ts and a2a-routes.ts; covered by test/worker/a2a-routes.test.ts.
import { A2A_CARD_MAX_BYTES, A2A_PEERS_MAX, A2A_PEER_NAME, LIVE, RelayError, constantTimeEqual, sha256Hex, utf8 } from "../../protocol/index.ts";
import type { A2aPeer, A2aSettingsBody } from "../../protocol/index.ts";

export interface A2aSettings {
  peers: A2aPeer[];
  deadline_sec: number;
  updated_at: number;
}

export interface StoredCard {
  /** The card as the gateway (or the owner's PUT) gave it: its URLs are rewritten as it is served. */
  card: Record<string, unknown>;
  stored_at: number;
}

const invalid = (message: string) => new RelayError(400, "invalid_a2a_settings", message);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function peerOf(value: unknown, index: number): A2aPeer {
  if (!isRecord(value) || typeof value.name !== "string" || typeof value.token_sha256 !== "string") {
    throw invalid(`peers[${index}] must be {"name", "token_sha256"}`);
  }
  if (!A2A_PEER_NAME.test(value.name)) throw invalid(`peers[${index}].name must be 1 to 64 of A-Z, a-z, 0-9, ".", "_" and "-" (the peer's name in channels.a2a.peers)`);
  if (!/^[0-9a-f]{64}$/.test(value.token_sha256)) throw invalid(`peers[${index}].token_sha256 must be the SHA-256 of the peer's token, 64 lower-case hex digits (the relay never keeps a token)`);
  return { name: value.name, token_sha256: value.token_sha256 };
}

/** PUT /inbox/{id}/a2a's body: {peers: [{name, token_sha256}], deadline_sec, card?}. */
export function parseA2aSettings(body: unknown): { peers: A2aPeer[]; deadlineSec: number; card: Record<string, unknown> | null } {
  if (!isRecord(body)) throw invalid('the body must be a JSON object: {"peers": [{"name", "token_sha256"}], "deadline_sec", "card"?}');
  const unknown = Object.keys(body).filter((key) => !["peers", "deadline_sec", "card"].includes(key));
  if (unknown.length > 0) throw invalid(`unknown field ${unknown.map((k) => `"${k}"`).join(", ")}: the fields are peers, deadline_sec, card`);
  if (!Array.isArray(body.peers) || body.peers.length > A2A_PEERS_MAX) throw invalid(`peers must be a list of at most ${A2A_PEERS_MAX} peers`);
  const peers = body.peers.map(peerOf);
  if (new Set(peers.map((p) => p.name)).size !== peers.length) throw invalid("each peer's name appears once");
  const deadline = body.deadline_sec;
  if (typeof deadline !== "number" || !Number.isInteger(deadline) || deadline < 1 || deadline > LIVE.deadlineSecMax) {
    throw invalid(`deadline_sec must be a whole number from 1 to ${LIVE.deadlineSecMax}: just above the gateway's channels.a2a.replyTimeoutMs`);
  }
  if (body.card !== undefined && !isRecord(body.card)) throw invalid("card must be the gateway's Agent Card (a JSON object)");
  if (body.card !== undefined && utf8(JSON.stringify(body.card)).byteLength > A2A_CARD_MAX_BYTES) throw invalid(`card is at most ${A2A_CARD_MAX_BYTES} bytes of JSON`);
  return { peers, deadlineSec: deadline, card: (body.card as Record<string, unknown> | undefined) ?? null };
}

/** The bearer of an Authorization header (the gateway's own reading: `Bearer <token>`, no spaces in it). */
export function bearerOf(authorization: string | null): string | null {
  return /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1] ?? null;
}

/**
 * The peer whose token is `bearer`, or null. Every peer's hash is compared in full, whatever matched before:
 * the time it takes says nothing about which hash (or how much of one) matched.
 */
export async function peerFor(bearer: string | null, peers: readonly A2aPeer[]): Promise<string | null> {
  const presented = utf8(await sha256Hex(bearer ?? ""));
  let found: string | null = null;
  for (const peer of peers) {
    if (constantTimeEqual(presented, utf8(peer.token_sha256)) && bearer !== null && found === null) found = peer.name;
  }
  return found;
}
