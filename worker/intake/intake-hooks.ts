// What intake calls back in the inbox, made once per object (inbox.ts): a context per request adds only the
// config and the time (intake-context.ts). Moved out of inbox.ts whole; covered through intake by
// test/worker/envelopes.test.ts and test/worker/receipts.test.ts.
import type { Envelope } from "../../protocol/index.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { IntakeContext, OwedAcks } from "./intake-context.ts";
import type { KeyResolver } from "./key-resolver.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import type { Signer } from "./receipts.ts";

export type IntakeHooks = Omit<IntakeContext, "config" | "nowMs">;

/** The inbox's parts intake reaches through its hooks. */
export interface IntakeParts {
  store: InboxStore;
  rates: RateLimiter;
  keys: KeyResolver;
  signer(): Promise<Signer>;
  ensureAlarm(atMs: number): Promise<void>;
  wakeConsumers(): void;
  sendToSibling(agentId: string, receipt: Envelope): Promise<void>;
  owedAcks: OwedAcks;
  outbox: IntakeContext["outbox"];
  hubUrl(): string;
}

export function intakeHooks(parts: IntakeParts): IntakeHooks {
  return {
    store: parts.store,
    rates: parts.rates,
    resolveKey: (agentId, keyId) => parts.keys.resolve(agentId, keyId, Date.now()),
    signer: () => parts.signer(),
    stored: async (_seq, expiresAtMs) => {
      await parts.ensureAlarm(expiresAtMs);
      parts.wakeConsumers();
    },
    sendToSibling: (agentId, receipt) => parts.sendToSibling(agentId, receipt),
    owedAcks: parts.owedAcks,
    outbox: parts.outbox,
    sendToHub: async (receipt, expiresAtMs, afterMs) => {
      const at = Date.now() + afterMs;
      parts.store.enqueueOutbox({ kind: "hub", hubUrl: parts.hubUrl() }, JSON.stringify(receipt), at, expiresAtMs);
      await parts.ensureAlarm(at);
    },
  };
}
