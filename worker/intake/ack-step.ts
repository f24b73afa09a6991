// Intake's receipts: the ack the inbox signs as its agent for a verified message (receipts.ts), where it
// goes — to the sender's inbox on this relay now, owed to it with others of the same burst
// (sibling-receipts.ts), and for what came through the hub to the hub's receipt endpoint (the alarm's
// outbox) — and sending it once the message is kept. Used by the intake flows; covered by
// test/worker/receipts.test.ts and test/worker/sibling-acks.test.ts.
import type { Envelope } from "../../protocol/index.ts";
import type { IntakeContext } from "./intake-context.ts";
import { signAck } from "./receipts.ts";
import type { Checked } from "./verify-step.ts";

export interface AckPlan {
  ack: Envelope;
  /** To the sender's inbox on this relay: handed over now, or owed (null: the sender has no inbox here). */
  sibling: "now" | "owed" | null;
}

/** Where the hub wants the ack of a message that came through it, and when. */
export interface HubReceipt {
  /** Retried until then (the message's own expiry). */
  expiresAtMs: number;
  /** Not before this long from now (a pulled record's ack follows the inbox ack: hub-pull.ts). */
  afterMs: number;
}

/**
 * Signs the ack of a verified message (none for an unsigned one, or anything but a message) and picks
 * its way to a sibling inbox. `stored`: the message is stored now (only then can its ack be owed).
 */
export async function planAck(ctx: IntakeContext, checked: Checked, stored: boolean): Promise<AckPlan | null> {
  const { envelope } = checked;
  if (!checked.signed || envelope.type !== "message") return null;
  const ack = await signAck(ctx.config, await ctx.signer(), envelope, ctx.nowMs);
  // A message to oneself needs no ack in one's own inbox.
  const toSibling = checked.keySource === "relay" && envelope.from !== ctx.config.agent_id;
  return { ack, sibling: toSibling ? ctx.owedAcks.route(ctx.nowMs, stored) : null };
}

/** Sends the ack of a kept message: to the hub (when it came through it), then to the sender's inbox here. */
export async function sendAck(ctx: IntakeContext, plan: AckPlan | null, hub: HubReceipt | null): Promise<void> {
  if (!plan) return;
  if (hub) await ctx.sendToHub(plan.ack, hub.expiresAtMs, hub.afterMs);
  if (plan.sibling === "now") await ctx.sendToSibling(plan.ack.to, plan.ack);
  if (plan.sibling === "owed") await ctx.owedAcks.schedule(ctx.nowMs);
}
