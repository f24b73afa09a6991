// Acks owed to sibling inboxes (worker/intake/sibling-receipts.ts): a lone ack is in the sender's inbox when
// the 202 comes; acks closer together than the batching window are owed (marked in their dedup
// records) and handed over together shortly after, each exactly once and in order, also across an
// eviction of the receiving object.
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { importSigningKey } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import type { InboxConfig } from "../../worker/inbox-config.ts";
import { signAck } from "../../worker/intake/receipts.ts";
import { ACK_BATCH_WINDOW_MS } from "../../worker/intake/sibling-receipts.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { claimInbox, envelopeFrom, poll, postEnvelope } from "../support/workerd/agents.ts";
import { onDedupTables } from "../support/workerd/dedup.ts";

/** The acks waiting in `inbox`, oldest first, as the msg_ids they answer. */
async function acksIn(inbox: ClaimedInbox): Promise<string[]> {
  const { messages } = await poll(inbox.agent, "ack=false&limit=100");
  return messages.map((m) => JSON.parse(m.body) as Envelope).filter((e) => e.type === "ack").map((e) => e.reply_to ?? "");
}

/** How many of `inbox`'s dedup records mark their ack as owed to a sibling. */
const owedMarks = (inbox: ClaimedInbox) =>
  runInDurableObject(env.INBOX.getByName(inbox.agent.id), (_i, state) => onDedupTables(state.storage.sql, (t) => `SELECT count(*) AS n FROM ${t} WHERE relay_ack IS NOT NULL`).reduce((sum, row) => sum + Number(row.n), 0));

/** Posts `count` messages from `sender` to `receiver` one after the other, as fast as they are answered. */
async function postSeveral(sender: ClaimedInbox, receiver: ClaimedInbox, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const envelope = await envelopeFrom(sender.agent, receiver.agent.id, { payload: { text: `message ${i}` } });
    const res = await postEnvelope(envelope);
    // Read the answer: an unread response body is an in-flight request, and eviction waits for those.
    expect([res.status, ((await res.json()) as { queued?: boolean }).queued]).toEqual([202, true]);
    ids.push(envelope.msg_id);
  }
  return ids;
}

// The timeout only says the acks never went (owed ones go within a batching window, 250 ms, of the first).
const settles = { timeout: 15_000, interval: 20 };

describe("acks owed to sibling inboxes", () => {
  it("hands over acks that come close together once each, in order, shortly after their 202s", async () => {
    const bob = await claimInbox();
    const alice = await claimInbox();
    const carol = await claimInbox();
    const fromAlice = await postSeveral(alice, bob, 6);
    const fromCarol = await postSeveral(carol, bob, 3);
    // The first ack went at once; the ones right after it were owed (the dedup records say so).
    expect(await owedMarks(bob)).toBeGreaterThan(0);
    await vi.waitFor(async () => expect(await acksIn(alice)).toEqual(fromAlice), settles);
    await vi.waitFor(async () => expect(await acksIn(carol)).toEqual(fromCarol), settles);
    // Nothing more comes later: each ack was handed over once.
    await new Promise((resolve) => setTimeout(resolve, 3 * ACK_BATCH_WINDOW_MS));
    await runDurableObjectAlarm(env.INBOX.getByName(bob.agent.id));
    expect(await acksIn(alice)).toEqual(fromAlice);
    expect(await acksIn(carol)).toEqual(fromCarol);
  });

  it("hands over what was owed after the receiving object was evicted, without repeating what had arrived", async () => {
    const bob = await claimInbox();
    const alice = await claimInbox();
    const sent = await postSeveral(alice, bob, 5);
    // Gone before its window's timer: what it owed is in its dedup records, and the alarm is set.
    await evictDurableObject(env.INBOX.getByName(bob.agent.id));
    expect(await runDurableObjectAlarm(env.INBOX.getByName(bob.agent.id))).toBe(true);
    await vi.waitFor(async () => expect(await acksIn(alice)).toEqual(sent), settles);
    // A second life and a second alarm find nothing more to hand over.
    await evictDurableObject(env.INBOX.getByName(bob.agent.id));
    await runDurableObjectAlarm(env.INBOX.getByName(bob.agent.id));
    await new Promise((resolve) => setTimeout(resolve, 3 * ACK_BATCH_WINDOW_MS));
    expect(await acksIn(alice)).toEqual(sent);
  });

  it("after an eviction, hands over an ack a previous life recorded as owed but never handed over, and only once one it had", async () => {
    const bob = await claimInbox();
    const alice = await claimInbox();
    const [first] = await postSeveral(alice, bob, 1);
    // What a previous life leaves when it vanishes between writing a message and handing its ack over:
    // the dedup record, marked owed, whose answer carries the signed ack. The first message's record is
    // marked owed too, as if the life vanished before noting that its ack had arrived.
    const original = await envelopeFrom(alice.agent, bob.agent.id, { payload: { text: "owed" } });
    const config = { agent_id: bob.agent.id, receipt_key: { key_id: bob.agent.receiptKeyId } } as InboxConfig;
    const ack = await signAck(config, await importSigningKey(bob.agent.receiptSeed), original, Date.now());
    await runInDurableObject(env.INBOX.getByName(bob.agent.id), (_i, state) => {
      const seq = Number(state.storage.sql.exec(`SELECT max(seq) AS m FROM messages`).one().m);
      state.storage.sql.exec(
        `INSERT INTO dedup (sender, msg_id, fingerprint, answer, expires_at, relay_ack, acks_through) VALUES (?, ?, '', ?, ?, ?, NULL)`,
        alice.agent.id, original.msg_id, JSON.stringify({ queued: true, id: seq, ack }), Date.now() + 86_400_000, seq,
      );
      onDedupTables(state.storage.sql, (t) => `UPDATE ${t} SET relay_ack = 1, acks_through = NULL WHERE msg_id = ?`, first!);
    });
    await evictDurableObject(env.INBOX.getByName(bob.agent.id));
    await runDurableObjectAlarm(env.INBOX.getByName(bob.agent.id));
    await vi.waitFor(async () => expect(await acksIn(alice)).toEqual([first, original.msg_id]), settles);
  });

  it("answers a retried message with its first ack while that ack is still owed, and owes it once", async () => {
    const bob = await claimInbox();
    const alice = await claimInbox();
    await postSeveral(alice, bob, 1);
    const envelope = await envelopeFrom(alice.agent, bob.agent.id, { payload: { text: "retried" } });
    const first = (await (await postEnvelope(envelope)).json()) as { ack: Envelope };
    const again = (await (await postEnvelope(envelope)).json()) as { ack: Envelope; duplicate?: boolean };
    expect(again.duplicate).toBe(true);
    expect(again.ack).toEqual(first.ack);
    await vi.waitFor(async () => expect((await acksIn(alice)).filter((id) => id === envelope.msg_id)).toHaveLength(1), settles);
  });
});
