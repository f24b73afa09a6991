// A webhook-era hub's flat bodies, bridged after the fact: the body is stored at once (the real hub
// posts before it commits its record), then the alarm finds the signed original in /hub/history by
// sender, text and the room its session key names — in any namespace — verifies it, names the stored
// message by its msg_id and acknowledges it at the hub. Bodies are shaped as the real hub's
// (test/fixtures/hub/webhook-era/agent-webhook-dm.json, agent-webhook-room.json).
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { draftEnvelope, hubSessionKey } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { claimInbox, errorCode, hubReceipts, newAgent, postHook, registeredAgent } from "../support/workerd/agents.ts";
import type { ClaimedInbox, TestAgent } from "../support/workerd/agents.ts";
import { registerReceiptKey, scriptHistory, signedBy } from "../support/workerd/hub-link.ts";

async function webhookInbox(extra: Record<string, unknown> = {}): Promise<ClaimedInbox> {
  const agent = newAgent();
  await registerReceiptKey(agent);
  return claimInbox(agent, { hub: { mode: "webhook", prefix: null }, ...extra });
}

const stub = (inbox: ClaimedInbox) => env.INBOX.getByName(inbox.agent.id);

/** Runs the bridge now, as its alarm would. */
async function bridge(inbox: ClaimedInbox): Promise<void> {
  await runInDurableObject(stub(inbox), (o) => {
    const state = o.store.loadHubState();
    o.store.saveHubState({ ...state, bridge_due_at: Date.now() });
  });
  await runDurableObjectAlarm(stub(inbox));
}

/** The hub's flat body for `envelope`, byte for byte as it writes it (compact, fixed key order). */
function flatBody(sender: TestAgent, name: string, text: string, sessionKey: string, header = ""): string {
  return JSON.stringify({ message: `${header}${name} (${sender.id}) says: ${text}`, name: `${name} (${sender.id})`, channel: "last", sessionKey });
}

function historyRecord(envelope: Envelope, room: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { hub_msg_id: `h_${crypto.randomUUID().replace(/-/g, "")}`, envelope: { topic: null, goal: null, mentions: null, ...envelope }, room_id: room, topic: null, topic_id: null, goal: null, state: "delivered", created_at: new Date().toISOString(), mentioned: true, ...fields };
}

async function stored(inbox: ClaimedInbox, id: number) {
  return runInDurableObject(stub(inbox), (o) => {
    const m = o.store.find(id);
    return m && { sender: m.sender, msg_id: m.msg_id, claims: o.store.loadHubState().claims.length };
  });
}

describe("bridging the webhook era's flat bodies", () => {
  it("stores the body at once, finds its signed original once the hub lists it, names it by msg_id and acknowledges it", async () => {
    const inbox = await webhookInbox();
    const alice = await registeredAgent();
    const room = `rm_dm_${[alice.id, inbox.agent.id].sort().join("_")}`;
    const envelope = await signedBy(alice, await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text: "hello bob" } }));
    const res = await postHook(inbox, "botcord_inbox/agent", flatBody(alice, "Alice", "hello bob", await hubSessionKey(room, null)));
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: number };
    expect(await stored(inbox, id)).toEqual({ sender: alice.id, msg_id: null, claims: 1 });

    // First look: the hub has not committed the record yet (it posts before it commits).
    await bridge(inbox);
    expect(await stored(inbox, id)).toEqual({ sender: alice.id, msg_id: null, claims: 1 });

    await scriptHistory(inbox.agent.id, [historyRecord(envelope, room)]);
    await bridge(inbox);
    expect(await stored(inbox, id)).toEqual({ sender: alice.id, msg_id: envelope.msg_id, claims: 0 });
    await runDurableObjectAlarm(stub(inbox)); // the ack leaves from the outbox
    const receipts = await hubReceipts(inbox.agent.id);
    expect(receipts.map((r) => [r.type, r.to, r.reply_to])).toContainEqual(["ack", alice.id, envelope.msg_id]);
  });

  it("bridges a room message with a topic, and an Agentline-namespace key naming the room", async () => {
    const inbox = await webhookInbox();
    const alice = await registeredAgent();
    const room = "rm_a87d2c264b86";
    const withTopic = await signedBy(alice, { ...(await draftEnvelope({ from: alice.id, to: room, type: "message", payload: { text: "room hello" } })) });
    const plain = await signedBy(alice, { ...(await draftEnvelope({ from: alice.id, to: room, type: "message", payload: { text: "room hello" } })) });
    const header = `[群聊「Project Alpha」(${room}) | 3人: Alice, Carol, Bob | 权限: member, 可发言]\n`;
    const a = (await (await postHook(inbox, "botcord_inbox/agent", flatBody(alice, "Alice", "room hello", await hubSessionKey(room, "design"), `${header}【Topic: design】\n`))).json()) as { id: number };
    const b = (await (await postHook(inbox, "agentgram_inbox/agent", flatBody(alice, "Alice", "room hello", `agentline:${room}`, header))).json()) as { id: number };
    // Same sender, same text: only the session key tells the two apart.
    await scriptHistory(inbox.agent.id, [historyRecord(plain, room), historyRecord(withTopic, room, { topic: "design" })]);
    await bridge(inbox);
    expect((await stored(inbox, a.id))?.msg_id).toBe(withTopic.msg_id);
    expect((await stored(inbox, b.id))?.msg_id).toBe(plain.msg_id);
  });

  it("acknowledges a delivered record whose body never came here once the record is past its 30 s grace, and waits on one still inside it", async () => {
    const inbox = await webhookInbox();
    const alice = await registeredAgent();
    const room = `rm_dm_${[alice.id, inbox.agent.id].sort().join("_")}`;
    const sent = async (text: string) => signedBy(alice, await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text } }));
    const [old, young] = [await sent("pushed elsewhere"), await sent("pushed elsewhere too")];
    // A body that matches neither record (the hub pushed theirs to another endpoint) wakes the bridge.
    const res = await postHook(inbox, "agentgram_inbox/agent", flatBody(alice, "Alice", "something else", "agentline:elsewhere"));
    expect(res.status).toBe(202);
    await res.json();
    const createdAgo = (ms: number) => new Date(Date.now() - ms).toISOString();
    await scriptHistory(inbox.agent.id, [historyRecord(old, room, { created_at: createdAgo(31_000) }), historyRecord(young, room, { created_at: createdAgo(1000) })]);
    await bridge(inbox);
    await runDurableObjectAlarm(stub(inbox)); // the ack leaves from the outbox
    const acked = (await hubReceipts(inbox.agent.id)).map((r) => r.reply_to);
    expect(acked).toContain(old.msg_id);
    expect(acked).not.toContain(young.msg_id);
    const state = await runInDurableObject(stub(inbox), (o) => o.store.loadHubState());
    expect({ claims: state.claims.length, cursorWaits: state.history_cursor !== null && state.bridge_due_at !== null }).toEqual({ claims: 1, cursorWaits: true });
  });

  it("does not name a body by a record of another room, and refuses a sender the inbox blocks before storing", async () => {
    const alice = await registeredAgent();
    const inbox = await webhookInbox();
    const envelope = await signedBy(alice, await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text: "where?" } }));
    const res = await postHook(inbox, "botcord_inbox/agent", flatBody(alice, "Alice", "where?", await hubSessionKey("rm_elsewhere", null)));
    const { id } = (await res.json()) as { id: number };
    await scriptHistory(inbox.agent.id, [historyRecord(envelope, `rm_dm_${[alice.id, inbox.agent.id].sort().join("_")}`)]);
    await bridge(inbox);
    expect(await stored(inbox, id)).toMatchObject({ msg_id: null, claims: 1 });

    const strict = await webhookInbox({ policy: { block: [alice.id] } });
    const refused = await postHook(strict, "botcord_inbox/agent", flatBody(alice, "Alice", "hi", "botcord:x"));
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("sender_blocked");
    expect(await runInDurableObject(stub(strict), (o) => o.store.queueStats().count)).toBe(0);
  });

  it("holds a byte-identical body: stored once the history shows a second message, dropped (and said) when it was the hub sending it again", async () => {
    const inbox = await webhookInbox();
    const alice = await registeredAgent();
    const room = `rm_dm_${[alice.id, inbox.agent.id].sort().join("_")}`;
    const body = flatBody(alice, "Alice", "same words", await hubSessionKey(room, null));
    const first = await signedBy(alice, await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text: "same words" } }));
    const second = await signedBy(alice, await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text: "same words" } }));
    const count = () => runInDurableObject(stub(inbox), (o) => o.store.queueStats().count);
    await postHook(inbox, "botcord_inbox/agent", body);
    await scriptHistory(inbox.agent.id, [historyRecord(first, room)]);
    await bridge(inbox);

    // Resent by the hub: held, nothing stored, and after the grace dropped with a word in hub status.
    const resent = await postHook(inbox, "botcord_inbox/agent", body);
    expect(await resent.json()).toEqual({ queued: true, id: 0, held: true });
    expect(await count()).toBe(1);
    await bridge(inbox);
    expect(await count()).toBe(1);
    await runInDurableObject(stub(inbox), (o) => {
      const state = o.store.loadHubState();
      o.store.saveHubState({ ...state, claims: state.claims.map((c) => ({ ...c, at: c.at - 31_000 })) });
    });
    await bridge(inbox);
    const state = await runInDurableObject(stub(inbox), (o) => o.store.loadHubState());
    expect([await count(), state.claims.length]).toEqual([1, 0]);
    expect(state.last_bridge?.detail).toMatch(/sent again/);

    // The same words a second time for real: a second record in the history releases it.
    const again = (await (await postHook(inbox, "botcord_inbox/agent", body)).json()) as { held?: boolean };
    expect(again.held).toBe(true);
    await scriptHistory(inbox.agent.id, [historyRecord(second, room)]);
    await bridge(inbox);
    const named = await runInDurableObject(stub(inbox), (o) => o.store.list(0, 10, "all", null).map((m) => m.msg_id));
    expect(named).toEqual([first.msg_id, second.msg_id]);
  });
});
