// What the inbox writes to SQLite: rows per message (the free plan's scarcest budget), including a
// reject and a replay, the schema version, and ids that are never reused even after the queue drains
// and the object restarts.
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ACK_BATCH_WINDOW_MS } from "../../worker/intake/sibling-receipts.ts";
import { claimInbox, envelopeFrom, newAgent, poll, postEnvelope, postHook, registerAtHub, signedFetch } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { inboxWithHooks } from "../support/workerd/socket-fixtures.ts";

afterEach(() => closeAllSockets());

async function rowsWritten(agentId: string): Promise<number> {
  return runInDurableObject(env.INBOX.getByName(agentId), (inbox) => inbox.store.rowsWritten);
}

describe("storage", () => {
  it("writes few rows per message: envelope 2 in, hook body 1 in, 2 on ack (moved into history, no id-floor write)", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 100 });
    const alice = newAgent();
    await registerAtHub(alice);
    const id = inbox.agent.id;
    // Warm the key cache and create the day's history table, so the measured messages are the steady state.
    await postEnvelope(await envelopeFrom(alice, id));
    const first = await poll(inbox.agent);
    await poll(inbox.agent, `after=${first.messages[0]!.id}&ack=true`);
    let before = await rowsWritten(id);
    await postEnvelope(await envelopeFrom(alice, id));
    const perEnvelope = (await rowsWritten(id)) - before;
    before = await rowsWritten(id);
    await postHook(inbox, "a", "{}");
    const perHook = (await rowsWritten(id)) - before;
    const { messages } = await poll(inbox.agent);
    before = await rowsWritten(id);
    await poll(inbox.agent, `after=${messages[0]!.id}&ack=true`);
    const perAck = (await rowsWritten(id)) - before;
    before = await rowsWritten(id);
    await poll(inbox.agent, `after=${messages[1]!.id}&ack=true`);
    const lastAck = (await rowsWritten(id)) - before;
    expect(perEnvelope).toBe(2);
    expect(perHook).toBe(1);
    expect(perAck).toBe(2);
    // The newest id is kept in history: no id-floor row when the queue drains.
    expect(lastAck).toBe(2);
  });

  it("with retention 0 an ack deletes as before history: 1 row out (+1 when the queue drains)", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 100, limits: { retention_sec: 0 } });
    const id = inbox.agent.id;
    await postHook(inbox, "a", "{}");
    await postHook(inbox, "a", "{}");
    const { messages } = await poll(inbox.agent);
    let before = await rowsWritten(id);
    await poll(inbox.agent, `after=${messages[0]!.id}&ack=true`);
    const perAck = (await rowsWritten(id)) - before;
    before = await rowsWritten(id);
    await poll(inbox.agent, `after=${messages[1]!.id}&ack=true`);
    const lastAck = (await rowsWritten(id)) - before;
    expect([perAck, lastAck]).toEqual([1, 2]);
  });

  it("a message from a sender with an inbox here writes 2 rows in each inbox, whether its ack goes at once or is owed", async () => {
    const bob = await claimInbox(undefined, { rate_per_minute: 100 });
    const alice = await claimInbox();
    const post = async () => {
      const res = await postEnvelope(await envelopeFrom(alice.agent, bob.agent.id));
      expect(res.status).toBe(202);
      await res.json();
    };
    const both = async () => [await rowsWritten(bob.agent.id), await rowsWritten(alice.agent.id)];
    // Warm the key cache, then let the batching window pass: the next ack goes at once.
    await post();
    await new Promise((resolve) => setTimeout(resolve, 2 * ACK_BATCH_WINDOW_MS));
    let before = await both();
    await post();
    const atOnce = (await both()).map((n, i) => n - before[i]!);
    // Right after it, the next ack is owed: the message's dedup record notes it, no row more.
    before = await both();
    await post();
    const marked = await runInDurableObject(env.INBOX.getByName(bob.agent.id), (_i, state) => state.storage.sql.exec(`SELECT count(*) AS n FROM dedup WHERE relay_ack IS NOT NULL`).one().n);
    expect(marked).toBe(1);
    await vi.waitFor(async () => expect((await poll(alice.agent)).count).toBe(3), { timeout: 5000, interval: 20 });
    const owed = (await both()).map((n, i) => n - before[i]!);
    // Receiver: the message and its dedup record. Sender: the ack and the ack's dedup record.
    expect(atOnce).toEqual([2, 2]);
    expect(owed).toEqual([2, 2]);
  });

  it("a reject writes 1 row: the message's new state", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const id = inbox.agent.id;
    const client = await connect(id);
    await client.auth(inbox.agent);
    await client.messages(2);
    const before = await rowsWritten(id);
    client.reject(sent[0]!.id, "refused");
    await client.next("rejected");
    await client.sync();
    expect((await rowsWritten(id)) - before).toBe(1);
  });

  it("a replay writes 2 rows (the message under its new id, the old row deleted), and its request 1 more for the nonce", async () => {
    const { inbox, sent } = await inboxWithHooks(2);
    const id = inbox.agent.id;
    const client = await connect(id);
    await client.auth(inbox.agent);
    await client.messages(2);
    for (const message of sent) {
      client.reject(message.id, "refused");
      await client.next("rejected");
    }
    client.close();
    await client.closeEvent();
    const inStore = await runInDurableObject(env.INBOX.getByName(id), (instance) => {
      const before = instance.store.rowsWritten;
      expect(instance.store.replay(sent[0]!.id, Date.now() + 60_000)).not.toBeNull();
      return instance.store.rowsWritten - before;
    });
    const before = await rowsWritten(id);
    const res = await signedFetch(inbox.agent, "POST", `/inbox/${id}/queue/${sent[1]!.id}/replay`);
    expect(res.status).toBe(200);
    await res.json();
    const perRequest = (await rowsWritten(id)) - before;
    expect(inStore).toBe(2);
    // The single-use nonce is what stops a captured replay request from being played again.
    expect(perRequest).toBe(3);
  });

  it("records the schema version", async () => {
    const inbox = await claimInbox();
    const version = await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (_i, state) =>
      state.storage.sql.exec(`SELECT value FROM meta WHERE key = 'schema_version'`).one().value,
    );
    expect(version).toBe("10");
  });

  it("keeps messages and config across a restart of the object", async () => {
    const inbox = await claimInbox();
    // Read the answer: an unread response body is an in-flight request, and eviction waits for those.
    await (await postHook(inbox, "a", '{"kept":true}')).json();
    await evictDurableObject(env.INBOX.getByName(inbox.agent.id));
    expect((await poll(inbox.agent)).messages.map((m) => m.body)).toEqual(['{"kept":true}']);
    expect((await postHook(inbox, "a", "{}")).status).toBe(202);
  });

  it("never reuses an id after the queue drained and the object restarted", async () => {
    const inbox = await claimInbox();
    const first = (await (await postHook(inbox, "a", "{}")).json()) as { id: number };
    const second = (await (await postHook(inbox, "a", "{}")).json()) as { id: number };
    await poll(inbox.agent, `after=${second.id}&ack=true`);
    expect((await poll(inbox.agent)).count).toBe(0);
    await evictDurableObject(env.INBOX.getByName(inbox.agent.id));
    const third = (await (await postHook(inbox, "a", "{}")).json()) as { id: number };
    expect(second.id).toBe(first.id + 1);
    expect(third.id).toBe(second.id + 1);
  });
});
