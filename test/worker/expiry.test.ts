// TTL expiry from the alarm: messages go, TTL_EXPIRED receipts reach senders on this relay, dedup
// records outlive their messages, and running the alarm twice changes nothing more.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parsePublicKey, signatureBytes, signingInput, verifyPureJs } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { claimInbox, envelopeFrom, poll, postEnvelope, postHook } from "../support/workerd/agents.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("expiry", () => {
  it("removes an expired envelope and sends TTL_EXPIRED to the sender's inbox on this relay", async () => {
    const bob = await claimInbox();
    const alice = await claimInbox();
    const envelope = await envelopeFrom(alice.agent, bob.agent.id, { ttl_sec: 1 });
    expect((await postEnvelope(envelope)).status).toBe(202);
    await poll(alice.agent, "after=1&ack=true"); // alice collects the ack so only the error remains
    await sleep(1100);
    const stub = env.INBOX.getByName(bob.agent.id);
    await runDurableObjectAlarm(stub);
    expect((await poll(bob.agent)).count).toBe(0);
    const { messages } = await poll(alice.agent, "ack=false");
    const receipts = messages.map((m) => JSON.parse(m.body) as Envelope);
    const error = receipts.find((r) => r.type === "error");
    expect(error?.reply_to).toBe(envelope.msg_id);
    expect(error?.from).toBe(bob.agent.id);
    expect((error?.payload.error as { code: string }).code).toBe("TTL_EXPIRED");
    expect(verifyPureJs(parsePublicKey(bob.agent.receiptPublicKey)!, signingInput(error!), signatureBytes(error!)!)).toBe(true);

    // Idempotent: a second alarm run sends nothing new.
    await runDurableObjectAlarm(stub);
    expect((await poll(alice.agent, "ack=false")).count).toBe(messages.length);
    // The dedup record outlives the message: a late retry is answered, not stored again.
    const retry = (await (await postEnvelope(envelope)).json()) as { duplicate?: boolean };
    expect(retry.duplicate).toBe(true);
    expect((await poll(bob.agent)).count).toBe(0);
  });

  it("expires hook bodies after the inbox's hook_ttl_sec and keeps younger ones", async () => {
    const inbox = await claimInbox(undefined, { limits: { hook_ttl_sec: 1 } });
    await postHook(inbox, "a", '{"old":true}');
    await sleep(1100);
    await runInDurableObject(env.INBOX.getByName(inbox.agent.id), async (instance) => {
      // Lengthen the TTL for the next body only, directly on the config the intake reads.
      instance.config!.limits.hook_ttl_sec = 3600;
    });
    await postHook(inbox, "a", '{"young":true}');
    await runDurableObjectAlarm(env.INBOX.getByName(inbox.agent.id));
    expect((await poll(inbox.agent)).messages.map((m) => m.body)).toEqual(['{"young":true}']);
  });

  it("schedules the alarm for the earliest expiry", async () => {
    const inbox = await claimInbox();
    await postHook(inbox, "a", "{}");
    const alarm = await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (_instance, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    // The nonce of the claim expires first (ts + 600 s); the hook body after 7 days.
    expect(alarm! - Date.now()).toBeLessThanOrEqual(600_000);
  });
});
