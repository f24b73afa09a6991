// Accepting a message into an inbox: verification, dedup, policy, rate and capacity, storage, receipts.
// The order of checks is the product's contract (README, "POST /inbox/{id}/envelopes").
import { sha256 } from "@noble/hashes/sha2.js";
import {
  HUB_SENDER,
  MIN_DEDUP_RETENTION_SEC,
  RelayError,
  TIMESTAMP_WINDOW_SEC,
  payloadHash,
  signingInput,
  toHex,
  utf8,
  verifyEnvelope,
} from "../protocol/index.ts";
import type { Envelope, KeyRecord } from "../protocol/index.ts";
import { policyRefusal } from "./inbox-config.ts";
import type { InboxConfig } from "./inbox-config.ts";
import type { InboxStore, NewMessage } from "./inbox-store.ts";
import type { ResolvedKey } from "./key-resolver.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { signAck } from "./receipts.ts";
import type { Signer } from "./receipts.ts";

export interface IntakeContext {
  config: InboxConfig;
  store: InboxStore;
  rates: RateLimiter;
  nowMs: number;
  resolveKey(agentId: string, keyId: string): Promise<ResolvedKey>;
  signer(): Promise<Signer>;
  /** Called after a message is stored: schedules its expiry and wakes consumers. */
  stored(seq: number, expiresAt: number): Promise<void>;
  /** Queues a receipt to a sibling inbox on this relay (retried from the alarm on failure). */
  sendToSibling(agentId: string, receipt: Envelope): Promise<void>;
  /** Queues a receipt for POST {hub}/hub/receipt, retried until `expiresAt`. */
  sendToHub(receipt: Envelope, expiresAt: number): Promise<void>;
}

export interface Answer {
  queued: true;
  id: number;
  ack?: Envelope;
  duplicate?: true;
}

/**
 * Where the stored bytes came from: posted directly, inside a token-authenticated hook body, or pulled
 * from the inbox's own hub (hub-sync.ts), which checked the timestamp window when it was sent.
 */
export type Arrival =
  | { via: "direct"; body: Uint8Array }
  | { via: "hook"; body: Uint8Array; subpath: string; contentType: string; fromHubHistory?: boolean }
  /** alreadyDelivered: the hub's flat body for it was delivered; record and acknowledge, store nothing. */
  | { via: "hub"; alreadyDelivered?: boolean };

export function assertCapacity(ctx: Pick<IntakeContext, "config" | "store">, size: number): void {
  const { count, bytes } = ctx.store.queueStats();
  const { max_queue_messages, max_queue_bytes } = ctx.config.limits;
  if (count + 1 > max_queue_messages || bytes + size > max_queue_bytes) {
    throw new RelayError(
      507,
      "inbox_full",
      `the inbox holds ${count} messages (${bytes} bytes), its limit is ${max_queue_messages} messages / ${max_queue_bytes} bytes; nothing was stored. The agent must connect and collect messages, or raise the limits`,
    );
  }
}

/** Identifies one exact signed envelope: its nine signed fields and its signature. */
export function envelopeFingerprint(envelope: Envelope): string {
  const input = signingInput(envelope);
  const sig = utf8(envelope.sig.value);
  const joined = new Uint8Array(input.length + 1 + sig.length);
  joined.set(input);
  joined.set(sig, input.length + 1);
  return toHex(sha256(joined));
}

/**
 * Only an envelope that says it is from the hub may be unsigned, and only through the token-authenticated
 * webhook: an empty signature from anyone else is verified like any other (and fails), so it passes
 * the block-list, the timestamp window and dedup like any other.
 */
function isHubMade(envelope: Envelope): boolean {
  return envelope.from === HUB_SENDER;
}

export async function acceptEnvelope(ctx: IntakeContext, envelope: Envelope, arrival: Arrival): Promise<Answer> {
  const { config, store } = ctx;
  const hubMade = isHubMade(envelope);
  if (hubMade && arrival.via === "direct") {
    throw new RelayError(400, "unsigned_envelope_refused", "unsigned hub-made envelopes are accepted only through the hub webhook (POST /inbox/{id}/hooks/…)");
  }
  if (envelope.to !== config.agent_id) {
    throw new RelayError(400, "wrong_recipient", `envelope is addressed to ${envelope.to}, but this is the inbox of ${config.agent_id}`);
  }
  const nowSec = Math.floor(ctx.nowMs / 1000);
  // A record pulled from the hub may have waited there for hours: the hub checked its window on send.
  const windowSec = arrival.via === "hub" || (arrival.via === "hook" && arrival.fromHubHistory) ? envelope.ts : nowSec;
  if (hubMade && Math.abs(windowSec - envelope.ts) > TIMESTAMP_WINDOW_SEC) {
    throw new RelayError(400, "timestamp_out_of_range", `hub envelope ts ${envelope.ts} is more than ${TIMESTAMP_WINDOW_SEC}s from the relay's clock (${nowSec})`);
  }
  const previous = store.findDuplicate(envelope.from, envelope.msg_id);
  const fingerprint = envelopeFingerprint(envelope);
  // The very same signed envelope again (a sender's retry): answer as the first time, even after
  // its timestamp left the window. Anything else reusing the id must pass every check first.
  if (previous && previous.fingerprint === fingerprint && payloadHash(envelope.payload) === envelope.payload_hash) return { ...(JSON.parse(previous.answer) as Answer), duplicate: true };

  let keySource: ResolvedKey["source"] = null;
  if (!hubMade) {
    await verifyEnvelope(envelope, {
      inbox: config.agent_id,
      nowSec: windowSec,
      resolveKey: async (agentId, keyId): Promise<KeyRecord | null> => {
        const resolved = await ctx.resolveKey(agentId, keyId);
        keySource = resolved.source;
        return resolved.record;
      },
    });
  }
  if (previous) return { ...(JSON.parse(previous.answer) as Answer), duplicate: true };

  if (!hubMade) {
    const refusal = policyRefusal(config.policy, envelope.from);
    if (refusal) throw refusal;
    const rate = ctx.rates.check(envelope.from, config.rate_per_minute, ctx.nowMs);
    if (!rate.allowed) {
      throw new RelayError(429, "rate_limited", `${envelope.from} sent more than ${config.rate_per_minute} messages in a minute; retry after ${rate.retryAfterSec}s`, {
        "retry-after": String(rate.retryAfterSec),
      });
    }
  }
  // A posted envelope is stored as its signed fields re-serialised (parseEnvelope dropped the rest);
  // a hook body is the hub's, stored as the hub sent it.
  const body = arrival.via === "hook" ? arrival.body : utf8(JSON.stringify(envelope));
  assertCapacity(ctx, body.byteLength);

  const ttlSec = envelope.ttl_sec > 0 ? envelope.ttl_sec : config.limits.hook_ttl_sec;
  const expiresAt = ctx.nowMs + ttlSec * 1000;
  const message: NewMessage = {
    kind: arrival.via === "hook" ? "hook" : "envelope",
    subpath: arrival.via === "hook" ? arrival.subpath : null,
    content_type: arrival.via === "hook" ? arrival.contentType : "application/json",
    body,
    received_at: ctx.nowMs,
    expires_at: expiresAt,
    sender: envelope.from,
    msg_id: envelope.msg_id,
    env_type: envelope.type,
  };
  const ack = !hubMade && envelope.type === "message" ? await signAck(config, await ctx.signer(), envelope, nowSec) : undefined;
  const answer = await storeEnvelope(ctx, arrival.via === "hub" && arrival.alreadyDelivered ? null : message, envelope, ttlSec, ack, fingerprint);

  if (ack && arrival.via !== "direct") await ctx.sendToHub(ack, expiresAt);
  // A message to oneself needs no ack in one's own inbox.
  if (ack && keySource === "relay" && envelope.from !== config.agent_id) await ctx.sendToSibling(envelope.from, ack);
  return answer;
}

/**
 * Stores an accepted envelope with its dedup record (kept max(TTL, 24 h), so a late retry is still
 * recognised), schedules its expiry and wakes consumers. Used for posted envelopes and for receipts
 * that sibling inboxes hand over. `message` null records it only (answered with id 0): its flat hub
 * body was delivered instead (hub-sync.ts).
 */
export async function storeEnvelope(
  ctx: IntakeContext,
  message: NewMessage | null,
  envelope: Envelope,
  ttlSec: number,
  ack?: Envelope,
  fingerprint = envelopeFingerprint(envelope),
): Promise<Answer> {
  const seq = message ? ctx.store.insertMessage(message) : 0;
  const answer: Answer = ack ? { queued: true, id: seq, ack } : { queued: true, id: seq };
  const dedupUntil = ctx.nowMs + Math.max(ttlSec, MIN_DEDUP_RETENTION_SEC) * 1000;
  ctx.store.recordDelivery(envelope.from, envelope.msg_id, fingerprint, JSON.stringify(answer), dedupUntil);
  if (message) await ctx.stored(seq, message.expires_at);
  return answer;
}

/** A hook body with no envelope inside: stored byte-exact with its sub-path, kept for hook_ttl_sec. */
export async function acceptOpaqueHook(ctx: IntakeContext, arrival: Extract<Arrival, { via: "hook" }>): Promise<Answer> {
  assertCapacity(ctx, arrival.body.byteLength);
  const expiresAt = ctx.nowMs + ctx.config.limits.hook_ttl_sec * 1000;
  const seq = ctx.store.insertMessage({
    kind: "hook",
    subpath: arrival.subpath,
    content_type: arrival.contentType,
    body: arrival.body,
    received_at: ctx.nowMs,
    expires_at: expiresAt,
    sender: null,
    msg_id: null,
    env_type: null,
  });
  await ctx.stored(seq, expiresAt);
  return { queued: true, id: seq };
}
