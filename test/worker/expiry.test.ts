// TTL expiry from the alarm: messages move to the dead shelf (unless the agent holds them), TTL_EXPIRED
// receipts reach senders on this relay, dedup records outlive their messages, the shelf lets go after
// limits.dead_ttl_sec, and running the alarm twice changes nothing more.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { parsePublicKey, signatureBytes, signingInput, verifyPureJs } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { claimInbox, envelopeFrom, errorCode, poll, postEnvelope, postHook, showMessage, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { sendHook, stubOf } from "../support/workerd/socket-fixtures.ts";

const DAY_SEC = 24 * 3600;

afterEach(() => closeAllSockets());

/** Ends message `id`'s TTL now, as if it had waited its whole life. */
const expireNow = (inbox: ClaimedInbox, id: number) =>
  runInDurableObject(stubOf(inbox), (_instance, state) => {
    state.storage.sql.exec(`UPDATE messages SET expires_at = ? WHERE seq = ?`, Date.now() - 1, id);
  });

/**
 * Moves every stored message's clock back by `ms` (received, expiry, shelved): the injected clock of
 * these tests, instead of waiting out a 1 s TTL. Dedup records keep theirs.
 */
const ageMessages = (inbox: ClaimedInbox, ms: number) =>
  runInDurableObject(stubOf(inbox), (_instance, state) => {
    state.storage.sql.exec(`UPDATE messages SET received_at = received_at - ?1, expires_at = expires_at - ?1, dead_at = dead_at - ?1`, ms);
  });

const alarmAt = (inbox: ClaimedInbox) => runInDurableObject(stubOf(inbox), (_instance, state) => state.storage.getAlarm());

describe("expiry", () => {
  it("removes an expired envelope and sends TTL_EXPIRED to the sender's inbox on this relay", async () => {
    const bob = await claimInbox();
    const alice = await claimInbox();
    const envelope = await envelopeFrom(alice.agent, bob.agent.id, { ttl_sec: 1 });
    expect((await postEnvelope(envelope)).status).toBe(202);
    await poll(alice.agent, "after=1&ack=true"); // alice collects the ack so only the error remains
    await ageMessages(bob, 1100);
    const stub = env.INBOX.getByName(bob.agent.id);
    await runDurableObjectAlarm(stub);
    expect(await poll(bob.agent)).toMatchObject({ count: 0, dead: 1 });
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
    await ageMessages(inbox, 1100);
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

describe("expiry and the dead shelf", () => {
  it("moves a queued message whose TTL ended to the dead shelf with a ttl_expired reason", async () => {
    const inbox = await claimInbox(undefined, { limits: { hook_ttl_sec: 1 } });
    const message = await sendHook(inbox, '{"late":true}');
    await ageMessages(inbox, 1100);
    await runDurableObjectAlarm(stubOf(inbox));
    const shown = await showMessage(inbox.agent, message.id);
    expect(shown.message.state).toBe("dead");
    expect(shown.message.reason).toMatch(/^ttl_expired/);
    expect(shown.message.dead_at).toBeGreaterThanOrEqual(shown.message.received_at + 1000);
    expect(shown.message.expires_at).toBe(shown.message.dead_at! + 7 * DAY_SEC * 1000);
    expect(shown.body).toBe('{"late":true}');
    expect(await poll(inbox.agent)).toMatchObject({ count: 0, backlog: 0, dead: 1 });
  });

  it("leaves an expired message in flight on the socket to the agent, and shelves it once the socket closed", async () => {
    const inbox = await claimInbox();
    const message = await sendHook(inbox, "{}");
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(1);
    await expireNow(inbox, message.id);
    await runDurableObjectAlarm(stubOf(inbox));
    expect((await showMessage(inbox.agent, message.id)).message.state).toBe("sent");
    // Still due, so the alarm looks again soon instead of waiting for the next expiry.
    expect((await alarmAt(inbox))! - Date.now()).toBeLessThanOrEqual(30_000);
    client.close();
    await client.closeEvent();
    await runDurableObjectAlarm(stubOf(inbox));
    expect((await showMessage(inbox.agent, message.id)).message).toMatchObject({ state: "dead", reason: expect.stringMatching(/^ttl_expired/) });
  });

  it("deletes a dead message once it has been on the shelf for limits.dead_ttl_sec (retention 0: nothing kept after)", async () => {
    const inbox = await claimInbox(undefined, { limits: { dead_ttl_sec: 1, retention_sec: 0 } });
    const message = await sendHook(inbox, "{}");
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(1);
    client.reject(message.id, "refused");
    await client.next("rejected");
    expect((await showMessage(inbox.agent, message.id)).message.state).toBe("dead");
    await ageMessages(inbox, 1100);
    await runDurableObjectAlarm(stubOf(inbox));
    const gone = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/queue/${message.id}`);
    expect([gone.status, await errorCode(gone)]).toEqual([404, "message_not_found"]);
    expect((await poll(inbox.agent)).dead).toBe(0);
    // It was the newest message: its id is still not handed out again.
    expect((await sendHook(inbox, "{}")).id).toBe(message.id + 1);
  });

  // reject() shelves the message until now + dead_ttl_sec but never moves the alarm, so a shelf time
  // shorter than the message's remaining TTL waits for whatever alarm was already set (up to that TTL).
  it("regression: a reject schedules the alarm for the end of the message's shelf time", async () => {
    const inbox = await claimInbox(undefined, { limits: { dead_ttl_sec: 60 } });
    const message = await sendHook(inbox, "{}");
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(1);
    // Run the alarm the connection set (its auth deadline), as a long-connected agent's would have run.
    await runDurableObjectAlarm(stubOf(inbox));
    client.reject(message.id, "refused");
    await client.next("rejected");
    const shelfEnd = (await showMessage(inbox.agent, message.id)).message.expires_at;
    expect(shelfEnd - Date.now()).toBeLessThanOrEqual(60_000);
    expect(await alarmAt(inbox)).toBeLessThanOrEqual(shelfEnd);
  });

  it("a claim may set limits.dead_ttl_sec from 1 s to 30 days", async () => {
    const inbox = await claimInbox();
    const path = `/inbox/${inbox.agent.id}`;
    for (const value of [0, 30 * DAY_SEC + 1, "7", 1.5]) {
      const res = await signedFetch(inbox.agent, "PUT", path, { limits: { dead_ttl_sec: value } });
      expect([value, res.status, await errorCode(res)]).toEqual([value, 400, "invalid_claim"]);
    }
    const res = await signedFetch(inbox.agent, "PUT", path, { limits: { dead_ttl_sec: 30 * DAY_SEC } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { config: { limits: { dead_ttl_sec: number } } }).config.limits.dead_ttl_sec).toBe(30 * DAY_SEC);
  });
});
