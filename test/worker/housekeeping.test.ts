// The alarm's jobs (worker/housekeeping.ts): one that fails is logged by its name and counted where the
// owner sees it, and never stops the others; receipts queued in the outbox by a relay from before the
// outbox's target was typed (schema 6) are still delivered after the deploy.
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { importSigningKey } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { runHousekeeping } from "../../worker/housekeeping.ts";
import type { HousekeepingJob } from "../../worker/housekeeping.ts";
import type { InboxConfig } from "../../worker/inbox-config.ts";
import { signAck } from "../../worker/intake/receipts.ts";
import { claimInbox, envelopeFrom, hubReceipts, listQueue, poll, postEnvelope, registeredAgent } from "../support/workerd/agents.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const stub = (agentId: string) => env.INBOX.getByName(agentId);

describe("the alarm's jobs", () => {
  it("runs every job when one fails, logs the failing job by name, counts it, and comes back soon", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const ran: string[] = [];
    const noted: { name: string; error: unknown }[] = [];
    const job = (name: string, next: number | null, fails = false): HousekeepingJob => ({
      name,
      run: async () => {
        ran.push(name);
        if (fails) throw new Error(`${name} broke`);
        return next;
      },
    });
    const nowMs = 1_000_000;
    const next = await runHousekeeping([job("first", nowMs + 90_000), job("broken", nowMs + 1, true), job("last", null)], nowMs, {
      note: (name, error) => void noted.push({ name, error }),
    });
    expect(ran).toEqual(["first", "broken", "last"]);
    expect(noted.map((n) => [n.name, (n.error as Error).message])).toEqual([["broken", "broken broke"]]);
    expect(logged.mock.calls.map((call) => String(call[0]))).toEqual([expect.stringContaining('"broken"')]);
    // Sooner than the healthy job asked for: the failed one is looked at again in 30 s.
    expect(next).toBe(nowMs + 30_000);
  });

  it("shows a job that failed in the alarm in the owner's queue view, and the jobs after it still ran", async () => {
    const inbox = await claimInbox();
    const sender = await registeredAgent();
    const res = await postEnvelope(await envelopeFrom(sender, inbox.agent.id));
    expect(res.status).toBe(202);
    await res.json();
    // A fresh life whose receipt key no longer opens (the operator changed RECEIPT_KEY_SECRET): the
    // expiry job cannot sign the sender's TTL_EXPIRED. An expired nonce waits for the sweep after it.
    await evictDurableObject(stub(inbox.agent.id));
    await runInDurableObject(stub(inbox.agent.id), (instance, state) => {
      const config = instance.store.loadConfig()!;
      instance.store.saveConfig({ ...config, receipt_key: { ...config.receipt_key, seed: "enc:v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" } });
      instance.config = instance.store.loadConfig();
      state.storage.sql.exec(`UPDATE messages SET expires_at = 1`);
      state.storage.sql.exec(`INSERT INTO nonces (nonce, expires_at) VALUES ('stale-nonce', 1)`);
    });
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(await runDurableObjectAlarm(stub(inbox.agent.id))).toBe(true);
    expect(logged.mock.calls.some((call) => String(call[0]).includes('"expire"'))).toBe(true);
    const listing = await listQueue(inbox.agent);
    expect(listing.housekeeping_failures).toEqual({ expire: { count: 1, last_at: expect.any(Number), last_error: expect.stringContaining("receipt_key_unavailable") } });
    expect(listing.summary.dead).toBe(1);
    const stale = await runInDurableObject(stub(inbox.agent.id), (_i, state) => Number(state.storage.sql.exec(`SELECT count(*) AS n FROM nonces WHERE nonce = 'stale-nonce'`).one().n));
    expect(stale).toBe(0);
  });

  it("delivers receipts a relay from before schema 6 queued as 'relay:…' and 'hub:…' targets", async () => {
    const inbox = await claimInbox();
    const sibling = await claimInbox();
    const config = { agent_id: inbox.agent.id, receipt_key: { key_id: inbox.agent.receiptKeyId } } as InboxConfig;
    const sign = await importSigningKey(inbox.agent.receiptSeed);
    const toSibling = await signAck(config, sign, await envelopeFrom(sibling.agent, inbox.agent.id), Date.now());
    const toHub = await signAck(config, sign, await envelopeFrom(await registeredAgent(), inbox.agent.id), Date.now());
    await runInDurableObject(stub(inbox.agent.id), (_i, state) => {
      const sql = state.storage.sql;
      // Back to schema 5: the outbox without `kind`, each target prefixed, as the older relay wrote them (and no schema 7 columns).
      sql.exec(`ALTER TABLE outbox DROP COLUMN kind`);
      sql.exec(`ALTER TABLE messages DROP COLUMN lane`);
      sql.exec(`ALTER TABLE messages DROP COLUMN restored`);
      sql.exec(`UPDATE meta SET value = '5' WHERE key = 'schema_version'`);
      const row = `INSERT INTO outbox (target, body, attempts, next_at, expires_at) VALUES (?, ?, 0, 0, ?)`;
      sql.exec(row, `relay:${sibling.agent.id}`, JSON.stringify(toSibling), Date.now() + 3600_000);
      sql.exec(row, `hub:${env.TEST_HUB_URL}`, JSON.stringify(toHub), Date.now() + 3600_000);
    });
    await evictDurableObject(stub(inbox.agent.id));
    expect(await runDurableObjectAlarm(stub(inbox.agent.id))).toBe(true);
    const delivered = (await poll(sibling.agent)).messages.map((m) => JSON.parse(m.body) as Envelope);
    expect(delivered.map((e) => e.msg_id)).toContain(toSibling.msg_id);
    expect((await hubReceipts(inbox.agent.id)).map((e) => e.msg_id)).toContain(toHub.msg_id);
    const left = await runInDurableObject(stub(inbox.agent.id), (o) => o.store.dueOutbox(Number.MAX_SAFE_INTEGER).length);
    expect(left).toBe(0);
  });
});
