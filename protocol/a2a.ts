// A2A through the relay, on the wire between the owner's CLI (`clawrelay a2a enable|status|disable`) and the
// relay (worker/a2a/): the settings an owner PUTs, what GET answers, and the JSON-RPC error body the relay
// answers an A2A client with when it cannot pass a call on. Pure; covered by test/worker/a2a-routes.test.ts.
import { LIVE } from "./live.ts";

/** A peer the relay lets through: its name (openclaw.json channels.a2a.peers.<name>) and its token's SHA-256 (lower-case hex). */
export interface A2aPeer {
  name: string;
  token_sha256: string;
}

/** PUT /inbox/{id}/a2a (signed by a key of the inbox). */
export interface A2aSettingsBody {
  peers: A2aPeer[];
  /** How long the relay waits for the gateway's answer to a call: 1..LIVE.deadlineSecMax. */
  deadline_sec: number;
  /** The gateway's Agent Card, served while the agent is offline until a fresher one is fetched. */
  card?: Record<string, unknown>;
}

/** GET /inbox/{id}/a2a. */
export interface A2aView {
  enabled: boolean;
  /** The peers' names (never their tokens' hashes). */
  peers: string[];
  deadline_sec: number | null;
  /** When the Agent Card the relay serves offline was stored (null: none yet). */
  card_stored_at: number | null;
  /** The last call refused at the relay since its object woke (a bad bearer, a body too large). */
  last_refusal: { at: number; code: string; message: string } | null;
}

export const A2A_PEERS_MAX = 64;
export const A2A_PEER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** The relay's own A2A endpoint under an inbox, named in the Agent Card it serves. */
export const A2A_ENDPOINT_PATH = "/a2a/v1";
/** An Agent Card the relay keeps, at most (bytes of its JSON). */
export const A2A_CARD_MAX_BYTES = 64 * 1024;
/** A JSON-RPC server error (the reserved -32000..-32099 range): the relay could not pass the call on. */
export const JSON_RPC_RELAY_ERROR = -32000;

export interface JsonRpcErrorBody {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string; data: { code: string; retry_after_sec?: number } };
}

export function jsonRpcError(id: string | number | null, code: string, message: string, retryAfterSec?: number, rpcCode = JSON_RPC_RELAY_ERROR): JsonRpcErrorBody {
  return { jsonrpc: "2.0", id, error: { code: rpcCode, message, data: { code, ...(retryAfterSec !== undefined ? { retry_after_sec: retryAfterSec } : {}) } } };
}

/** The deadline the CLI asks for: just above the gateway's replyTimeoutMs, so its working task comes back first. */
export function a2aDeadlineSec(replyTimeoutMs: number): number {
  return Math.min(Math.ceil(replyTimeoutMs / 1000) + LIVE.a2aMarginSec, LIVE.deadlineSecMax);
}
