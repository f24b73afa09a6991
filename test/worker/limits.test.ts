// Policy (block-list, allow-list), per-sender rate limit, and queue capacity: refused clearly, and
// nothing already accepted is lost.
import { describe, expect, it } from "vitest";
import { claimInbox, envelopeFrom, errorCode, poll, postEnvelope, postHook, registeredAgent } from "../support/workerd/agents.ts";


describe("policy", () => {
  it("refuses a blocked sender with 403 sender_blocked, others pass", async () => {
    const alice = await registeredAgent();
    const eve = await registeredAgent();
    const inbox = await claimInbox(undefined, { policy: { block: [eve.id] } });
    const res = await postEnvelope(await envelopeFrom(eve, inbox.agent.id));
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("sender_blocked");
    expect((await postEnvelope(await envelopeFrom(alice, inbox.agent.id))).status).toBe(202);
  });

  it("in allow-list mode accepts only listed senders, and the block-list still wins", async () => {
    const alice = await registeredAgent();
    const bob = await registeredAgent();
    const inbox = await claimInbox(undefined, { policy: { mode: "allowlist", allow: [alice.id, bob.id], block: [bob.id] } });
    expect((await postEnvelope(await envelopeFrom(alice, inbox.agent.id))).status).toBe(202);
    expect(await errorCode(await postEnvelope(await envelopeFrom(bob, inbox.agent.id)))).toBe("sender_blocked");
    const carol = await registeredAgent();
    const res = await postEnvelope(await envelopeFrom(carol, inbox.agent.id));
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("sender_not_allowed");
  });
});

describe("rate limit", () => {
  it("allows 20 messages a minute per sender by default, then 429 with Retry-After", async () => {
    const alice = await registeredAgent();
    const bob = await registeredAgent();
    const inbox = await claimInbox();
    for (let i = 0; i < 20; i++) expect((await postEnvelope(await envelopeFrom(alice, inbox.agent.id))).status).toBe(202);
    const limited = await postEnvelope(await envelopeFrom(alice, inbox.agent.id));
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await errorCode(limited)).toBe("rate_limited");
    // Another sender is not affected, and the 20 accepted ones are all kept.
    expect((await postEnvelope(await envelopeFrom(bob, inbox.agent.id))).status).toBe(202);
    expect((await poll(inbox.agent, "ack=false&limit=100")).count).toBe(21);
  });

  it("a sender's retry of an accepted envelope is answered even when rate-limited", async () => {
    const alice = await registeredAgent();
    const inbox = await claimInbox(undefined, { rate_per_minute: 1 });
    const first = await envelopeFrom(alice, inbox.agent.id);
    expect((await postEnvelope(first)).status).toBe(202);
    expect((await postEnvelope(await envelopeFrom(alice, inbox.agent.id))).status).toBe(429);
    expect((await postEnvelope(first)).status).toBe(202);
  });
});

describe("capacity", () => {
  it("refuses with 507 inbox_full past the message count, keeping the queue intact", async () => {
    const inbox = await claimInbox(undefined, { limits: { max_queue_messages: 3 } });
    for (let i = 0; i < 3; i++) expect((await postHook(inbox, "a", `{"n":${i}}`)).status).toBe(202);
    const full = await postHook(inbox, "a", '{"n":3}');
    expect(full.status).toBe(507);
    const body = (await full.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("inbox_full");
    expect(body.error.message).toContain("3 messages");
    const alice = await registeredAgent();
    expect((await postEnvelope(await envelopeFrom(alice, inbox.agent.id))).status).toBe(507);
    const { messages } = await poll(inbox.agent);
    expect(messages.map((m) => m.body)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
  });

  it("counts bytes too, and frees room when messages are acknowledged", async () => {
    const inbox = await claimInbox(undefined, { limits: { max_queue_bytes: 100 } });
    expect((await postHook(inbox, "a", "x".repeat(60))).status).toBe(202);
    expect((await postHook(inbox, "a", "x".repeat(41))).status).toBe(507);
    expect((await postHook(inbox, "a", "x".repeat(40))).status).toBe(202);
    const { next_after } = await poll(inbox.agent);
    await poll(inbox.agent, `after=${next_after}&ack=true`);
    expect((await postHook(inbox, "a", "x".repeat(100))).status).toBe(202);
  });
});
