// Lanes over the WebSocket (an agent whose auth names "lanes"): each lane holds at most its share of the
// window, acks and rejects are checked against the ids in flight, a drop or a source's new target makes
// the agent abandon what it holds, messages an older agent set aside come back in their lane's order
// (and no `after` cursor deletes them), and a frame's lane is the agent's own conversation for it. The
// older agent's behaviour is websocket-delivery.test.ts, unchanged.
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { parseEnvelope, sourceLane } from "../../protocol/index.ts";
import type { DeliveryFrame, SourceView } from "../../protocol/index.ts";
import { conversationOf } from "../../local-agent/delivery/conversation.ts";
import { claimInbox, listQueue, newAgent, postHook, registerAtHub, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import type { SocketClient } from "../support/workerd/socket-client.ts";
import { accepted, ids, queued, sendEnvelope, sendHook, stubOf } from "../support/workerd/socket-fixtures.ts";
import { addSource, pathOf, postToSource } from "../support/workerd/sources.ts";

afterEach(() => closeAllSockets());

const LANES = ["lanes"];

async function lanesClient(inbox: ClaimedInbox, options: { after?: number; window?: number } = {}): Promise<SocketClient> {
  const client = await connect(inbox.agent.id);
  expect(await client.auth(inbox.agent, { ...options, features: LANES })).toMatchObject({ features: LANES });
  return client;
}

async function hooks(inbox: ClaimedInbox, subpath: string, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await sendHook(inbox, JSON.stringify({ subpath, i }), subpath)).id);
  return out;
}

/** A token source forwarding to `target`; returns the path events are posted to. */
async function appSource(inbox: ClaimedInbox, target: string | null, name = "app"): Promise<string> {
  return pathOf((await addSource(inbox, { name, kind: "token", forward: target })).post_url);
}

async function events(path: string, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await postToSource(path, JSON.stringify({ event: i }), { "content-type": "application/json" });
    const body = (await res.json()) as { id: number };
    expect(res.status).toBe(200);
    out.push(body.id);
  }
  return out;
}

function changeSource(inbox: ClaimedInbox, name: string, body: Record<string, unknown>): Promise<Response> {
  return signedFetch(inbox.agent, "PATCH", `/inbox/${inbox.agent.id}/sources/${name}`, body);
}

describe("lanes", () => {
  it("a lane whose messages are never acknowledged holds only its share of the window; another lane keeps flowing", async () => {
    const inbox = await claimInbox();
    const slow = await hooks(inbox, "slow/app", 6);
    const fast = await hooks(inbox, "fast/app", 3);
    // A window of 8: each lane's share is 2 (laneShare: a quarter).
    const client = await lanesClient(inbox, { window: 8 });
    const first = await client.messages(4);
    expect(ids(first)).toEqual([slow[0], slow[1], fast[0], fast[1]]);
    expect(first.map((f) => f.lane)).toEqual(["subpath:slow/app", "subpath:slow/app", "subpath:fast/app", "subpath:fast/app"]);
    expect(first.map((f) => f.floor)).toEqual(Array(4).fill(slow[0]! - 1));
    await client.expectQuiet();
    client.ack(fast[0]!);
    expect(ids(await client.messages(1))).toEqual([fast[2]]);
    client.ack(fast[1]!);
    client.ack(fast[2]!);
    await client.expectQuiet();
    const live = await sendHook(inbox, '{"live":1}', "fast/app");
    const [frame] = await client.messages(1);
    expect(frame).toMatchObject({ id: live.id, lane: "subpath:fast/app", floor: slow[0]! - 1 });
    // The slow lane moves when its head is acknowledged, and the floor with it.
    client.ack(slow[0]!);
    expect(await client.messages(1)).toMatchObject([{ id: slow[2], floor: slow[1]! - 1 }]);
  });

  it("refuses an ack or reject of an id not in flight on the connection, changing nothing", async () => {
    const inbox = await claimInbox();
    const sent = await hooks(inbox, "one/lane", 6);
    const client = await lanesClient(inbox, { window: 4 });
    expect(ids(await client.messages(1))).toEqual([sent[0]]);
    client.ack(sent[3]!);
    expect(await client.next("error")).toMatchObject({ code: "not_in_flight", id: sent[3] });
    client.reject(sent[4]!, "refused");
    expect(await client.next("error")).toMatchObject({ code: "not_in_flight", id: sent[4] });
    await client.expectQuiet();
    expect(await queued(inbox)).toBe(6);
    expect((await listQueue(inbox.agent, "state=dead")).messages).toEqual([]);
    // The one in flight is acknowledged as usual, once.
    client.ack(sent[0]!);
    expect(ids(await client.messages(1))).toEqual([sent[1]]);
    client.ack(sent[0]!);
    expect(await client.next("error")).toMatchObject({ code: "not_in_flight", id: sent[0] });
  });

  it("a drop of an in-flight message deletes it and tells the agent to abandon it; the lane goes on", async () => {
    const inbox = await claimInbox();
    const sent = await hooks(inbox, "one/lane", 3);
    const client = await lanesClient(inbox, { window: 4 });
    expect(ids(await client.messages(1))).toEqual([sent[0]]);
    const res = await signedFetch(inbox.agent, "DELETE", `/inbox/${inbox.agent.id}/queue/${sent[0]}`);
    expect([res.status, await res.json()]).toEqual([200, { dropped: sent[0], was: "sent" }]);
    expect(await client.next("abandon")).toEqual({ type: "abandon", id: sent[0], reason: "dropped" });
    expect(await client.messages(1)).toMatchObject([{ id: sent[1], floor: sent[1]! - 1 }]);
    expect((await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/queue/${sent[0]}`)).status).toBe(404);
    client.ack(sent[0]!);
    expect(await client.next("error")).toMatchObject({ code: "not_in_flight", id: sent[0] });
  });

  it("a source's new target or policy: the agent abandons what it holds of the source, which comes again with the new forward", async () => {
    const inbox = await claimInbox();
    const path = await appSource(inbox, "http://127.0.0.1:3000/");
    const sent = await events(path, 2);
    const client = await lanesClient(inbox);
    const before = await client.messages(2);
    expect(before.map((f) => [f.id, f.lane, f.forward?.target, f.forward?.timeout_sec])).toEqual([
      [sent[0], sourceLane("app"), "http://127.0.0.1:3000/", undefined],
      [sent[1], sourceLane("app"), "http://127.0.0.1:3000/", undefined],
    ]);
    expect((await changeSource(inbox, "app", { forward: "http://127.0.0.1:4000/hooks" })).status).toBe(200);
    expect([await client.next("abandon"), await client.next("abandon")]).toEqual(sent.map((id) => ({ type: "abandon", id, reason: "retargeted" })));
    expect((await client.messages(2)).map((f) => [f.id, f.forward?.target])).toEqual(sent.map((id) => [id, "http://127.0.0.1:4000/hooks"]));
    const changed = await changeSource(inbox, "app", { timeout_sec: 5, retries: 2, ordered: false });
    expect(((await changed.json()) as { source: SourceView }).source).toMatchObject({ timeout_sec: 5, retries: 2, ordered: false });
    expect((await client.next("abandon")).reason).toBe("retargeted");
    expect((await client.next("abandon")).reason).toBe("retargeted");
    expect((await client.messages(2)).map((f) => f.forward)).toMatchObject(sent.map(() => ({ target: "http://127.0.0.1:4000/hooks", timeout_sec: 5, retries: 2, ordered: false })));
    await client.expectQuiet();
  });

  it("a forwarding source whose order does not matter holds half the window, an ordered one a quarter", async () => {
    const inbox = await claimInbox();
    const unordered = pathOf((await addSource(inbox, { name: "any", kind: "token", forward: "http://127.0.0.1:3000/", ordered: false })).post_url);
    const ordered = await appSource(inbox, "http://127.0.0.1:3001/", "in-order");
    const loose = await events(unordered, 6);
    const strict = await events(ordered, 6);
    const client = await lanesClient(inbox, { window: 8 });
    const frames = await client.messages(6);
    expect(ids(frames)).toEqual([...loose.slice(0, 4), ...strict.slice(0, 2)]);
    expect(frames[0]!.forward).toMatchObject({ ordered: false });
    expect(frames[4]!.forward).not.toHaveProperty("ordered");
    await client.expectQuiet();
  });

  it.each([
    [{ timeout_sec: 0 }, /timeout_sec must be a whole number from 1 to 300/],
    [{ timeout_sec: 301 }, /timeout_sec/],
    [{ retries: 101 }, /retries must be a whole number from 0 to 100/],
    [{ retries: 1.5 }, /retries/],
    [{ ordered: "no" }, /ordered must be true .* or false/],
  ])("refuses the policy %o with 400 invalid_source saying what to give", async (policy, message) => {
    const inbox = await claimInbox();
    const added = await signedFetch(inbox.agent, "POST", `/inbox/${inbox.agent.id}/sources`, { name: "app", kind: "token", ...policy });
    const body = (await added.json()) as { error: { code: string; message: string } };
    expect([added.status, body.error.code]).toEqual([400, "invalid_source"]);
    expect(body.error.message).toMatch(message);
    await appSource(inbox, null);
    const changed = await changeSource(inbox, "app", policy);
    expect([changed.status, ((await changed.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_source"]);
  });
});

describe("expiry on a lanes connection", () => {
  it("never shelves a message in flight; one waiting in its lane is shelved, and the index lets it go", async () => {
    const inbox = await claimInbox();
    const sent = await hooks(inbox, "one/lane", 3);
    const client = await lanesClient(inbox, { window: 4 });
    expect(ids(await client.messages(1))).toEqual([sent[0]]);
    await runInDurableObject(stubOf(inbox), (_i, state) => state.storage.sql.exec(`UPDATE messages SET expires_at = ? WHERE seq IN (?, ?)`, Date.now() - 1, sent[0]!, sent[1]!));
    await runDurableObjectAlarm(stubOf(inbox));
    const listed = (await listQueue(inbox.agent)).messages.map((m) => [m.id, m.state]);
    expect(listed).toEqual([[sent[0], "sent"], [sent[1], "dead"], [sent[2], "queued"]]);
    client.ack(sent[0]!);
    expect(await client.messages(1)).toMatchObject([{ id: sent[2], floor: sent[2]! - 1 }]);
  });
});

describe("messages an older agent set aside", () => {
  /**
   * An older agent (no features) sets e1, e2 and e4 aside (rejects with "set aside: …"), delivers e3 and
   * stops holding e5 and e6; then e7 arrives. Its cursor is past e4.
   */
  async function setAsideInbox() {
    const inbox = await claimInbox();
    const path = await appSource(inbox, "http://127.0.0.1:3000/");
    const e = await events(path, 6);
    const older = await connect(inbox.agent.id);
    expect(await older.auth(inbox.agent)).not.toHaveProperty("features");
    expect((await older.messages(6)).every((f) => f.lane === undefined && f.floor === undefined)).toBe(true);
    for (const id of [e[0]!, e[1]!, e[3]!]) {
      older.reject(id, "set aside: the app at http://127.0.0.1:3000/ is down; replayed when it answers", { status: 0, attempts: 2 });
      expect(await older.next("rejected")).toEqual({ type: "rejected", id });
    }
    older.ack(e[2]!);
    await older.sync();
    older.close();
    await older.closeEvent();
    e.push(...(await events(path, 1)));
    return { inbox, path, e };
  }

  it("a lanes agent whose cursor is past them gets them back, restored, in id order among the source's newer events, each once", async () => {
    const { inbox, e } = await setAsideInbox();
    const client = await lanesClient(inbox, { after: e[3], window: 16 });
    // The share of 16 is 4: e1, e2, e4 (restored) and e5.
    const first = await client.messages(4);
    expect(first.map((f) => [f.id, f.restored ?? false, f.floor])).toEqual([
      [e[0], true, e[0]! - 1],
      [e[1], true, e[0]! - 1],
      [e[3], true, e[0]! - 1],
      [e[4], false, e[0]! - 1],
    ]);
    expect((await listQueue(inbox.agent, "state=dead")).messages).toEqual([]);
    const shown = (await listQueue(inbox.agent, "state=sent")).messages.find((m) => m.id === e[0]);
    expect(shown).toMatchObject({ reason: null, dead_at: null, attempts: 2, lane: sourceLane("app") });
    // Each ack of a restored one deletes it and lets the lane's next come: e6, then e7; nothing twice.
    client.ack(e[0]!);
    expect(await client.messages(1)).toMatchObject([{ id: e[5], floor: e[1]! - 1 }]);
    client.ack(e[1]!);
    expect(await client.messages(1)).toMatchObject([{ id: e[6], floor: e[3]! - 1 }]);
    for (const id of [e[3]!, e[4]!, e[5]!, e[6]!]) client.ack(id);
    // Holding nothing, with nothing left: the floor frame says every id so far is done.
    expect(await client.next("floor")).toEqual({ type: "floor", floor: e[6] });
    await client.expectQuiet();
    expect(await queued(inbox)).toBe(0);
  });

  it("an older agent's `after` past restored messages does not delete them, nor do they take its window; a lanes agent gets them later", async () => {
    const { inbox, path, e } = await setAsideInbox();
    const lanes = await lanesClient(inbox, { after: e[3], window: 16 });
    await lanes.messages(4);
    lanes.close();
    await lanes.closeEvent();
    const older = await connect(inbox.agent.id);
    await older.auth(inbox.agent, { after: e[6], window: 2 });
    await older.expectQuiet();
    expect(ids((await listQueue(inbox.agent, "state=queued")).messages)).toEqual([e[0], e[1], e[3]]);
    // The three it was never sent take none of its window of 2: a new event comes at once.
    const [newer] = await events(path, 1);
    expect(ids(await older.messages(1))).toEqual([newer]);
    older.ack(newer!);
    older.close();
    await older.closeEvent();
    const again = await lanesClient(inbox, { after: newer });
    expect((await again.messages(3)).map((f) => [f.id, f.restored, f.floor])).toEqual([e[0], e[1], e[3]].map((id) => [id, true, e[0]! - 1]));
    await again.expectQuiet();
  });
});

describe("a frame's lane", () => {
  it("is the agent's own conversation for envelopes and hook bodies (sessionKey or sub-path), and the source's for source events — computed too for rows stored before lanes", async () => {
    const inbox = await claimInbox();
    const sender = newAgent();
    await registerAtHub(sender);
    const envelope = await sendEnvelope(inbox, sender, "hello");
    const keyed = await sendHook(inbox, JSON.stringify({ message: "hi", sessionKey: "agent:main:hub:rm_room_1" }));
    const plain = await sendHook(inbox, "not json at all", "plain/path");
    const path = await appSource(inbox, null, "gw");
    const [event] = await events(path, 1);
    const expected = (frame: DeliveryFrame) => {
      // What the agent would key on without the relay's lane (an older relay's frame).
      const { lane: _lane, floor: _floor, ...older } = frame;
      return conversationOf(older, frame.kind === "envelope" ? parseEnvelope(JSON.parse(frame.body)) : null);
    };
    const check = async () => {
      const client = await lanesClient(inbox);
      const frames = await client.messages(4);
      expect(ids(frames)).toEqual([envelope.id, keyed.id, plain.id, event]);
      expect(frames.slice(0, 3).map((f) => f.lane)).toEqual(frames.slice(0, 3).map(expected));
      expect(frames[1]!.lane).toBe("agent:main:hub:rm_room_1");
      expect(frames[2]!.lane).toBe("subpath:plain/path");
      expect(frames[3]!.lane).toBe(sourceLane("gw"));
      client.close();
      await client.closeEvent();
    };
    await check();
    // As a relay from before schema 7 stored them: no lane; computed when the lanes are built, and kept.
    await runInDurableObject(stubOf(inbox), (_i, state) => state.storage.sql.exec(`UPDATE messages SET lane = NULL`));
    await evictDurableObject(stubOf(inbox));
    await check();
    const stored = await runInDurableObject(stubOf(inbox), (_i, state) => state.storage.sql.exec(`SELECT count(*) AS n FROM messages WHERE lane IS NULL`).one().n);
    expect(stored).toBe(0);
  });
});

describe("the cost of a send", () => {
  /** Rows the store reads per ack-and-send once a lanes socket is going, with `backlog` hooks over four lanes. */
  async function rowsReadPerSend(backlog: number): Promise<number> {
    const inbox = await claimInbox();
    for (let i = 0; i < backlog; i++) await accepted(await postHook(inbox, `lane/${i % 4}`, JSON.stringify({ i })));
    const client = await lanesClient(inbox, { window: 8 });
    const held = ids(await client.messages(8));
    const read = () => runInDurableObject(stubOf(inbox), (instance) => instance.store.rowsRead);
    const before = await read();
    for (const id of held) client.ack(id);
    await client.messages(8);
    const after = await read();
    client.close();
    return (after - before) / 8;
  }

  it("does not grow with the backlog", async () => {
    const small = await rowsReadPerSend(16);
    const large = await rowsReadPerSend(160);
    expect(small).toBeGreaterThan(0);
    expect(large).toBe(small);
  });
});
