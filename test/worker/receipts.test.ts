// Dedup by (from, msg_id) and the signed receipts an inbox answers with: to the poster, to a sender's
// inbox on this relay, and to the hub's /hub/receipt with retries from the alarm.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import {
  draftEnvelope,
  parseEnvelope,
  parsePublicKey,
  payloadHash,
  signatureBytes,
  signingInput,
  verifyPureJs,
} from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { EMPTY_PAYLOAD_HASH, timeOrderedUuid } from "../../worker/intake/receipts.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { claimInbox, envelopeFrom, hubReceipts, newAgent, poll, postEnvelope, postHook, registerAtHub } from "../support/workerd/agents.ts";
import { onDedupTables } from "../support/workerd/dedup.ts";

function expectValidAck(ack: Envelope, inbox: ClaimedInbox, original: Envelope): void {
  expect(ack.type).toBe("ack");
  expect(ack.from).toBe(inbox.agent.id);
  expect(ack.to).toBe(original.from);
  expect(ack.reply_to).toBe(original.msg_id);
  expect(ack.payload).toEqual({});
  expect(ack.payload_hash).toBe(EMPTY_PAYLOAD_HASH);
  expect(ack.sig.key_id).toBe(inbox.agent.receiptKeyId);
  expect(Math.abs(ack.ts - Date.now() / 1000)).toBeLessThan(5);
  const key = parsePublicKey(inbox.agent.receiptPublicKey)!;
  expect(verifyPureJs(key, signingInput(ack), signatureBytes(ack)!)).toBe(true);
  expect(parseEnvelope(ack)).toBeTruthy();
}

async function outboxSize(agentId: string): Promise<number> {
  return runInDurableObject(env.INBOX.getByName(agentId), (inbox) => inbox.store.dueOutbox(Number.MAX_SAFE_INTEGER).length);
}

describe("dedup", () => {
  it("answers a repeated envelope with the first answer and stores it once", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    await registerAtHub(alice);
    const envelope = await envelopeFrom(alice, inbox.agent.id);
    const first = (await (await postEnvelope(envelope)).json()) as { id: number; ack: Envelope };
    const again = await postEnvelope(envelope);
    expect(again.status).toBe(202);
    const second = (await again.json()) as { id: number; ack: Envelope; duplicate: boolean };
    expect(second.id).toBe(first.id);
    expect(second.ack).toEqual(first.ack);
    expect(second.duplicate).toBe(true);
    expect((await poll(inbox.agent)).count).toBe(1);
  });

  it("keeps the ack in the dedup record by what varies, and answers a repeat with it whole; older records kept it whole", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    await registerAtHub(alice);
    const envelope = await envelopeFrom(alice, inbox.agent.id);
    const first = (await (await postEnvelope(envelope)).json()) as { id: number; ack: Envelope };
    const stub = env.INBOX.getByName(inbox.agent.id);
    const kept = await runInDurableObject(stub, (_i, state) => String(onDedupTables(state.storage.sql, (t) => `SELECT answer FROM ${t} WHERE msg_id = ?`, envelope.msg_id)[0]!.answer));
    expect(kept.length).toBeLessThan(300);
    expect(JSON.stringify(first.ack).length).toBeGreaterThan(400);
    expect(((await (await postEnvelope(envelope)).json()) as { ack: Envelope }).ack).toEqual(first.ack);
    // A record from before schema 3 holds the answer as it was sent.
    await runInDurableObject(stub, (_i, state) => {
      onDedupTables(state.storage.sql, (t) => `UPDATE ${t} SET answer = ? WHERE msg_id = ?`, JSON.stringify({ queued: true, id: first.id, ack: first.ack }), envelope.msg_id);
    });
    const again = (await (await postEnvelope(envelope)).json()) as { id: number; ack: Envelope; duplicate: boolean };
    expect(again).toEqual({ queued: true, id: first.id, ack: first.ack, duplicate: true });
  });

  it("is per sender: another sender reusing a msg_id is not suppressed", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    const mallory = newAgent();
    await registerAtHub(alice);
    await registerAtHub(mallory);
    const msgId = crypto.randomUUID();
    expect((await postEnvelope(await envelopeFrom(mallory, inbox.agent.id, { msg_id: msgId }))).status).toBe(202);
    const res = await postEnvelope(await envelopeFrom(alice, inbox.agent.id, { msg_id: msgId }));
    expect(((await res.json()) as { duplicate?: boolean }).duplicate).toBeUndefined();
    expect((await poll(inbox.agent)).count).toBe(2);
  });

  it("a sender reusing its own msg_id with new content gets the first answer; a forgery gets an error", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    await registerAtHub(alice);
    const msgId = crypto.randomUUID();
    await postEnvelope(await envelopeFrom(alice, inbox.agent.id, { msg_id: msgId }));
    const reuse = await postEnvelope(await envelopeFrom(alice, inbox.agent.id, { msg_id: msgId, payload: { text: "other" } }));
    expect(((await reuse.json()) as { duplicate?: boolean }).duplicate).toBe(true);
    const forged = { ...(await envelopeFrom(alice, inbox.agent.id, { msg_id: msgId })), payload: { text: "x" } };
    expect((await postEnvelope(forged)).status).toBe(400);
    expect((await poll(inbox.agent)).count).toBe(1);
  });
});

describe("receipts", () => {
  it("every ack's payload_hash, written out in receipts.ts, is payloadHash({})", async () => {
    expect(EMPTY_PAYLOAD_HASH).toBe(await payloadHash({}));
  });

  it("answers a message with an ack signed by the receipt key, valid under the Agentline rules", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    await registerAtHub(alice);
    const envelope = await envelopeFrom(alice, inbox.agent.id);
    const answer = (await (await postEnvelope(envelope)).json()) as { ack: Envelope };
    expectValidAck(answer.ack, inbox, envelope);
  });

  it("gives acks time-ordered UUIDv7 ids (a batch lands in adjacent rows of the receiver's dedup table)", () => {
    const first = timeOrderedUuid(1_700_000_000_000);
    expect(first).toMatch(/^018bcfe5-6800-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(timeOrderedUuid(1_700_000_000_001) > first).toBe(true);
    expect(timeOrderedUuid(1_700_000_000_000)).not.toBe(first);
  });

  it("does not ack receipts (no ack loops)", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    await registerAtHub(alice);
    const result = await envelopeFrom(alice, inbox.agent.id, { type: "result", reply_to: "m1", payload: { text: "done" } });
    const answer = (await (await postEnvelope(result)).json()) as { ack?: Envelope };
    expect(answer.ack).toBeUndefined();
  });

  it("queues the ack into the sender's inbox when the sender lives on this relay", async () => {
    const bob = await claimInbox();
    const alice = await claimInbox();
    const envelope = await envelopeFrom(alice.agent, bob.agent.id);
    expect((await postEnvelope(envelope)).status).toBe(202);
    const { messages } = await poll(alice.agent);
    expect(messages).toHaveLength(1);
    const ack = JSON.parse(messages[0]!.body) as Envelope;
    expectValidAck(ack, bob, envelope);
    // The ack also verifies through the relay's own pipeline (bob's receipt key is known here).
    expect(await hubReceipts(bob.agent.id)).toEqual([]);
  });

  it("posts the ack of a hub-delivered envelope to {hub}/hub/receipt, retrying until accepted", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    await registerAtHub(alice);
    await fetch(`${env.TEST_HUB_URL}/__test/receipt-script/${inbox.agent.id}`, { method: "PUT", body: "[503, 500]" });
    const envelope = await envelopeFrom(alice, inbox.agent.id);
    const res = await postHook(inbox, "agentgram_inbox/agent", JSON.stringify({ message: JSON.stringify(envelope) }));
    expect(res.status).toBe(202);
    // Real alarms: the first try at once, then 1 s and 2 s later (the hub's own retry schedule).
    await vi.waitFor(async () => expect(await hubReceipts(inbox.agent.id)).toHaveLength(3), { timeout: 10_000, interval: 200 });
    await vi.waitFor(async () => expect(await outboxSize(inbox.agent.id)).toBe(0));
    const posted = await hubReceipts(inbox.agent.id);
    expect(posted).toHaveLength(3);
    for (const ack of posted) expectValidAck(ack, inbox, envelope);
  });

  it("stops retrying when the hub answers 404", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    await registerAtHub(alice);
    await fetch(`${env.TEST_HUB_URL}/__test/receipt-script/${inbox.agent.id}`, { method: "PUT", body: "[404, 503, 503]" });
    await postHook(inbox, "agentgram_inbox/agent", JSON.stringify(await envelopeFrom(alice, inbox.agent.id)));
    await runDurableObjectAlarm(env.INBOX.getByName(inbox.agent.id));
    await vi.waitFor(async () => expect(await hubReceipts(inbox.agent.id)).toHaveLength(1));
    expect(await outboxSize(inbox.agent.id)).toBe(0);
  });

  it("verifies an envelope inside a hook body, refuses a bad one, and dedups hub retries", async () => {
    const inbox = await claimInbox();
    const alice = newAgent();
    await registerAtHub(alice);
    const envelope = await envelopeFrom(alice, inbox.agent.id);
    const body = JSON.stringify({ text: JSON.stringify(envelope) });
    expect((await postHook(inbox, "agentgram_inbox/agent", body)).status).toBe(202);
    const retry = (await (await postHook(inbox, "agentgram_inbox/agent", body)).json()) as { duplicate?: boolean };
    expect(retry.duplicate).toBe(true);
    const tampered = JSON.stringify({ message: JSON.stringify({ ...envelope, msg_id: "x", payload: { text: "evil" } }) });
    const bad = await postHook(inbox, "agentgram_inbox/agent", tampered);
    expect(bad.status).toBe(400);
    const { messages } = await poll(inbox.agent);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.kind).toBe("hook");
    expect(messages[0]!.body).toBe(body);
  });

  it("accepts an unsigned hub-made envelope through the token-authenticated webhook", async () => {
    const inbox = await claimInbox();
    const draft = await draftEnvelope({ from: "hub", to: inbox.agent.id, type: "contact_request", payload: { text: "Alice wants to connect" } });
    const res = await postHook(inbox, "agentgram_inbox/wake", JSON.stringify({ ...draft, sig: { alg: "ed25519", key_id: "hub", value: "" } }));
    expect(res.status).toBe(202);
    expect(((await res.json()) as { ack?: unknown }).ack).toBeUndefined();
    expect((await poll(inbox.agent)).count).toBe(1);
  });
});
