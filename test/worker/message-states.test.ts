// Message states over the WebSocket: ids that only grow, acks and rejects that must name a message in
// flight on this connection, and the dead-letter shelf a reject fills (docs/protocol.md, "Message states and the dead shelf").
import { evictDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { CLOSE_CODES, REJECT_REASON_MAX } from "../../protocol/index.ts";
import { claimInbox, listQueue, poll, showMessage, signedFetch } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import type { SocketClient } from "../support/workerd/socket-client.ts";
import { ids, inboxWithHooks, sendHook, stubOf } from "../support/workerd/socket-fixtures.ts";

afterEach(() => closeAllSockets());

/** Closes the client and waits for the relay's answer, so the next connection starts clean. */
async function hangUp(client: SocketClient): Promise<void> {
  client.close();
  await client.closeEvent();
}

async function rejectAndConfirm(client: SocketClient, id: number, reason = "gateway refused it"): Promise<void> {
  client.reject(id, reason);
  expect(await client.next("rejected")).toEqual({ type: "rejected", id });
}

describe("ids only grow", () => {
  // Was: the id floor was saved only when the queue emptied. A refused head that is never acknowledged
  // keeps the queue non-empty while the messages behind it are acknowledged and deleted; after an
  // eviction SQLite handed out max(rowid)+1 again, and a client whose cursor had passed those ids
  // skipped the new messages.
  it("regression: no id is reused after the newest messages were acknowledged behind an unacknowledged head and the object restarted", async () => {
    const { inbox, sent } = await inboxWithHooks(3);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 3 });
    expect(ids(await client.messages(3))).toEqual(ids(sent));
    client.ack(sent[1]!.id);
    client.ack(sent[2]!.id);
    await client.sync();
    await hangUp(client);
    await evictDurableObject(stubOf(inbox));
    const later = [await sendHook(inbox, '{"n":4}'), await sendHook(inbox, '{"n":5}'), await sendHook(inbox, '{"n":6}')];
    expect(ids(later)).toEqual([sent[2]!.id + 1, sent[2]!.id + 2, sent[2]!.id + 3]);
    const again = await connect(inbox.agent.id);
    expect(await again.auth(inbox.agent)).toMatchObject({ backlog: 4, last_id: later[2]!.id });
    expect(ids(await again.messages(4))).toEqual([sent[0]!.id, ...ids(later)]);
  });

  it("regression: no id is reused after the newest message was dropped and the object restarted", async () => {
    const { inbox, sent } = await inboxWithHooks(3);
    const res = await signedFetch(inbox.agent, "DELETE", `/inbox/${inbox.agent.id}/queue/${sent[2]!.id}`);
    // Read the answer first: eviction waits for a response body nobody read.
    expect(await res.json()).toEqual({ dropped: sent[2]!.id, was: "queued" });
    await evictDurableObject(stubOf(inbox));
    expect((await sendHook(inbox, '{"n":4}')).id).toBe(sent[2]!.id + 1);
  });
});

describe("acks must name a message in flight on this connection", () => {
  it("an ack of an id never sent is refused with not_in_flight; the message stays and is delivered in turn", async () => {
    const { inbox, sent } = await inboxWithHooks(4);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    expect(ids(await client.messages(1))).toEqual([sent[0]!.id]);
    client.ack(sent[3]!.id);
    expect(await client.next("error")).toMatchObject({ code: "not_in_flight", id: sent[3]!.id });
    await client.expectQuiet();
    expect((await poll(inbox.agent)).backlog).toBe(4);
    for (const message of sent.slice(0, 3)) {
      client.ack(message.id);
      expect(ids(await client.messages(1))).toEqual([sent[sent.indexOf(message) + 1]!.id]);
    }
  });

  it("a second ack of the same id is refused and does not open another slot", async () => {
    const { inbox, sent } = await inboxWithHooks(3);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    await client.messages(1);
    client.ack(sent[0]!.id);
    expect(ids(await client.messages(1))).toEqual([sent[1]!.id]);
    client.ack(sent[0]!.id);
    expect(await client.next("error")).toMatchObject({ code: "not_in_flight", id: sent[0]!.id });
    // Message 3 must wait: the window of 1 is still held by message 2.
    await client.expectQuiet();
  });

  it("an ack of a dead message is refused and leaves it on the shelf", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    await client.messages(1);
    await rejectAndConfirm(client, sent[0]!.id);
    await client.messages(1);
    client.ack(sent[0]!.id);
    expect(await client.next("error")).toMatchObject({ code: "not_in_flight", id: sent[0]!.id });
    expect((await showMessage(inbox.agent, sent[0]!.id)).message.state).toBe("dead");
  });

  it("an ack of an id sent only on an earlier connection is refused on the new one", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const first = await connect(inbox.agent.id);
    await first.auth(inbox.agent, { window: 2 });
    await first.messages(2);
    await hangUp(first);
    const second = await connect(inbox.agent.id);
    await second.auth(inbox.agent, { window: 1 });
    expect(ids(await second.messages(1))).toEqual([sent[0]!.id]);
    second.ack(sent[1]!.id);
    expect(await second.next("error")).toMatchObject({ code: "not_in_flight", id: sent[1]!.id });
    expect((await poll(inbox.agent)).backlog).toBe(2);
  });
});

describe("reject: the dead-letter shelf", () => {
  it("shelves the message with its reason, status and attempts and frees its window slot", async () => {
    const { inbox, sent } = await inboxWithHooks(3);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    await client.messages(1);
    client.reject(sent[0]!.id, "no hooks.mappings entry for agentgram_inbox/agent", { status: 404, attempts: 3 });
    expect(await client.next("rejected")).toEqual({ type: "rejected", id: sent[0]!.id });
    expect(ids(await client.messages(1))).toEqual([sent[1]!.id]);
    const shown = await showMessage(inbox.agent, sent[0]!.id);
    expect(shown.message).toMatchObject({ state: "dead", reason: "no hooks.mappings entry for agentgram_inbox/agent", last_status: 404, attempts: 3 });
    expect(shown.message.dead_at).toBeGreaterThanOrEqual(shown.message.received_at);
    expect(shown.message.expires_at).toBe(shown.message.dead_at! + 7 * 24 * 3600 * 1000);
    expect(shown.body).toBe(sent[0]!.body);
    // Without status and attempts: one attempt, no status.
    await rejectAndConfirm(client, sent[1]!.id, "refused");
    expect((await showMessage(inbox.agent, sent[1]!.id)).message).toMatchObject({ attempts: 1, last_status: null });
  });

  it("dead messages are counted, never sent again, and outlive an `after` beyond them", async () => {
    const { inbox, sent } = await inboxWithHooks(3);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 3 });
    await client.messages(3);
    await rejectAndConfirm(client, sent[1]!.id);
    client.ack(sent[0]!.id);
    await client.sync();
    await hangUp(client);
    const again = await connect(inbox.agent.id);
    expect(await again.auth(inbox.agent)).toEqual({ type: "ready", after: 0, backlog: 1, window: 16, dead: 1, last_id: sent[2]!.id, hub_prefix: "agentgram", hub_mode: "off" });
    expect(ids(await again.messages(1))).toEqual([sent[2]!.id]);
    await again.expectQuiet();
    await hangUp(again);
    const resumed = await connect(inbox.agent.id);
    expect(await resumed.auth(inbox.agent, { after: sent[2]!.id })).toMatchObject({ after: sent[2]!.id, backlog: 0, dead: 1 });
    await resumed.expectQuiet();
    expect(await poll(inbox.agent, `after=${sent[2]!.id}&ack=true`)).toMatchObject({ messages: [], backlog: 0, dead: 1 });
    expect((await showMessage(inbox.agent, sent[1]!.id)).message.state).toBe("dead");
  });

  it("40 rejects in a row never stall delivery: all go to the shelf and a 41st message still arrives", async () => {
    const { inbox, sent } = await inboxWithHooks(40);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 4 });
    const confirmed: number[] = [];
    while (confirmed.length < sent.length) {
      const frame = await client.next();
      if (frame.type === "message") client.reject(frame.id, `refused ${frame.id}`);
      else if (frame.type === "rejected") confirmed.push(frame.id);
      else throw new Error(`unexpected frame ${JSON.stringify(frame)}`);
    }
    expect(confirmed).toEqual(ids(sent));
    const last = await sendHook(inbox, '{"n":41}');
    expect(ids(await client.messages(1))).toEqual([last.id]);
    expect((await listQueue(inbox.agent)).summary).toMatchObject({ dead: 40, sent: 1, queued: 0 });
  });

  it("a reject of an id not in flight is refused and changes nothing", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    await client.messages(1);
    client.reject(sent[1]!.id, "not sent yet");
    expect(await client.next("error")).toMatchObject({ code: "not_in_flight", id: sent[1]!.id });
    await client.expectQuiet();
    expect((await listQueue(inbox.agent)).summary).toMatchObject({ dead: 0, sent: 1, queued: 1 });
  });
});

describe("reject frame validation", () => {
  it.each([
    ["an empty reason", { reason: "" }],
    ["a blank reason", { reason: "   " }],
    ["no reason", {}],
    ["a status that is a string", { reason: "x", status: "404" }],
    ["a negative attempts", { reason: "x", attempts: -1 }],
  ])("closes the socket with bad_frame/4400 on %s", async (_name, fields) => {
    const { inbox, sent } = await inboxWithHooks(1);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(1);
    client.send({ type: "reject", id: sent[0]!.id, ...fields });
    expect(await client.next("error")).toMatchObject({ code: "bad_frame" });
    expect((await client.closeEvent()).code).toBe(CLOSE_CODES.badFrame);
    expect((await poll(inbox.agent)).dead).toBe(0);
  });

  it(`cuts a reason longer than ${REJECT_REASON_MAX} characters to ${REJECT_REASON_MAX}`, async () => {
    const inbox = await claimInbox();
    const message = await sendHook(inbox, "{}");
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(1);
    await rejectAndConfirm(client, message.id, "r".repeat(REJECT_REASON_MAX + 500));
    expect((await showMessage(inbox.agent, message.id)).message.reason).toBe("r".repeat(REJECT_REASON_MAX));
  });

  // The cut counts UTF-16 code units: an emoji straddling the limit left half a surrogate pair, which
  // SQLite stored as bytes that read back as three U+FFFD, so the reason grew past the limit, garbled.
  it("regression: cutting a long reason never splits a character", async () => {
    const inbox = await claimInbox();
    const message = await sendHook(inbox, "{}");
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(1);
    await rejectAndConfirm(client, message.id, `${"a".repeat(REJECT_REASON_MAX - 1)}😀 and more`);
    const reason = (await showMessage(inbox.agent, message.id)).message.reason!;
    expect(reason.length).toBeLessThanOrEqual(REJECT_REASON_MAX);
    expect(reason).not.toContain("\uFFFD");
    expect(reason.startsWith("a".repeat(REJECT_REASON_MAX - 1))).toBe(true);
  });
});
