// Accepting a message into an inbox, as the steps verify → admit → keep (record, store) → receipts,
// composed here for what arrives over HTTP: an envelope posted to /envelopes, an envelope inside a
// webhook body, and a webhook body with no envelope. The hub's records compose the same steps in
// hub/hub-pull.ts (pulled) and hub/webhook-era/hub-bridge.ts (bridged); sources in
// sources/source-intake.ts. The order of checks is the product's contract (docs/protocol.md, "The
// checks, in order"). Covered by test/worker/envelopes.test.ts, test/worker/hooks.test.ts and
// test/worker/limits.test.ts.
import { RelayError, utf8 } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { envelopeLane } from "../storage/message-lane.ts";
import type { NewMessage } from "../storage/stored-message.ts";
import { planAck, sendAck } from "./ack-step.ts";
import { admitStep, assertCapacity } from "./admit-step.ts";
import { isRepeat } from "./intake-context.ts";
import type { Answer, IntakeContext } from "./intake-context.ts";
import { keepStep, storeStep } from "./keep-step.ts";
import { isHubMade, verifyStep } from "./verify-step.ts";

/** A webhook body as it came: stored byte-exact under its sub-path. */
export interface HookArrival {
  body: Uint8Array;
  subpath: string;
  contentType: string;
}

/** How long an accepted envelope is kept: its ttl_sec, or the inbox's hook TTL when it names none. */
export function lifetimeOf(ctx: Pick<IntakeContext, "config" | "nowMs">, envelope: Envelope): { ttlSec: number; expiresAtMs: number } {
  const ttlSec = envelope.ttl_sec > 0 ? envelope.ttl_sec : ctx.config.limits.hook_ttl_sec;
  return { ttlSec, expiresAtMs: ctx.nowMs + ttlSec * 1000 };
}

/**
 * The queue row of an accepted envelope: `body` as stored, a hook body under its sub-path or the envelope
 * itself. The envelope stored as itself has its lane from the envelope at hand (the same fields the agent
 * reads from the body), rather than from parsing its body again.
 */
export function envelopeRow(nowMs: number, envelope: Envelope, body: Uint8Array, hook: { subpath: string; contentType: string } | null, expiresAtMs: number): NewMessage {
  return {
    ...(hook ? {} : { lane: envelopeLane(envelope) }),
    kind: hook ? "hook" : "envelope",
    subpath: hook?.subpath ?? null,
    content_type: hook?.contentType ?? "application/json",
    body,
    received_at: nowMs,
    expires_at: expiresAtMs,
    sender: envelope.from,
    msg_id: envelope.msg_id,
    env_type: envelope.type,
  };
}

/**
 * POST /inbox/{id}/envelopes. Stored as its signed fields: `asSent` when the body held nothing else
 * (serialising 256 KiB again costs ~1.5 ms of CPU), else re-serialised (parseEnvelope dropped the
 * rest). The ack is in the answer, and goes to the sender's inbox when it has one here. `payloadHash`:
 * the payload's, when it came in JCS form and was hashed from its bytes (request-body.ts).
 */
export async function acceptPostedEnvelope(ctx: IntakeContext, envelope: Envelope, asSent: Uint8Array | null, payloadHash: string | null = null): Promise<Answer> {
  if (isHubMade(envelope)) {
    throw new RelayError(400, "unsigned_envelope_refused", "unsigned hub-made envelopes are accepted only through the hub webhook (POST /inbox/{id}/hooks/…)");
  }
  const checked = await verifyStep(ctx, envelope, { room: null, clock: "relay", vouched: false, payloadHash });
  if (isRepeat(checked)) return checked.repeat;
  const body = asSent ?? utf8(JSON.stringify(envelope));
  const admitted = admitStep(ctx, checked, { policy: true, rate: true, bytes: body.byteLength });
  if (isRepeat(admitted)) return admitted.repeat;
  const { ttlSec, expiresAtMs } = lifetimeOf(ctx, envelope);
  const plan = await planAck(ctx, checked, true);
  const kept = await keepStep(ctx, checked, admitted, envelopeRow(ctx.nowMs, envelope, body, null, expiresAtMs), ttlSec, plan);
  if (isRepeat(kept)) return kept.repeat;
  await sendAck(ctx, plan, null);
  return kept;
}

/**
 * A webhook body carrying an envelope (a 1.x hub's: webhook-era/hook-body.ts): verified like a posted
 * one, unless the hub made it (`from: "hub"`, unsigned: exempt from the sender's policy and rate);
 * stored as the hub sent it; its ack goes to the hub too.
 */
export async function acceptHookEnvelope(ctx: IntakeContext, envelope: Envelope, hook: HookArrival): Promise<Answer> {
  const checked = await verifyStep(ctx, envelope, { room: null, clock: "relay", vouched: false });
  if (isRepeat(checked)) return checked.repeat;
  const admitted = admitStep(ctx, checked, { policy: !checked.hubMade, rate: !checked.hubMade, bytes: hook.body.byteLength });
  if (isRepeat(admitted)) return admitted.repeat;
  const { ttlSec, expiresAtMs } = lifetimeOf(ctx, envelope);
  const plan = await planAck(ctx, checked, true);
  const kept = await keepStep(ctx, checked, admitted, envelopeRow(ctx.nowMs, envelope, hook.body, hook, expiresAtMs), ttlSec, plan);
  if (isRepeat(kept)) return kept.repeat;
  await sendAck(ctx, plan, { expiresAtMs, afterMs: 0 });
  return kept;
}

/**
 * A hook body with no envelope inside: stored byte-exact with its sub-path, kept for hook_ttl_sec.
 * `sender`: a hub's flat message body names its sender (webhook-era/hub-bridge.ts), kept for the listing.
 */
export async function acceptOpaqueHook(ctx: IntakeContext, hook: HookArrival, sender: string | null = null): Promise<Answer> {
  assertCapacity(ctx, hook.body.byteLength);
  const expiresAtMs = ctx.nowMs + ctx.config.limits.hook_ttl_sec * 1000;
  const seq = storeStep(ctx.store, {
    kind: "hook",
    subpath: hook.subpath,
    content_type: hook.contentType,
    body: hook.body,
    received_at: ctx.nowMs,
    expires_at: expiresAtMs,
    sender,
    msg_id: null,
    env_type: sender ? "message" : null,
  });
  await ctx.stored(seq, expiresAtMs);
  return { queued: true, id: seq };
}
