// History kept apart from the delivery path (worker/storage/history-store.ts): a socket agent's per-id acks
// move messages into history; sending and acknowledging read as many rows with a large history as with
// none; ids are never handed out again after history's newest day is dropped and the object restarts;
// and a kept message survives an eviction.
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { HistoryPage } from "../../protocol/index.ts";
import { DAY_MS } from "../../worker/storage/history-store.ts";
import { claimInbox, poll, postHook, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { sendHook, stubOf } from "../support/workerd/socket-fixtures.ts";

afterEach(() => closeAllSockets());

async function history(inbox: ClaimedInbox, query = ""): Promise<HistoryPage> {
  const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/history${query ? `?${query}` : ""}`);
  expect(res.status).toBe(200);
  return (await res.json()) as HistoryPage;
}

const rowsRead = (inbox: ClaimedInbox) => runInDurableObject(stubOf(inbox), (instance) => instance.store.rowsRead);

/** Posts `count` hook bodies and has a socket agent take and acknowledge each by id; the rows the inbox read meanwhile. */
async function deliverOverSocket(inbox: ClaimedInbox, count: number): Promise<{ ids: number[]; read: number }> {
  const client = await connect(inbox.agent.id);
  await client.auth(inbox.agent);
  const before = await rowsRead(inbox);
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const { id } = await sendHook(inbox, JSON.stringify({ i }));
    const [frame] = await client.messages(1);
    expect(frame!.id).toBe(id);
    client.ack(id);
    await client.sync();
    ids.push(id);
  }
  return { ids, read: (await rowsRead(inbox)) - before };
}

describe("history off the hot path", () => {
  it("a socket agent's acks move each message into history, in the step that deletes it from the queue", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 1000 });
    const { ids } = await deliverOverSocket(inbox, 3);
    const page = await history(inbox, "state=delivered");
    expect(page.messages.map((m) => m.id)).toEqual(ids);
    const queued = await runInDurableObject(stubOf(inbox), (instance) => instance.store.queueStats().count);
    expect(queued).toBe(0);
  });

  it("sending and acknowledging read no more rows with 300 messages kept than with none", async () => {
    const empty = await claimInbox(undefined, { rate_per_minute: 1000 });
    const full = await claimInbox(undefined, { rate_per_minute: 1000 });
    for (let i = 0; i < 300; i++) await (await postHook(full, "agentgram_inbox/agent", `{"old":${i}}`)).json();
    await poll(full.agent, `after=300&ack=true`);
    expect((await history(full, "limit=1&state=delivered")).messages).toHaveLength(1);
    // Warm both the same way (the first delivery of an object's life builds its lanes).
    await deliverOverSocket(empty, 1);
    closeAllSockets();
    await deliverOverSocket(full, 1);
    closeAllSockets();
    const [withNone, withMany] = [await deliverOverSocket(empty, 5), await deliverOverSocket(full, 5)];
    expect(withMany.read).toBe(withNone.read);
  });

  it("never hands out an id again after history's newest day was dropped and the object restarted", async () => {
    const inbox = await claimInbox(undefined, { limits: { retention_sec: 60 } });
    const { id } = (await (await postHook(inbox, "agentgram_inbox/agent", "{}")).json()) as { id: number };
    await poll(inbox.agent, `after=${id}&ack=true`);
    await runInDurableObject(stubOf(inbox), (instance) => instance.store.history.maintain(Date.now() + 2 * DAY_MS, instance.store.retentionMs, Number.MAX_SAFE_INTEGER, () => instance.store.keepFloor()));
    await evictDurableObject(env.INBOX.getByName(inbox.agent.id));
    const next = (await (await postHook(inbox, "agentgram_inbox/agent", "{}")).json()) as { id: number };
    expect(next.id).toBe(id + 1);
  });

  it("never hands out an id again after the newest kept message was dropped and the object restarted", async () => {
    const inbox = await claimInbox();
    const { id } = (await (await postHook(inbox, "agentgram_inbox/agent", "{}")).json()) as { id: number };
    await poll(inbox.agent, `after=${id}&ack=true`);
    const res = await signedFetch(inbox.agent, "DELETE", `/inbox/${inbox.agent.id}/queue/${id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ dropped: id, was: "delivered" });
    await evictDurableObject(env.INBOX.getByName(inbox.agent.id));
    const next = (await (await postHook(inbox, "agentgram_inbox/agent", "{}")).json()) as { id: number };
    expect(next.id).toBe(id + 1);
  });

  it("a kept message survives an eviction, and so does the newest id it holds", async () => {
    const inbox = await claimInbox();
    const { id } = (await (await postHook(inbox, "agentgram_inbox/agent", '{"kept":1}')).json()) as { id: number };
    await poll(inbox.agent, `after=${id}&ack=true`);
    await evictDurableObject(env.INBOX.getByName(inbox.agent.id));
    expect((await history(inbox)).messages.map((m) => [m.id, m.state])).toEqual([[id, "delivered"]]);
    const next = (await (await postHook(inbox, "agentgram_inbox/agent", "{}")).json()) as { id: number };
    expect(next.id).toBe(id + 1);
  });
});
