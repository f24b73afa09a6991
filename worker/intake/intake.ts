// Accepting a message into an inbox: verification, dedup, policy, rate and capacity, storage, receipts.
// The order of checks is the product's contract (docs/protocol.md, "The checks, in order").
import {
  HUB_SENDER,
  MIN_DEDUP_RETENTION_SEC,
  RelayError,
  TIMESTAMP_WINDOW_SEC,
  payloadHash,
  sha256Hex,
  signingInput,
  utf8,
  verifyEnvelope,
} from "../../protocol/index.ts";
import type { Envelope, KeyRecord } from "../../protocol/index.ts";
import { policyRefusal } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { NewMessage } from "../storage/stored-message.ts";
import type { ResolvedKey } from "./key-resolver.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { ackFromKept, keptAck, signAck } from "./receipts.ts";
import type { KeptAck, Signer } from "./receipts.ts";

/** The acks owed to sibling inboxes (sibling-receipts.ts's SiblingOutbox): what intake asks of them. */
export interface OwedAcks {
  /** Whether this ack goes over now or joins the owed ones. */
  route(nowMs: number, stored: boolean): "now" | "owed";
  /** The seq every owed ack up to which was handed over, written into each new dedup record. */
  cursor(): number | null;
  owe(seq: number, target: string, ack: Envelope): void;
  /** Makes sure the owed acks are handed over once the burst goes quiet. */
  schedule(nowMs: number): Promise<void>;
}

export interface IntakeContext {
  config: InboxConfig;
  store: InboxStore;
  rates: RateLimiter;
  nowMs: number;
  resolveKey(agentId: string, keyId: string): Promise<ResolvedKey>;
  signer(): Promise<Signer>;
  /** Called after a message is stored: schedules its expiry and wakes consumers. */
  stored(seq: number, expiresAt: number): Promise<void>;
  /** Hands a receipt to a sibling inbox on this relay now (retried from the alarm on failure). */
  sendToSibling(agentId: string, receipt: Envelope): Promise<void>;
  /** Acks owed to sibling inboxes, handed over together (sibling-receipts.ts). */
  outbox: OwedAcks;
  /** Queues a receipt for POST {hub}/hub/receipt (not before `afterMs` from now), retried until `expiresAt`. */
  sendToHub(receipt: Envelope, expiresAt: number, afterMs?: number): Promise<void>;
}

export interface Answer {
  queued: true;
  id: number;
  ack?: Envelope;
  duplicate?: true;
  /** A hub body held until the hub's history says whether it is a second message or a resend (hub-bridge.ts). */
  held?: true;
}

/**
 * Where the stored bytes came from: posted directly, inside a token-authenticated hook body, or from
 * the inbox's own hub (pulled, or read from its history for a webhook body: hub-pull.ts,
 * hub-bridge.ts), which checked the timestamp window when it was sent.
 */
export type Arrival =
  /** `asSent`: the body holds exactly the envelope's fields (holdsOnlySignedFields), so it is stored as sent. */
  | { via: "direct"; body: Uint8Array; asSent?: boolean }
  | { via: "hook"; body: Uint8Array; subpath: string; contentType: string }
  | HubArrival;

export interface HubArrival {
  via: "hub";
  /** The hub's webhook body for it was stored already (hub-bridge.ts): record and acknowledge, store nothing. */
  alreadyDelivered?: boolean;
  /** The room the hub delivered it in: a room message is addressed to the room, not to the inbox. */
  room?: string | null;
  /** Unsigned, and taken on the hub's word (a dashboard user's message): no signature to check, no ack to sign. */
  vouched?: boolean;
  /** What to store instead of the envelope: the flat body a webhook-era hub would have posted (hub-flat.ts). */
  stored?: { body: Uint8Array; subpath: string };
  /**
   * Hold the signed ack back this long: a pulled record is confirmed with POST /hub/inbox/ack first,
   * and the hub's ack written over a receipt posted a moment before would leave it "delivered".
   */
  receiptAfterMs?: number;
}

/** Whether `count` more messages of `bytes` in all fit in the inbox. */
export function hasRoom(ctx: Pick<IntakeContext, "config" | "store">, count: number, bytes: number): boolean {
  const stats = ctx.store.queueStats();
  return stats.count + count <= ctx.config.limits.max_queue_messages && stats.bytes + bytes <= ctx.config.limits.max_queue_bytes;
}

export function assertCapacity(ctx: Pick<IntakeContext, "config" | "store">, size: number): void {
  if (!hasRoom(ctx, 1, size)) {
    const { count, bytes } = ctx.store.queueStats();
    const { max_queue_messages, max_queue_bytes } = ctx.config.limits;
    throw new RelayError(
      507,
      "inbox_full",
      `the inbox holds ${count} messages (${bytes} bytes), its limit is ${max_queue_messages} messages / ${max_queue_bytes} bytes; nothing was stored. The agent must connect and collect messages, or raise the limits`,
    );
  }
}

/** Identifies one exact signed envelope: its nine signed fields (`input`, if already built) and its signature. */
export function envelopeFingerprint(envelope: Envelope, input = signingInput(envelope)): Promise<string> {
  const sig = utf8(envelope.sig.value);
  const joined = new Uint8Array(input.length + 1 + sig.length);
  joined.set(input);
  joined.set(sig, input.length + 1);
  return sha256Hex(joined);
}

/**
 * Only an envelope that says it is from the hub may be unsigned, and only through the token-authenticated
 * webhook: an empty signature from anyone else is verified like any other (and fails), so it passes
 * the block-list, the timestamp window and dedup like any other.
 */
function isHubMade(envelope: Envelope): boolean {
  return envelope.from === HUB_SENDER;
}

/** An answer as its dedup record keeps it (the ack by what varies, receipts.ts). */
function keptAnswer(answer: Answer): string {
  return JSON.stringify(answer.ack ? { queued: true, id: answer.id, kept_ack: keptAck(answer.ack) } : answer);
}

/** The first answer, from the dedup record of (sender, msg_id) in the inbox `inboxId`. */
export function answerFromRecord(json: string, inboxId: string, record: { sender: string; msg_id: string }): Answer {
  // Records written before schema 3 keep the whole ack.
  const { kept_ack: kept, ...answer } = JSON.parse(json) as Answer & { kept_ack?: KeptAck };
  return kept ? { ...answer, ack: ackFromKept(kept, inboxId, record) } : answer;
}

function duplicateOf(previous: { answer: string }, inboxId: string, envelope: Envelope): Answer {
  return { ...answerFromRecord(previous.answer, inboxId, { sender: envelope.from, msg_id: envelope.msg_id }), duplicate: true };
}

export async function acceptEnvelope(ctx: IntakeContext, envelope: Envelope, arrival: Arrival): Promise<Answer> {
  const { config, store } = ctx;
  const hubMade = isHubMade(envelope);
  if (hubMade && arrival.via === "direct") {
    throw new RelayError(400, "unsigned_envelope_refused", "unsigned hub-made envelopes are accepted only through the hub webhook (POST /inbox/{id}/hooks/…)");
  }
  const fromHub = arrival.via === "hub" ? arrival : null;
  // Nothing to verify: the hub made it, or the inbox's own hub vouches for an unsigned sender.
  const unsigned = hubMade || fromHub?.vouched === true;
  const room = fromHub?.room ?? null;
  if (envelope.to !== config.agent_id && !(room && envelope.to === room)) {
    throw new RelayError(400, "wrong_recipient", `envelope is addressed to ${envelope.to}, but this is the inbox of ${config.agent_id}`);
  }
  const nowSec = Math.floor(ctx.nowMs / 1000);
  // A record pulled from the hub may have waited there for hours: the hub checked its window on send.
  const windowSec = fromHub ? envelope.ts : nowSec;
  if (hubMade && Math.abs(windowSec - envelope.ts) > TIMESTAMP_WINDOW_SEC) {
    throw new RelayError(400, "timestamp_out_of_range", `hub envelope ts ${envelope.ts} is more than ${TIMESTAMP_WINDOW_SEC}s from the relay's clock (${nowSec})`);
  }
  // Built once: the fingerprint and the signature check both need the nine-field signing input.
  const input = signingInput(envelope);
  const fingerprint = await envelopeFingerprint(envelope, input);
  // The dedup record is read only where it changes the answer, so a new message costs no look-up:
  // when a check fails (the very same signed envelope again is answered as the first time, even after
  // its timestamp left the window; anything else reusing the id must pass every check first), and when
  // the record cannot be written because one exists.

  let keySource: ResolvedKey["source"] = null;
  if (!unsigned) {
    try {
      await verifyEnvelope(envelope, {
        inbox: config.agent_id,
        room,
        nowSec: windowSec,
        input,
        resolveKey: async (agentId, keyId): Promise<KeyRecord | null> => {
          const resolved = await ctx.resolveKey(agentId, keyId);
          keySource = resolved.source;
          return resolved.record;
        },
      });
    } catch (err) {
      const previous = store.findDuplicate(envelope.from, envelope.msg_id);
      if (previous && previous.fingerprint === fingerprint && (await payloadHash(envelope.payload)) === envelope.payload_hash) return duplicateOf(previous, config.agent_id, envelope);
      throw err;
    }
  }

  let counted = false;
  let body: Uint8Array;
  try {
    if (!hubMade) {
      const refusal = policyRefusal(config.policy, envelope.from);
      if (refusal) throw refusal;
    }
    // A message whose webhook body is stored already is in: counting it now would refuse nothing.
    if (!hubMade && !fromHub?.alreadyDelivered) {
      const rate = ctx.rates.check(envelope.from, config.rate_per_minute, ctx.nowMs);
      if (!rate.allowed) {
        throw new RelayError(429, "rate_limited", `${envelope.from} sent more than ${config.rate_per_minute} messages in a minute; retry after ${rate.retryAfterSec}s`, {
          "retry-after": String(rate.retryAfterSec),
        });
      }
      counted = true;
    }
    // A posted envelope is stored as its signed fields: as sent when it held nothing else (serialising
    // 256 KiB again costs ~1.5 ms of CPU), else re-serialised (parseEnvelope dropped the rest); a hook
    // body is the hub's, stored as the hub sent it; a pulled record as the hub would have sent it.
    body =
      arrival.via === "hook" || (arrival.via === "direct" && arrival.asSent) ? arrival.body : (fromHub?.stored?.body ?? utf8(JSON.stringify(envelope)));
    if (!fromHub?.alreadyDelivered) assertCapacity(ctx, body.byteLength);
  } catch (err) {
    // A repeat is answered as the first time, and does not count against the sender's rate.
    const previous = store.findDuplicate(envelope.from, envelope.msg_id);
    if (!previous) throw err;
    if (counted) ctx.rates.uncount(envelope.from);
    return duplicateOf(previous, config.agent_id, envelope);
  }

  const ttlSec = envelope.ttl_sec > 0 ? envelope.ttl_sec : config.limits.hook_ttl_sec;
  const expiresAt = ctx.nowMs + ttlSec * 1000;
  const subpath = arrival.via === "hook" ? arrival.subpath : (fromHub?.stored?.subpath ?? null);
  const message: NewMessage = {
    kind: subpath !== null ? "hook" : "envelope",
    subpath,
    content_type: arrival.via === "hook" ? arrival.contentType : "application/json",
    body,
    received_at: ctx.nowMs,
    expires_at: expiresAt,
    sender: envelope.from,
    msg_id: envelope.msg_id,
    env_type: envelope.type,
  };
  const ack = !unsigned && envelope.type === "message" ? await signAck(config, await ctx.signer(), envelope, ctx.nowMs) : undefined;
  const stored = !fromHub?.alreadyDelivered;
  // A message to oneself needs no ack in one's own inbox.
  const route = ack && keySource === "relay" && envelope.from !== config.agent_id ? ctx.outbox.route(ctx.nowMs, stored) : null;
  const answer = await storeEnvelope(ctx, stored ? message : null, envelope, ttlSec, ack, fingerprint, route === "owed");
  if (!answer) {
    if (counted) ctx.rates.uncount(envelope.from);
    return duplicateOf(store.findDuplicate(envelope.from, envelope.msg_id)!, config.agent_id, envelope);
  }

  if (ack && arrival.via !== "direct") await ctx.sendToHub(ack, expiresAt, fromHub?.receiptAfterMs ?? 0);
  if (ack && route === "now") await ctx.sendToSibling(envelope.from, ack);
  if (route === "owed") await ctx.outbox.schedule(ctx.nowMs);
  return answer;
}

/**
 * Stores an accepted envelope with its dedup record (kept max(TTL, 24 h), so a late retry is still
 * recognised), schedules its expiry and wakes consumers. `message` null records it only (answered
 * with id 0): its flat hub body was stored instead (hub-bridge.ts). `owed`: the ack is owed to the
 * sender's inbox on this relay, which the dedup record notes (sibling-receipts.ts). Null when
 * (from, msg_id) already has a record: nothing was stored.
 */
export async function storeEnvelope(
  ctx: IntakeContext,
  message: NewMessage | null,
  envelope: Envelope,
  ttlSec: number,
  ack?: Envelope,
  fingerprint?: string,
  owed = false,
): Promise<Answer | null> {
  fingerprint ??= await envelopeFingerprint(envelope);
  const seq = message ? ctx.store.queueStats().lastSeq + 1 : 0;
  const answer: Answer = ack ? { queued: true, id: seq, ack } : { queued: true, id: seq };
  const dedupUntil = ctx.nowMs + Math.max(ttlSec, MIN_DEDUP_RETENTION_SEC) * 1000;
  const relayAck = owed && ack && seq > 0 ? seq : null;
  // The record first, with the id the message is about to get: if (from, msg_id) has one, that is all.
  if (!ctx.store.recordDelivery(envelope.from, envelope.msg_id, fingerprint, keptAnswer(answer), dedupUntil, relayAck, ctx.outbox.cursor())) return null;
  if (message) ctx.store.insertMessage(message);
  if (relayAck !== null && ack) ctx.outbox.owe(relayAck, envelope.from, ack);
  if (message) await ctx.stored(seq, message.expires_at);
  return answer;
}

/**
 * A hook body with no envelope inside: stored byte-exact with its sub-path, kept for hook_ttl_sec.
 * `sender`: a hub's flat message body names its sender (hub-bridge.ts), kept for the listing.
 */
export async function acceptOpaqueHook(ctx: IntakeContext, arrival: Extract<Arrival, { via: "hook" }>, sender: string | null = null): Promise<Answer> {
  assertCapacity(ctx, arrival.body.byteLength);
  const expiresAt = ctx.nowMs + ctx.config.limits.hook_ttl_sec * 1000;
  const seq = ctx.store.insertMessage({
    kind: "hook",
    subpath: arrival.subpath,
    content_type: arrival.contentType,
    body: arrival.body,
    received_at: ctx.nowMs,
    expires_at: expiresAt,
    sender,
    msg_id: null,
    env_type: sender ? "message" : null,
  });
  await ctx.stored(seq, expiresAt);
  return { queued: true, id: seq };
}
