// The outbox (worker/outbox/): a message the agent records before posting it gets a record in its own
// inbox; a receipt that answers it — an ack from a sibling inbox, a result or error posted by the receiver,
// one from an agent known through the hub — sets the record's state, and a filed ack is not queued for the
// agent (no frame, no gateway post, no model run) unless the inbox's setting asks for acks. A receipt that
// answers no record of its signer's is delivered as before. Regression for issue 32, item 6 ("every
// receipt is a model turn").
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { draftEnvelope } from "../../protocol/index.ts";
import type { Envelope, OutboxPage, OutboxRecord } from "../../protocol/index.ts";
import type { Inbox } from "../../worker/inbox.ts";
import { OUTBOX_KEPT } from "../../worker/outbox/outbox-store.ts";
import type { ClaimedInbox, TestAgent } from "../support/workerd/agents.ts";
import { claimInbox, envelopeFrom, errorCode, poll, postEnvelope, registeredAgent, relayFetch, signedFetch } from "../support/workerd/agents.ts";
import { inboxRecord, pullingInbox, pullNow, scriptInbox } from "../support/workerd/hub-link.ts";

/** The receipts waiting in `agent`'s inbox, as "type reply_to". */
async function receiptsIn(agent: TestAgent): Promise<string[]> {
  const { messages } = await poll(agent, "ack=false&limit=100");
  return messages.map((m) => JSON.parse(m.body) as Envelope).filter((e) => e.type !== "message").map((e) => `${e.type} ${e.reply_to}`);
}

async function outbox(agent: TestAgent, query = ""): Promise<OutboxPage> {
  const res = await signedFetch(agent, "GET", `/inbox/${agent.id}/outbox${query}`);
  expect(res.status).toBe(200);
  return (await res.json()) as OutboxPage;
}

async function recordOf(agent: TestAgent, msgId: string): Promise<OutboxRecord | undefined> {
  return (await outbox(agent, "?limit=200")).records.find((r) => r.msg_id === msgId);
}

/** What the agent does for `clawrelay send`: records the envelope in its own inbox, then posts it. */
async function recordAndPost(sender: ClaimedInbox, envelope: Envelope): Promise<Response> {
  const recorded = await signedFetch(sender.agent, "POST", `/inbox/${sender.agent.id}/outbox`, { msg_id: envelope.msg_id, to: envelope.to, type: envelope.type, reply_to: envelope.reply_to, topic: null });
  expect(recorded.status).toBe(201);
  return postEnvelope(envelope);
}

async function setAcks(agent: TestAgent, acks: string): Promise<Response> {
  return signedFetch(agent, "PUT", `/inbox/${agent.id}/outbox/settings`, { acks });
}

describe("the outbox: receipts filed against what the agent sent", () => {
  it("regression (every receipt is a model turn): an ack answering a recorded message sets its record and is not queued for the agent", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const sent = await envelopeFrom(alice.agent, bob.agent.id);
    expect((await recordAndPost(alice, sent)).status).toBe(202);
    const record = await recordOf(alice.agent, sent.msg_id);
    expect(record).toMatchObject({ to: bob.agent.id, type: "message", state: "acknowledged", receipt_type: "ack" });
    expect(record?.receipt_at).toEqual(expect.any(Number));
    expect(await receiptsIn(alice.agent)).toEqual([]);
  });

  it("with acks set to deliver, the ack is filed and queued for the agent too", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const set = await setAcks(alice.agent, "deliver");
    expect([set.status, await set.json()]).toEqual([200, { acks: "deliver" }]);
    const sent = await envelopeFrom(alice.agent, bob.agent.id);
    await recordAndPost(alice, sent);
    expect((await recordOf(alice.agent, sent.msg_id))?.state).toBe("acknowledged");
    expect(await receiptsIn(alice.agent)).toEqual([`ack ${sent.msg_id}`]);
    expect((await outbox(alice.agent, "?limit=0")).acks).toBe("deliver");
  });

  it("a result answering a recorded message sets it answered and is still delivered", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const task = await envelopeFrom(alice.agent, bob.agent.id, { payload: { text: "do it", task_id: "t1", skill_id: "s" } });
    await recordAndPost(alice, task);
    const result = await envelopeFrom(bob.agent, alice.agent.id, { type: "result", reply_to: task.msg_id, payload: { status: "completed", text: "done" } });
    expect((await postEnvelope(result)).status).toBe(202);
    expect(await recordOf(alice.agent, task.msg_id)).toMatchObject({ state: "answered", receipt_type: "result", receipt_msg_id: result.msg_id });
    expect(await receiptsIn(alice.agent)).toEqual([`result ${task.msg_id}`]);
    // The ack that came before the result is not queued; one arriving after the result changes nothing.
    expect((await recordOf(alice.agent, task.msg_id))?.state).toBe("answered");
  });

  it("an error receipt sets the record failed with its code and message", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const sent = await envelopeFrom(alice.agent, bob.agent.id);
    await recordAndPost(alice, sent);
    const error = await envelopeFrom(bob.agent, alice.agent.id, { type: "error", reply_to: sent.msg_id, payload: { error: { code: "SKILL_UNKNOWN", message: "no such skill" } } });
    await postEnvelope(error);
    expect(await recordOf(alice.agent, sent.msg_id)).toMatchObject({ state: "failed", receipt_type: "error", error_code: "SKILL_UNKNOWN", error_message: "no such skill" });
    expect(await receiptsIn(alice.agent)).toEqual([`error ${sent.msg_id}`]);
  });

  it("the relay's own TTL_EXPIRED error for a message the receiver never collected sets the record failed, and is delivered", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const sent = await envelopeFrom(alice.agent, bob.agent.id, { ttl_sec: 1 });
    await recordAndPost(alice, sent);
    const bobInbox = env.INBOX.getByName(bob.agent.id);
    // Bob's clock moved past the message's TTL (the injected clock of test/worker/expiry.test.ts).
    await runInDurableObject(bobInbox, (_i, state) => {
      state.storage.sql.exec(`UPDATE messages SET expires_at = ?`, Date.now() - 1);
    });
    await runDurableObjectAlarm(bobInbox);
    expect(await recordOf(alice.agent, sent.msg_id)).toMatchObject({ state: "failed", receipt_type: "error", error_code: "TTL_EXPIRED" });
    expect(await receiptsIn(alice.agent)).toEqual([`error ${sent.msg_id}`]);
  });

  it("a receipt from an agent known through the hub files like one from this relay", async () => {
    const alice = await claimInbox();
    const remote = await registeredAgent();
    const sent = await envelopeFrom(alice.agent, remote.id);
    const recorded = await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox`, { msg_id: sent.msg_id, to: remote.id, type: "message", reply_to: null, topic: null });
    expect(recorded.status).toBe(201);
    const ack = await envelopeFrom(remote, alice.agent.id, { type: "ack", reply_to: sent.msg_id, payload: {} });
    const answer = await postEnvelope(ack);
    expect([answer.status, ((await answer.json()) as { id: number }).id]).toEqual([202, 0]);
    expect((await recordOf(alice.agent, sent.msg_id))?.state).toBe("acknowledged");
    expect(await receiptsIn(alice.agent)).toEqual([]);
    // The same ack again is answered as the first time and changes nothing.
    expect((await postEnvelope(ack)).status).toBe(202);
    expect(await receiptsIn(alice.agent)).toEqual([]);
  });

  it("an ack pulled from the hub files like a posted one: the record acknowledged, nothing queued", async () => {
    const alice = await pullingInbox();
    const remote = await registeredAgent();
    const sent = await envelopeFrom(alice.agent, remote.id);
    const recorded = await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox`, { msg_id: sent.msg_id, to: remote.id, type: "message", reply_to: null, topic: null });
    expect(recorded.status).toBe(201);
    await scriptInbox(alice.agent.id, [inboxRecord(await envelopeFrom(remote, alice.agent.id, { type: "ack", reply_to: sent.msg_id, payload: {} }))]);
    await pullNow(alice);
    expect((await recordOf(alice.agent, sent.msg_id))?.state).toBe("acknowledged");
    expect((await poll(alice.agent)).count).toBe(0);
  });

  it("an unsigned record the hub vouches for (a dashboard user's) answers nothing, whatever `from` it names: only the receiver's signature files", async () => {
    const alice = await pullingInbox();
    const remote = await registeredAgent();
    const sent = await envelopeFrom(alice.agent, remote.id);
    const recorded = await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox`, { msg_id: sent.msg_id, to: remote.id, type: "message", reply_to: null, topic: null });
    expect(recorded.status).toBe(201);
    // The hub names a dashboard user's record "from" whoever it likes (the owner's chat is "from" the agent itself).
    const unsigned = { ...(await draftEnvelope({ from: remote.id, to: alice.agent.id, type: "result", reply_to: sent.msg_id, payload: { text: "typed on the dashboard" } })), payload_hash: "", sig: { alg: "ed25519", key_id: "dashboard", value: "" } };
    await scriptInbox(alice.agent.id, [inboxRecord(unsigned, { source_type: "dashboard_human_room", source_user_name: "Mallory" })]);
    await pullNow(alice);
    expect((await recordOf(alice.agent, sent.msg_id))?.state).toBe("sending");
    expect((await poll(alice.agent)).count).toBe(1);
  });

  it("an ack for a message that was never recorded is delivered as before (an older agent, or a message sent another way)", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const sent = await envelopeFrom(alice.agent, bob.agent.id);
    expect((await postEnvelope(sent)).status).toBe(202);
    expect(await receiptsIn(alice.agent)).toEqual([`ack ${sent.msg_id}`]);
  });

  it("a receipt signed by anyone but the message's receiver answers nothing: the record stays, the receipt is delivered", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const mallory = await claimInbox();
    const sent = await envelopeFrom(alice.agent, bob.agent.id, { ttl_sec: 600 });
    const recorded = await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox`, { msg_id: sent.msg_id, to: bob.agent.id, type: "message", reply_to: null, topic: null });
    expect(recorded.status).toBe(201);
    const forged = await envelopeFrom(mallory.agent, alice.agent.id, { type: "result", reply_to: sent.msg_id, payload: { text: "not from bob" } });
    await postEnvelope(forged);
    expect((await recordOf(alice.agent, sent.msg_id))?.state).toBe("sending");
    expect(await receiptsIn(alice.agent)).toEqual([`result ${sent.msg_id}`]);
  });

  it("a post's outcome sets a record still sending, and no later outcome undoes a receipt", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const refused = await envelopeFrom(alice.agent, bob.agent.id);
    await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox`, { msg_id: refused.msg_id, to: bob.agent.id, type: "message", reply_to: null, topic: null });
    const outcome = await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox/${refused.msg_id}/outcome`, { outcome: "refused", error: { code: "inbox_full", message: "507 the inbox is full" } });
    expect(((await outcome.json()) as { record: OutboxRecord }).record).toMatchObject({ state: "refused", error_code: "inbox_full" });
    const acked = await envelopeFrom(alice.agent, bob.agent.id);
    await recordAndPost(alice, acked);
    await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox/${acked.msg_id}/outcome`, { outcome: "queued" });
    expect((await recordOf(alice.agent, acked.msg_id))?.state).toBe("acknowledged");
    const missing = await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox/nope/outcome`, { outcome: "queued" });
    expect([missing.status, await errorCode(missing)]).toEqual([404, "outbox_record_not_found"]);
  });

  it("lists the newest records first a page at a time, and keeps at most OUTBOX_KEPT (the oldest go)", async () => {
    const alice = await claimInbox();
    const stub = env.INBOX.getByName(alice.agent.id);
    await runInDurableObject(stub, (inbox: Inbox) => {
      for (let i = 1; i <= OUTBOX_KEPT + 5; i++) inbox.outbox.record({ msg_id: `m${i}`, to: "ag_000000000000", type: "message", reply_to: null, topic: null }, Date.now());
    });
    const first = await outbox(alice.agent, "?limit=3");
    expect([first.records.map((r) => r.msg_id), first.has_more, first.total]).toEqual([[`m${OUTBOX_KEPT + 5}`, `m${OUTBOX_KEPT + 4}`, `m${OUTBOX_KEPT + 3}`], true, OUTBOX_KEPT]);
    const second = await outbox(alice.agent, `?limit=3&before=${first.next_before}`);
    expect(second.records.map((r) => r.msg_id)).toEqual([`m${OUTBOX_KEPT + 2}`, `m${OUTBOX_KEPT + 1}`, `m${OUTBOX_KEPT}`]);
    const all: string[] = [];
    for (let before = 0; ; ) {
      const page = await outbox(alice.agent, `?limit=200&before=${before}`);
      all.push(...page.records.map((r) => r.msg_id));
      if (!page.has_more) break;
      before = page.next_before!;
    }
    expect([all.length, all.at(-1)]).toEqual([OUTBOX_KEPT, "m6"]);
  });

  it("an inbox stored at schema 8 gets the outbox when it next wakes, and files into it", async () => {
    const alice = await claimInbox();
    const bob = await claimInbox();
    const stub = env.INBOX.getByName(alice.agent.id);
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec(`DROP TABLE outbox_records`);
      state.storage.sql.exec(`UPDATE meta SET value = '8' WHERE key = 'schema_version'`);
    });
    await evictDurableObject(stub);
    const sent = await envelopeFrom(alice.agent, bob.agent.id);
    await recordAndPost(alice, sent);
    expect((await recordOf(alice.agent, sent.msg_id))?.state).toBe("acknowledged");
  });

  it("refuses unsigned calls, unknown fields and settings it does not know, each saying what to send", async () => {
    const alice = await claimInbox();
    const unsigned = await relayFetch(`/inbox/${alice.agent.id}/outbox`);
    expect(unsigned.status).toBe(401);
    const unknown = await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox`, { msg_id: "m", to: "ag_000000000000", type: "message", reply_to: null, topic: null, body: "x" });
    expect([unknown.status, await errorCode(unknown)]).toEqual([400, "invalid_outbox_request"]);
    const badType = await signedFetch(alice.agent, "POST", `/inbox/${alice.agent.id}/outbox`, { msg_id: "m", to: "ag_000000000000", type: "note", reply_to: null, topic: null });
    expect(badType.status).toBe(400);
    const badSetting = await setAcks(alice.agent, "sometimes");
    expect([badSetting.status, await errorCode(badSetting)]).toEqual([400, "invalid_outbox_request"]);
    expect((await outbox(alice.agent)).acks).toBe("record");
  });
});
