// Receipts an inbox signs as its agent with the receipt key: the ack for an accepted message and the
// TTL_EXPIRED error for one that expired unread. Valid under the Agentline rules when the receipt key
// is one of the agent's registered keys.
import { ENVELOPE_VERSION, draftEnvelope, fromBase64, importSigningKey, randomBytes, signEnvelope, toHex } from "../../protocol/index.ts";
import type { Envelope, UnsignedEnvelope } from "../../protocol/index.ts";
import type { InboxConfig } from "../inbox-config.ts";

export type Signer = (message: Uint8Array) => Promise<Uint8Array>;

/** The signer for a receipt key's base64 seed (opened from storage by the inbox, secret-box.ts). */
export async function receiptSigner(seed: string): Promise<Signer> {
  return importSigningKey(fromBase64(seed)!);
}

/**
 * A UUIDv7 (RFC 9562): 48 bits of milliseconds, then random bits. Acks get time-ordered ids so that a
 * batch of them, filed by (sender, msg_id) in the receiving inbox's dedup table, lands in adjacent rows
 * (a few pages written) instead of one random page each.
 */
export function timeOrderedUuid(nowMs: number): string {
  const bytes = randomBytes(16);
  for (let i = 5, t = nowMs; i >= 0; i--, t = Math.floor(t / 256)) bytes[i] = t % 256;
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Every ack's payload is {}: payload_hash of {}, written out (hashing is async, and acks are built in
 * synchronous code; test/worker/receipts.test.ts holds it to payloadHash({})).
 */
export const EMPTY_PAYLOAD_HASH = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";

export function signAck(config: InboxConfig, sign: Signer, original: Envelope, nowMs: number): Promise<Envelope> {
  // The fields in draftEnvelope's order, so an ack serialises as any other envelope does.
  const draft: UnsignedEnvelope = {
    v: ENVELOPE_VERSION,
    msg_id: timeOrderedUuid(nowMs),
    ts: Math.floor(nowMs / 1000),
    from: config.agent_id,
    to: original.from,
    type: "ack",
    reply_to: original.msg_id,
    ttl_sec: original.ttl_sec,
    payload: {},
    payload_hash: EMPTY_PAYLOAD_HASH,
  };
  return signEnvelope(draft, config.receipt_key.key_id, sign);
}

/**
 * An ack as a dedup record keeps it: what varies between acks. The rest follows from the record
 * (to = its sender, reply_to = its msg_id) and the inbox (from), so a record holds ~200 bytes, not ~560.
 */
export interface KeptAck {
  msg_id: string;
  ts: number;
  ttl_sec: number;
  key_id: string;
  sig: string;
}

export function keptAck(ack: Envelope): KeptAck {
  return { msg_id: ack.msg_id, ts: ack.ts, ttl_sec: ack.ttl_sec, key_id: ack.sig.key_id, sig: ack.sig.value };
}

/** The ack signAck made, rebuilt field for field (same order, so it serialises to the same JSON). */
export function ackFromKept(kept: KeptAck, inboxId: string, record: { sender: string; msg_id: string }): Envelope {
  return {
    v: ENVELOPE_VERSION,
    msg_id: kept.msg_id,
    ts: kept.ts,
    from: inboxId,
    to: record.sender,
    type: "ack",
    reply_to: record.msg_id,
    ttl_sec: kept.ttl_sec,
    payload: {},
    payload_hash: EMPTY_PAYLOAD_HASH,
    sig: { alg: "ed25519", key_id: kept.key_id, value: kept.sig },
  };
}

export async function signTtlExpired(
  config: InboxConfig,
  sign: Signer,
  original: { sender: string; msg_id: string },
  nowSec: number,
): Promise<Envelope> {
  const draft = await draftEnvelope({
    from: config.agent_id,
    to: original.sender,
    type: "error",
    reply_to: original.msg_id,
    payload: { error: { code: "TTL_EXPIRED", message: `${config.agent_id} did not collect the message before its ttl_sec ran out` } },
    ts: nowSec,
  });
  return signEnvelope(draft, config.receipt_key.key_id, sign);
}
