// Sending receipts to sibling inboxes on this relay, as one part of the inbox (inbox.ts): one call
// per sibling at a time (SiblingCourier), the acks owed within a burst (OwedSiblingAcks), and what a
// sibling could not take now put in the outbox for the alarm to retry until its TTL. The receiving
// side is storeSiblingReceipts (sibling-receipts.ts). Covered by test/worker/receipts.test.ts and
// test/worker/sibling-acks.test.ts.
import type { Envelope } from "../../protocol/index.ts";
import type { InboxRpc } from "../env.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import { OwedSiblingAcks, SiblingCourier, siblingReceipt } from "./sibling-receipts.ts";
import type { SiblingReceipt, SiblingResult } from "./sibling-receipts.ts";

export interface SiblingSenderParts {
  store: InboxStore;
  /** The inbox's agent id (null before a claim). */
  agentId: () => string | null;
  sibling: (agentId: string) => DurableObjectStub<InboxRpc>;
  /** This inbox's own receiving side, for a receipt to itself. */
  acceptHere: (receipts: SiblingReceipt[]) => Promise<SiblingResult[]>;
  ensureAlarm: (atMs: number) => Promise<void>;
}

/** The first retry of a receipt a sibling could not take: the alarm's outbox backs off from there. */
const FIRST_RETRY_MS = 1000;

export class SiblingSender {
  private readonly parts: SiblingSenderParts;
  private readonly courier: SiblingCourier;
  /** Acks owed to siblings within a burst, handed over together (intake's OwedAcks). */
  readonly owed: OwedSiblingAcks;

  constructor(parts: SiblingSenderParts) {
    this.parts = parts;
    this.courier = new SiblingCourier((agentId, batch) => parts.sibling(agentId).acceptSiblingReceipts(batch));
    this.owed = new OwedSiblingAcks({
      store: parts.store,
      agentId: parts.agentId,
      courier: this.courier,
      retryLater: (target, receipt) => this.retryLater(target, receipt),
      ensureAlarm: parts.ensureAlarm,
    });
  }

  /** Stores `receipt` in agentId's inbox on this relay now; a full or failing one is retried from the alarm. */
  async send(agentId: string, receipt: Envelope): Promise<void> {
    const item = await siblingReceipt(receipt);
    let result: SiblingResult | "error" = "error";
    if (agentId !== this.parts.agentId()) result = (await this.courier.send(agentId, [item]))[0] ?? "error";
    else {
      try {
        result = (await this.parts.acceptHere([item]))[0]!;
      } catch (err) {
        console.error(`SiblingSender.send: ${agentId}:`, err);
      }
    }
    if (result === "full" || result === "error") await this.retryLater(agentId, item);
  }

  /** A receipt its sibling could not take now: the outbox table, retried from the alarm until its TTL. */
  private async retryLater(agentId: string, receipt: SiblingReceipt): Promise<void> {
    const now = Date.now();
    this.parts.store.enqueueOutbox({ kind: "relay", agentId }, receipt.json, now + FIRST_RETRY_MS, now + receipt.ttl_sec * 1000);
    await this.parts.ensureAlarm(now + FIRST_RETRY_MS);
  }
}
