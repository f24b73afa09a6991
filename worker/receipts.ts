// Receipts an inbox signs as its agent with the receipt key: the ack for an accepted message and the
// TTL_EXPIRED error for one that expired unread. Valid under the Agentline rules when the receipt key
// is one of the agent's registered keys.
import { draftEnvelope, fromBase64, importSigningKey, signEnvelope } from "../protocol/index.ts";
import type { Envelope } from "../protocol/index.ts";
import type { InboxConfig } from "./inbox-config.ts";

export type Signer = (message: Uint8Array) => Promise<Uint8Array>;

/** The signer for a receipt key's base64 seed (opened from storage by the inbox, secret-box.ts). */
export async function receiptSigner(seed: string): Promise<Signer> {
  return importSigningKey(fromBase64(seed)!);
}

export function signAck(config: InboxConfig, sign: Signer, original: Envelope, nowSec: number): Promise<Envelope> {
  const draft = draftEnvelope({
    from: config.agent_id,
    to: original.from,
    type: "ack",
    reply_to: original.msg_id,
    payload: {},
    ttl_sec: original.ttl_sec,
    ts: nowSec,
  });
  return signEnvelope(draft, config.receipt_key.key_id, sign);
}

export function signTtlExpired(
  config: InboxConfig,
  sign: Signer,
  original: { sender: string; msg_id: string },
  nowSec: number,
): Promise<Envelope> {
  const draft = draftEnvelope({
    from: config.agent_id,
    to: original.sender,
    type: "error",
    reply_to: original.msg_id,
    payload: { error: { code: "TTL_EXPIRED", message: `${config.agent_id} did not collect the message before its ttl_sec ran out` } },
    ts: nowSec,
  });
  return signEnvelope(draft, config.receipt_key.key_id, sign);
}
