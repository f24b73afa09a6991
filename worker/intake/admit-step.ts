// Intake's second step: may the inbox take it now? Checks 8–10 of docs/protocol.md "The checks, in
// order": the inbox's block- and allow-list, the sender's rate, the queue's capacity. A message the
// inbox has already is answered as the first time instead of refused, and then does not count against
// its sender's rate. Used by the intake flows; the capacity check also by sources/source-intake.ts and
// sibling-receipts.ts. Covered by test/worker/limits.test.ts and test/worker/envelopes.test.ts.
import { RelayError } from "../../protocol/index.ts";
import { policyRefusal } from "../inbox-config.ts";
import type { IntakeContext, Repeat } from "./intake-context.ts";
import { repeatOf } from "./answers.ts";
import type { Checked } from "./verify-step.ts";

/** Which checks apply: the caller knows where the message came from. */
export interface AdmitRules {
  /** The block- and allow-list (not for what the hub itself made). */
  policy: boolean;
  /** The sender's rate (not for the hub's own, nor for a message already delivered by its webhook). */
  rate: boolean;
  /** The bytes it will occupy; null when nothing is stored (its webhook body is in already). */
  bytes: number | null;
}

export interface Admitted {
  /** Counted against the sender's rate: uncounted again if it turns out to be a repeat. */
  counted: boolean;
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

export function admitStep(ctx: IntakeContext, checked: Checked, rules: AdmitRules): Admitted | Repeat {
  const { config } = ctx;
  const sender = checked.envelope.from;
  let counted = false;
  try {
    if (rules.policy) {
      const refusal = policyRefusal(config.policy, sender);
      if (refusal) throw refusal;
    }
    if (rules.rate) {
      const rate = ctx.rates.check(sender, config.rate_per_minute, ctx.nowMs);
      if (!rate.allowed) {
        throw new RelayError(429, "rate_limited", `${sender} sent more than ${config.rate_per_minute} messages in a minute; retry after ${rate.retryAfterSec}s`, {
          "retry-after": String(rate.retryAfterSec),
        });
      }
      counted = true;
    }
    if (rules.bytes !== null) assertCapacity(ctx, rules.bytes);
    return { counted };
  } catch (err) {
    // A repeat is answered as the first time, and does not count against the sender's rate.
    const previous = ctx.store.findDuplicate(sender, checked.envelope.msg_id);
    if (!previous) throw err;
    if (counted) ctx.rates.uncount(sender);
    return repeatOf(previous, config.agent_id, checked.envelope);
  }
}
