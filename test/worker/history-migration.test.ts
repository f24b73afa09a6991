// An inbox stored under schema 9 (before history: dedup records in the one `dedup` table, no history or
// dedup day tables, no epoch) migrates to schema 11 (worker/storage/schema.ts versions 10 and 11): its
// queued messages are still delivered and, once acknowledged, kept; its old dedup records still answer
// repeats until they expire and are swept as before (worker/storage/dedup-days.ts, inbox-records.ts).
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Envelope, HistoryPage } from "../../protocol/index.ts";
import { claimInbox, envelopeFrom, poll, postEnvelope, postHook, registeredAgent, signedFetch } from "../support/workerd/agents.ts";

/** Turns an inbox's storage back into what schema 9 left: dedup records in `dedup`, no tables of versions 10 and 11. */
function backToSchema9(sql: SqlStorage): void {
  const days = sql.exec(`SELECT day FROM dedup_days`).toArray().map((row) => `d_${String(row.day)}`);
  for (const table of days) {
    sql.exec(`INSERT INTO dedup SELECT sender, msg_id, fingerprint, answer, expires_at, relay_ack, acks_through FROM ${table}`);
    sql.exec(`DROP TABLE ${table}`);
  }
  for (const row of sql.exec(`SELECT day FROM history_days`).toArray()) sql.exec(`DROP TABLE h_${String(row.day)}`);
  sql.exec(`DROP TABLE dedup_days`);
  sql.exec(`DROP TABLE history_days`);
  sql.exec(`DELETE FROM meta WHERE key = 'epoch'`);
  sql.exec(`UPDATE meta SET value = '9' WHERE key = 'schema_version'`);
}

describe("an inbox stored under schema 9", () => {
  it("migrates: old dedup records still answer repeats, queued messages are delivered and kept, and the sweep ends old records", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const envelope = await envelopeFrom(alice, inbox.agent.id);
    const first = (await (await postEnvelope(envelope)).json()) as { id: number; ack: Envelope };
    const hook = (await (await postHook(inbox, "agentgram_inbox/agent", '{"old":1}')).json()) as { id: number };
    const stub = env.INBOX.getByName(inbox.agent.id);
    await runInDurableObject(stub, (_i, state) => backToSchema9(state.storage.sql));
    await evictDurableObject(stub);

    const again = (await (await postEnvelope(envelope)).json()) as { id: number; duplicate: boolean };
    expect(again.duplicate).toBe(true);
    expect(again.id).toBe(first.id);
    const migrated = await runInDurableObject(stub, (_i, state) => ({
      version: state.storage.sql.exec(`SELECT value FROM meta WHERE key = 'schema_version'`).one().value,
      old: state.storage.sql.exec(`SELECT count(*) AS n FROM dedup`).one().n,
      epoch: state.storage.sql.exec(`SELECT count(*) AS n FROM meta WHERE key = 'epoch'`).one().n,
    }));
    expect(migrated).toEqual({ version: "11", old: 1, epoch: 1 });

    const { messages } = await poll(inbox.agent);
    expect(messages.map((m) => m.id)).toEqual([first.id, hook.id]);
    await poll(inbox.agent, `after=${hook.id}&ack=true`);
    const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/history?state=delivered`);
    const page = (await res.json()) as HistoryPage;
    expect(page.messages.map((m) => [m.id, m.state])).toEqual([[first.id, "delivered"], [hook.id, "delivered"]]);
    const next = (await (await postHook(inbox, "agentgram_inbox/agent", "{}")).json()) as { id: number };
    expect(next.id).toBe(hook.id + 1);

    // The old record is swept when its window ends, as before; until then it still answers.
    const swept = await runInDurableObject(stub, (instance, state) => {
      const expiresAt = Number(state.storage.sql.exec(`SELECT expires_at FROM dedup`).one().expires_at);
      instance.store.sweepExpiredRecords(expiresAt - 1);
      const before = instance.store.findDuplicate(alice.id, envelope.msg_id) !== null;
      instance.store.sweepExpiredRecords(expiresAt);
      return { before, after: instance.store.findDuplicate(alice.id, envelope.msg_id) !== null };
    });
    expect(swept).toEqual({ before: true, after: false });
  });
});
