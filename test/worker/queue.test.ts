// The owner's view of an inbox (docs/protocol.md, "The owner's queue API"): list messages by state, show one with its body,
// replay a dead one under a new id, drop one the agent is not delivering; every call signed by a key of the inbox.
import { afterEach, describe, expect, it } from "vitest";
import { signedRequestHeaders, toBase64 } from "../../protocol/index.ts";
import type { QueueSummary } from "../../protocol/index.ts";
import {
  claimInbox,
  errorCode,
  listQueue,
  newAgent,
  postHook,
  registeredAgent,
  relayFetch,
  showMessage,
  signedFetch,
} from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import type { SocketClient } from "../support/workerd/socket-client.ts";
import { accepted, ids, inboxWithHooks, sendEnvelope } from "../support/workerd/socket-fixtures.ts";

afterEach(() => closeAllSockets());

const queuePath = (inbox: ClaimedInbox, rest = "") => `/inbox/${inbox.agent.id}/queue${rest}`;

/** The summary's `live` of an inbox that never had a live request (test/worker/live-log.test.ts covers the rest). */
const NO_LIVE = { in_flight: 0, answered: 0, last_at: null };

/** A summary without its storage counts (what the object's statements read and wrote: asserted on their own). */
/** The summary without its counters (storage's row counts, history's kept count: test/worker/history.test.ts covers those). */
function withoutStorage(summary: QueueSummary): Omit<QueueSummary, "storage" | "history"> {
  const { storage, history, ...rest } = summary;
  expect(storage).toBeDefined();
  expect(history?.retention_sec).toBe(7 * 24 * 3600);
  return rest;
}

async function rejected(client: SocketClient, id: number, extra: { status?: number; attempts?: number } = {}): Promise<void> {
  client.reject(id, "gateway refused it", extra);
  expect(await client.next("rejected")).toEqual({ type: "rejected", id });
}

describe("listing the queue", () => {
  it("gives each message its state: queued, sent (in flight on the connected socket) or dead", async () => {
    const { inbox, sent } = await inboxWithHooks(4);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 2 });
    await client.messages(2);
    await rejected(client, sent[0]!.id, { status: 400 });
    await client.messages(1);
    const all = await listQueue(inbox.agent);
    expect(all.messages.map((m) => [m.id, m.state])).toEqual([
      [sent[0]!.id, "dead"],
      [sent[1]!.id, "sent"],
      [sent[2]!.id, "sent"],
      [sent[3]!.id, "queued"],
    ]);
    expect(all.messages[3]).toEqual({
      id: sent[3]!.id, state: "queued", kind: "hook", subpath: "agentgram_inbox/agent", content_type: "application/json",
      size: sent[3]!.body.length, received_at: all.messages[3]!.received_at, expires_at: all.messages[3]!.received_at + 7 * 24 * 3600 * 1000,
      sender: null, msg_id: null, type: null, attempts: 0, reason: null, last_status: null, dead_at: null, replay_of: null,
      lane: "subpath:agentgram_inbox/agent",
    });
    expect(withoutStorage(all.summary)).toEqual({
      queued: 1, sent: 2, dead: 1, oldest_waiting_at: all.messages[1]!.received_at,
      lanes: [{ lane: "subpath:agentgram_inbox/agent", queued: 1, sent: 2, oldest_at: all.messages[1]!.received_at }],
      live: NO_LIVE,
      credentials: "sealed",
    });
    expect(ids((await listQueue(inbox.agent, "state=queued")).messages)).toEqual([sent[3]!.id]);
    expect(ids((await listQueue(inbox.agent, "state=sent")).messages)).toEqual([sent[1]!.id, sent[2]!.id]);
    const dead = await listQueue(inbox.agent, "state=dead");
    expect(dead.messages).toMatchObject([{ id: sent[0]!.id, reason: "gateway refused it", last_status: 400, attempts: 1 }]);
    // Without a connected agent nothing is in flight.
    client.close();
    await client.closeEvent();
    expect((await listQueue(inbox.agent, "state=sent")).messages).toEqual([]);
    expect((await listQueue(inbox.agent)).summary).toMatchObject({ queued: 3, sent: 0, dead: 1 });
  });

  it("an empty inbox lists nothing; a dead message is not waiting", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(1);
    await rejected(client, sent[0]!.id);
    expect(withoutStorage((await listQueue(inbox.agent, "state=queued")).summary)).toEqual({ queued: 0, sent: 0, dead: 1, oldest_waiting_at: null, lanes: [], live: NO_LIVE, credentials: "sealed" });
    const fresh = await claimInbox();
    const empty = await listQueue(fresh.agent);
    expect({ ...empty, summary: withoutStorage(empty.summary) }).toEqual({
      messages: [], count: 0, has_more: false, next_after: 0, summary: { queued: 0, sent: 0, dead: 0, oldest_waiting_at: null, lanes: [], live: NO_LIVE, credentials: "sealed" }, housekeeping_failures: {},
    });
  });

  it("counts what sending cost in the summary: the messages sent and the rows the pump read for them", async () => {
    const { inbox } = await inboxWithHooks(5);
    const before = (await listQueue(inbox.agent)).summary.storage!;
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 8 });
    await client.messages(5);
    const after = (await listQueue(inbox.agent)).summary.storage!;
    expect(after.messages_sent - before.messages_sent).toBe(5);
    expect(after.pump_rows_read).toBeGreaterThan(before.pump_rows_read);
    expect(after.rows_read).toBeGreaterThanOrEqual(after.pump_rows_read);
    expect(after.rows_written).toBeGreaterThan(0);
    client.close();
  });

  it("pages with after and limit, saying has_more and next_after", async () => {
    const { inbox, sent } = await inboxWithHooks(5);
    const [a, b, c, d, e] = ids(sent) as [number, number, number, number, number];
    expect(await listQueue(inbox.agent, "limit=2")).toMatchObject({ count: 2, has_more: true, next_after: b });
    expect(ids((await listQueue(inbox.agent, `after=${b}&limit=2`)).messages)).toEqual([c, d]);
    const last = await listQueue(inbox.agent, `after=${d}&limit=2`);
    expect(last).toMatchObject({ count: 1, has_more: false, next_after: e });
    expect(await listQueue(inbox.agent, `after=${e}`)).toMatchObject({ messages: [], has_more: false, next_after: e });
    expect(ids((await listQueue(inbox.agent, "limit=1")).messages)).toEqual([a]);
  });

  it("pages a filtered state: has_more counts only messages of that state", async () => {
    const { inbox, sent } = await inboxWithHooks(5);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 5 });
    await client.messages(5);
    await rejected(client, sent[1]!.id);
    await rejected(client, sent[3]!.id);
    expect(await listQueue(inbox.agent, "state=dead&limit=1")).toMatchObject({ count: 1, has_more: true, next_after: sent[1]!.id });
    expect(await listQueue(inbox.agent, `state=dead&limit=1&after=${sent[1]!.id}`)).toMatchObject({ count: 1, has_more: false, next_after: sent[3]!.id });
    const sentPage = await listQueue(inbox.agent, `state=sent&limit=2&after=${sent[0]!.id}`);
    expect(ids(sentPage.messages)).toEqual([sent[2]!.id, sent[4]!.id]);
    expect(sentPage.has_more).toBe(false);
  });

  it.each(["state=waiting", "limit=0", "limit=201", "after=-1"])("refuses %s with 400 invalid_query", async (query) => {
    const inbox = await claimInbox();
    const res = await signedFetch(inbox.agent, "GET", `${queuePath(inbox)}?${query}`);
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("invalid_query");
  });
});

describe("showing one message", () => {
  it("returns a UTF-8 body as text and other bytes as base64", async () => {
    const inbox = await claimInbox();
    const text = await accepted(await postHook(inbox, "agentgram_inbox/wake", '{"text":"héllo"}'));
    const bytes = new Uint8Array([0xff, 0x00, 0x80, 0x61]);
    const binary = await accepted(await postHook(inbox, "agentgram_inbox/agent", bytes, { "content-type": "application/octet-stream" }));
    expect(await showMessage(inbox.agent, text)).toMatchObject({
      body: '{"text":"héllo"}', encoding: "utf8", message: { id: text, state: "queued", subpath: "agentgram_inbox/wake", size: 17 },
    });
    expect(await showMessage(inbox.agent, binary)).toMatchObject({
      body: toBase64(bytes), encoding: "base64", message: { id: binary, content_type: "application/octet-stream", size: 4 },
    });
  });

  it("names an envelope's sender, msg_id and type", async () => {
    const inbox = await claimInbox();
    const sender = await registeredAgent();
    const sent = await sendEnvelope(inbox, sender, "hi");
    const shown = await showMessage(inbox.agent, sent.id);
    const envelope = JSON.parse(sent.body) as { msg_id: string };
    expect(shown.message).toMatchObject({ kind: "envelope", sender: sender.id, msg_id: envelope.msg_id, type: "message" });
    expect(shown.body).toBe(sent.body);
  });

  it("answers 404 message_not_found for an unknown id and 400 invalid_message_id for one that is not a positive integer", async () => {
    const inbox = await claimInbox();
    const unknown = await signedFetch(inbox.agent, "GET", queuePath(inbox, "/99"));
    expect([unknown.status, await errorCode(unknown)]).toEqual([404, "message_not_found"]);
    for (const [method, rest] of [["GET", "/abc"], ["GET", "/0"], ["GET", "/1.5"], ["POST", "/abc/replay"], ["DELETE", "/-1"]] as const) {
      const res = await signedFetch(inbox.agent, method, queuePath(inbox, rest));
      expect([method, rest, res.status, await errorCode(res)]).toEqual([method, rest, 400, "invalid_message_id"]);
    }
  });

  // Number() reads "0x1", "1e0" and " 1" as 1, so a path that is not an id named message 1.
  it("regression: only decimal digits name a message: 0x1, 1e0 and ' 1' are 400, not message 1", async () => {
    const inbox = await claimInbox();
    await accepted(await postHook(inbox, "agentgram_inbox/agent", "{}"));
    for (const rest of ["/0x1", "/1e0", "/%201"]) {
      const res = await signedFetch(inbox.agent, "GET", queuePath(inbox, rest));
      expect([rest, res.status]).toEqual([rest, 400]);
      await res.text();
    }
  });
});

describe("replay", () => {
  it("re-queues a dead message under a new id, keeping its attempts, and sends it to the connected agent", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 2 });
    await client.messages(2);
    await rejected(client, sent[0]!.id, { attempts: 3 });
    client.ack(sent[1]!.id);
    await client.sync();
    const res = await signedFetch(inbox.agent, "POST", queuePath(inbox, `/${sent[0]!.id}/replay`));
    const answer = (await res.json()) as { replayed: number; id: number; state: string };
    expect(res.status).toBe(200);
    expect(answer).toEqual({ replayed: sent[0]!.id, id: sent[1]!.id + 1, state: "queued" });
    const [again] = await client.messages(1);
    expect(again).toMatchObject({ ...sent[0]!, id: answer.id });
    expect((await showMessage(inbox.agent, answer.id)).message).toMatchObject({ state: "sent", replay_of: sent[0]!.id, attempts: 3, reason: null, dead_at: null });
    const old = await signedFetch(inbox.agent, "GET", queuePath(inbox, `/${sent[0]!.id}`));
    expect([old.status, await errorCode(old)]).toEqual([404, "message_not_found"]);
    client.ack(answer.id);
    await client.sync();
    expect((await listQueue(inbox.agent)).messages).toEqual([]);
  });

  it("a replayed message refused again: the shelf adds its attempts to those carried over (issue 24)", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 2 });
    await client.messages(1);
    await rejected(client, sent[0]!.id, { attempts: 3 });
    const answer = (await (await signedFetch(inbox.agent, "POST", queuePath(inbox, `/${sent[0]!.id}/replay`))).json()) as { id: number };
    await client.messages(1);
    await rejected(client, answer.id, { status: 400, attempts: 2 });
    expect((await showMessage(inbox.agent, answer.id)).message).toMatchObject({ state: "dead", attempts: 5, last_status: 400 });
  });

  it("refuses a message that is not dead (409 not_dead) and an unknown one (404)", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const live = await signedFetch(inbox.agent, "POST", queuePath(inbox, `/${sent[0]!.id}/replay`));
    expect([live.status, await errorCode(live)]).toEqual([409, "not_dead"]);
    const unknown = await signedFetch(inbox.agent, "POST", queuePath(inbox, "/42/replay"));
    expect([unknown.status, await errorCode(unknown)]).toEqual([404, "message_not_found"]);
    expect((await listQueue(inbox.agent)).summary).toMatchObject({ queued: 1, dead: 0 });
  });

  it("a signed replay or drop request is single-use: sent again it is 409 replayed_request", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(2);
    await rejected(client, sent[0]!.id);
    // Sent messages are not dropped (409 in_flight): the agent lets go of the other one first.
    client.close();
    await client.closeEvent();
    for (const [method, path] of [["POST", queuePath(inbox, `/${sent[0]!.id}/replay`)], ["DELETE", queuePath(inbox, `/${sent[1]!.id}`)]] as const) {
      const headers = await signedRequestHeaders(inbox.agent.publicKey, method, path, new Uint8Array(0), (m) => inbox.agent.sign(m));
      const first = await relayFetch(path, { method, headers });
      expect([method, first.status]).toEqual([method, 200]);
      await first.json();
      const second = await relayFetch(path, { method, headers });
      expect([method, second.status, await errorCode(second)]).toEqual([method, 409, "replayed_request"]);
    }
    // The replay happened once: one new message, the dropped one gone.
    expect((await listQueue(inbox.agent)).messages.map((m) => m.replay_of)).toEqual([sent[0]!.id]);
  });
});

describe("drop", () => {
  it("deletes a queued or dead message and says which state it was in", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    await client.messages(1);
    await rejected(client, sent[0]!.id);
    await client.messages(1);
    await client.sync();
    await client.expectQuiet();
    client.close();
    await client.closeEvent();
    const dead = await signedFetch(inbox.agent, "DELETE", queuePath(inbox, `/${sent[0]!.id}`));
    expect(await dead.json()).toEqual({ dropped: sent[0]!.id, was: "dead" });
    const queued = await signedFetch(inbox.agent, "DELETE", queuePath(inbox, `/${sent[1]!.id}`));
    expect(await queued.json()).toEqual({ dropped: sent[1]!.id, was: "queued" });
    const again = await signedFetch(inbox.agent, "DELETE", queuePath(inbox, `/${sent[1]!.id}`));
    expect([again.status, await errorCode(again)]).toEqual([404, "message_not_found"]);
    expect(withoutStorage((await listQueue(inbox.agent)).summary)).toEqual({ queued: 0, sent: 0, dead: 0, oldest_waiting_at: null, lanes: [], live: NO_LIVE, credentials: "sealed" });
  });

  it("regression: a message the connected agent is delivering is not dropped but refused 409 in_flight (it answered dropped while the agent kept posting it)", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    await client.messages(1);
    const refused = await signedFetch(inbox.agent, "DELETE", queuePath(inbox, `/${sent[0]!.id}`));
    expect(refused.status).toBe(409);
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("in_flight");
    expect(error.message).toMatch(/wait/i);
    // Nothing changed: it is still the agent's, and its ack is taken as usual.
    expect((await listQueue(inbox.agent)).messages.map((m) => [m.id, m.state])).toEqual([[sent[0]!.id, "sent"], [sent[1]!.id, "queued"]]);
    client.ack(sent[0]!.id);
    expect(ids(await client.messages(1))).toEqual([sent[1]!.id]);

    // Once the agent has let go of it (here: disconnected), it is queued and can be dropped.
    client.close();
    await client.closeEvent();
    const dropped = await signedFetch(inbox.agent, "DELETE", queuePath(inbox, `/${sent[1]!.id}`));
    expect(await dropped.json()).toEqual({ dropped: sent[1]!.id, was: "queued" });
  });

  it("a message the agent rejected is dead and can be dropped while the agent stays connected", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    await client.messages(1);
    await rejected(client, sent[0]!.id);
    const res = await signedFetch(inbox.agent, "DELETE", queuePath(inbox, `/${sent[0]!.id}`));
    expect(await res.json()).toEqual({ dropped: sent[0]!.id, was: "dead" });
  });
});

describe("who may use the queue API", () => {
  it("refuses unsigned requests (401) and keys that are not the inbox's (403), changing nothing", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const stranger = newAgent();
    for (const [method, rest] of [["GET", ""], ["GET", `/${sent[0]!.id}`], ["POST", `/${sent[0]!.id}/replay`], ["DELETE", `/${sent[0]!.id}`]] as const) {
      const unsigned = await relayFetch(queuePath(inbox, rest), { method });
      expect([method, rest, unsigned.status, await errorCode(unsigned)]).toEqual([method, rest, 401, "missing_request_signature"]);
      const foreign = await signedFetch(inbox.agent, method, queuePath(inbox, rest), undefined, stranger);
      expect([method, rest, foreign.status, await errorCode(foreign)]).toEqual([method, rest, 403, "key_not_authorised"]);
    }
    expect((await listQueue(inbox.agent)).summary).toMatchObject({ queued: 1 });
  });

  it("answers 404 inbox_not_claimed for an inbox nobody claimed", async () => {
    const agent = newAgent();
    const res = await signedFetch(agent, "GET", `/inbox/${agent.id}/queue`);
    expect([res.status, await errorCode(res)]).toEqual([404, "inbox_not_claimed"]);
  });
});
