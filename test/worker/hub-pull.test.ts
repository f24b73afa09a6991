// Pull mode against the stand-in hub, with records shaped as today's hub sends them
// (test/fixtures/hub/current): each record is stored as the flat body a webhook-era hub would have
// posted, verified (a2a/0.1, a2a/0.2, a room's fan-out) or vouched for by the hub (unsigned dashboard
// and hub records), and confirmed at the hub only once stored; what fails the checks is shelved and
// confirmed, what cannot be stored now stays leased there.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { draftEnvelope, hubSessionKey } from "../../protocol/index.ts";
import type { DeliveryFrame } from "../../protocol/index.ts";
import { hubReceipts, poll, registeredAgent } from "../support/workerd/agents.ts";
import type { TestAgent } from "../support/workerd/agents.ts";
import { hubSide, inboxRecord, pullingInbox, pullNow as alarm, scriptInbox, signedBy } from "../support/workerd/hub-link.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";

afterEach(closeAllSockets);

const bodyOf = (frame: DeliveryFrame) => JSON.parse(frame.body) as Record<string, unknown>;

async function dm(sender: TestAgent, to: string, text: string, extra: Record<string, unknown> = {}) {
  return signedBy(sender, { ...(await draftEnvelope({ from: sender.id, to, type: "message", payload: { text } })), ...extra } as never);
}

describe("pulling from today's hub", () => {
  it("stores signed records verified and unsigned ones vouched for, as webhook-era bodies, and confirms each after storing", async () => {
    const inbox = await pullingInbox();
    const me = inbox.agent.id;
    const alice = await registeredAgent();
    const room = "rm_a3150de02435";
    const human = "hu_bc931cb14120";
    const records = [
      inboxRecord(await dm(alice, me, "plain a2a/0.1")),
      inboxRecord(await dm(alice, me, "signed topic", { v: "a2a/0.2", topic: "plan", goal: "ship" }), { topic: "plan", topic_id: "tp_1", goal: "ship" }),
      inboxRecord(await dm(alice, room, "hello room"), { room_id: room, room_name: "Project", room_member_count: 3, room_member_names: ["Alice", "Bob", "Carol"], my_role: "member", my_can_send: true }),
      // The owner's chat on the dashboard: unsigned, "from" the agent itself (inbox-record-dashboard.json).
      inboxRecord({ ...(await draftEnvelope({ from: me, to: me, type: "message", payload: { text: "hi, your owner" } })), payload_hash: "", sig: { alg: "ed25519", key_id: "dashboard", value: "" } },
        { room_id: "rm_oc_9fb5280fa45e0ac9", room_member_count: 2, source_type: "dashboard_user_chat", source_user_name: "bobowner", source_session_kind: "owner_chat" }),
      inboxRecord({ ...(await draftEnvelope({ from: human, to: `rm_dm_${me}_${human}`, type: "message", payload: { text: "hello from a human" } })), payload_hash: "", sig: { alg: "ed25519", key_id: "dashboard-human", value: "" } },
        { room_id: `rm_dm_${me}_${human}`, room_member_count: 2, source_type: "dashboard_human_room", source_user_name: "Hana", source_session_kind: "room_human" }),
      inboxRecord({ ...(await draftEnvelope({ from: "hub", to: me, type: "system", payload: { text: "[BotCord Hub] Welcome!" } })), sig: { alg: "ed25519", key_id: "hub", value: "" } }, { room_id: null, room_member_count: null }),
    ];
    await scriptInbox(me, records);
    await alarm(inbox);

    const { messages } = await poll(inbox.agent);
    expect(messages.map((m) => [m.kind, m.subpath])).toEqual(records.map(() => ["hook", "botcord_inbox/agent"]));
    const bodies = messages.map(bodyOf);
    expect(bodies.map((b) => b.hub_msg_id)).toEqual(records.map((r) => r.hub_msg_id));
    expect(bodies.map((b) => b.verified_by)).toEqual(["signature", "signature", "signature", "hub", "hub", "hub"]);
    expect(bodies[0]).toMatchObject({ message: `${alice.id} says: plain a2a/0.1`, name: alice.id, channel: "last", sessionKey: await hubSessionKey(`rm_dm_${[alice.id, me].sort().join("_")}`, null) });
    expect(bodies[1]).toMatchObject({ message: `【Topic: plan | ID: tp_1】\n【Goal: ship】\n${alice.id} says: signed topic`, topic: "plan", goal: "ship", sessionKey: await hubSessionKey(`rm_dm_${[alice.id, me].sort().join("_")}`, "plan") });
    expect(bodies[2]).toMatchObject({ message: `[群聊「Project」(${room}) | 3人: Alice, Bob, Carol | 权限: member, 可发言]\n${alice.id} says: hello room`, room_id: room, sessionKey: await hubSessionKey(room, null) });
    expect(bodies[3]).toMatchObject({ name: "bobowner (owner, on the dashboard)", message: "bobowner (owner, on the dashboard) says: hi, your owner" });
    expect(bodies[4]).toMatchObject({ name: `Hana (${human})`, from: human, source_type: "dashboard_human_room" });
    expect(bodies[5]!.message).toBe('[system] from hub: {"text": "[BotCord Hub] Welcome!"}');

    const side = await hubSide(me);
    expect(side.acked.sort()).toEqual(records.map((r) => String(r.hub_msg_id)).sort());
    expect(side.refreshes).toBe(1);
    // Signed acks for the three signed messages only, held back until the inbox ack is surely in (the
    // hub's last write wins); they leave from the alarm's outbox (the test's alarm run and the
    // runtime's own may both post one, which the hub takes as a repeat).
    const outbox = await runInDurableObject(env.INBOX.getByName(me), (o) => {
      const now = Date.now();
      const [due, later] = [o.store.dueOutbox(now).length, o.store.dueOutbox(now + 3500)];
      for (const item of later) o.store.rescheduleOutbox(item.id, 0, now);
      return [due, later.length];
    });
    expect(outbox).toEqual([0, 3]);
    await alarm(inbox);
    const receipts = await hubReceipts(me);
    expect(receipts.every((r) => r.type === "ack" && r.to === alice.id)).toBe(true);
    expect([...new Set(receipts.map((r) => r.reply_to))].sort()).toEqual(records.slice(0, 3).map((r) => (r.envelope as { msg_id: string }).msg_id).sort());
  });

  it("shelves a record that fails the checks, with the reason, and confirms it so it does not come back", async () => {
    const inbox = await pullingInbox();
    const alice = await registeredAgent();
    const good = await dm(alice, inbox.agent.id, "fine");
    const forged = { ...(await dm(alice, inbox.agent.id, "original")), payload: { text: "changed" } };
    const records = [inboxRecord(forged), inboxRecord(good)];
    await scriptInbox(inbox.agent.id, records);
    await alarm(inbox);
    const dead = await poll(inbox.agent, "ack=false");
    expect(dead.count).toBe(1);
    expect(dead.dead).toBe(1);
    const shelf = await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (o) => o.store.list(0, 10, "dead", null));
    expect(shelf[0]!.reason).toMatch(/payload_hash_mismatch/);
    expect(shelf[0]!.reason).toContain(String(records[0]!.hub_msg_id));
    expect((await hubSide(inbox.agent.id)).acked.sort()).toEqual(records.map((r) => String(r.hub_msg_id)).sort());
  });

  it("leaves at the hub, leased, what the inbox cannot take now (full), and confirms the rest", async () => {
    const inbox = await pullingInbox({ max_queue_messages: 1 });
    const alice = await registeredAgent();
    const records = [inboxRecord(await dm(alice, inbox.agent.id, "one")), inboxRecord(await dm(alice, inbox.agent.id, "two"))];
    await scriptInbox(inbox.agent.id, records);
    await alarm(inbox);
    const side = await hubSide(inbox.agent.id);
    expect(side.acked).toEqual([String(records[0]!.hub_msg_id)]);
    expect(side.states[String(records[1]!.hub_msg_id)]).toBe("processing");
  });

  it("pulls at once when the connected agent says the hub has mail, and the message reaches its socket", async () => {
    const inbox = await pullingInbox();
    const alice = await registeredAgent();
    const socket = await connect(inbox.agent.id);
    const ready = await socket.auth(inbox.agent);
    expect(ready.hub_mode).toBe("pull");
    expect(ready.hub_prefix).toBe("botcord");
    expect((await socket.next("hub_token")).token).toBe((await hubSide(inbox.agent.id)).token);
    const record = inboxRecord(await dm(alice, inbox.agent.id, "right now"));
    await scriptInbox(inbox.agent.id, [record]);
    socket.send({ type: "hub_pull" });
    const frame = await socket.next("message");
    expect(bodyOf(frame).hub_msg_id).toBe(record.hub_msg_id);
  });

  it("costs nothing but its alarm while nothing arrives: a quiet pull writes no row and sets one alarm, further off each time", async () => {
    const inbox = await pullingInbox();
    const stub = env.INBOX.getByName(inbox.agent.id);
    // A pull that finds something starts the wait over at 15 s: here the hub's own note (unsigned, no ack).
    const note = await draftEnvelope({ from: "hub", to: inbox.agent.id, type: "system", payload: { text: "[BotCord Hub] Welcome!" } });
    await scriptInbox(inbox.agent.id, [inboxRecord({ ...note, sig: { alg: "ed25519", key_id: "hub", value: "" } }, { room_id: null, room_member_count: null })]);
    await alarm(inbox);
    // Count the alarm's own setAlarm calls (each a row written on the bill) and SQLite's rows.
    await runInDurableObject(stub, (_o, state) => {
      const storage = state.storage as unknown as { setAlarm(at: number): Promise<void>; alarmsSet?: number };
      const set = storage.setAlarm.bind(storage);
      storage.alarmsSet = 0;
      storage.setAlarm = (at: number) => ((storage.alarmsSet = (storage.alarmsSet ?? 0) + 1), set(at));
    });
    const waits: number[] = [];
    const before = await runInDurableObject(stub, (o) => o.store.rowsWritten);
    for (let i = 0; i < 4; i++) {
      const start = Date.now();
      await alarm(inbox);
      waits.push(await runInDurableObject(stub, (o) => Math.round((o.hub.pullStatus().nextAtMs! - start) / 15_000) * 15));
    }
    const after = await runInDurableObject(stub, (o, state) => ({ rows: o.store.rowsWritten, alarms: (state.storage as unknown as { alarmsSet: number }).alarmsSet }));
    expect(waits).toEqual([30, 60, 120, 120]);
    expect(after.rows - before).toBe(0);
    expect(after.alarms).toBe(4);
    expect((await hubSide(inbox.agent.id)).refreshes).toBe(1);
  });
});
