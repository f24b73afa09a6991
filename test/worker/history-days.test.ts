// History's day tables after their day closed (worker/storage/history-store.ts): a dead message whose shelf
// ends later goes into the (closed, counted) table of the day it died, and that day's totals count it — the
// summary's kept count, what gives way to the budget and the floor a cursor's gap is told from; and the
// summary's count of the open day is read once per object life, not on every GET …/queue (the inspector asks
// every 5 s), then kept in step by acks, drops and live entries. A long-poll whose scan stopped at its bound
// (worker/storage/history-scan.ts) answers with the cursor to go on from rather than waiting for new mail.
// A repeat is recognised for its whole dedup window whatever became of its history day (dedup-days.ts).
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DAY_MS, dayOf, dayStartMs } from "../../worker/storage/history-store.ts";
import { claimInbox, envelopeFrom, listQueue, poll, postEnvelope, postHook, registeredAgent, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { HISTORY_SCAN_IDS } from "../../protocol/index.ts";
import type { HistoryPage } from "../../protocol/index.ts";
import { stubOf } from "../support/workerd/socket-fixtures.ts";

/** Posts `n` hook bodies and has the agent acknowledge them: kept in today's history. */
async function deliver(inbox: ClaimedInbox, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(((await (await postHook(inbox, "agentgram_inbox/agent", `{"i":${i}}`)).json()) as { id: number }).id);
  await poll(inbox.agent, `after=${ids[ids.length - 1]}&ack=true`);
  return ids;
}

/** The rows the inbox read for one GET …/queue, and the kept count it gave. */
async function summaryCost(inbox: ClaimedInbox): Promise<{ read: number; kept: number }> {
  const read = () => runInDurableObject(stubOf(inbox), (instance) => instance.store.rowsRead);
  const before = await read();
  const kept = (await listQueue(inbox.agent)).summary.history!.kept;
  return { read: (await read()) - before, kept };
}

describe("history's open day in the queue summary", () => {
  it("GET …/queue reads as many rows with 80 kept today as with 40, and its count follows acks and drops", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 1000 });
    await deliver(inbox, 40);
    await summaryCost(inbox);
    const with40 = await summaryCost(inbox);
    const ids = await deliver(inbox, 40);
    const with80 = await summaryCost(inbox);
    expect(with40.kept).toBe(40);
    expect(with80.kept).toBe(80);
    expect(with80.read).toBe(with40.read);
    const res = await signedFetch(inbox.agent, "DELETE", `/inbox/${inbox.agent.id}/queue/${ids[0]}`);
    expect(res.status).toBe(200);
    await res.json();
    expect((await summaryCost(inbox)).kept).toBe(79);
  });
});

describe("history's closed days", () => {
  it("a dead message moved into a day already counted is counted there too", async () => {
    const inbox = await claimInbox();
    const kept = (await (await postHook(inbox, "agentgram_inbox/agent", '{"a":1}')).json()) as { id: number };
    await poll(inbox.agent, `after=${kept.id}&ack=true`);
    const dead = (await (await postHook(inbox, "agentgram_inbox/agent", '{"b":2}')).json()) as { id: number };
    const result = await runInDurableObject(stubOf(inbox), (instance, state) => {
      const { store } = instance;
      const day = store.history.dayList()[0]!;
      const start = dayStartMs(day);
      // Died on the day of the kept message, on the shelf until an hour after that day closed.
      state.storage.sql.exec(`UPDATE messages SET state = 'dead', reason = 'x', dead_at = ?, expires_at = ? WHERE seq = ?`, start + 1, start + DAY_MS + 3_600_000, dead.id);
      const keep = () => store.keepFloor();
      store.history.maintain(start + DAY_MS + 60_000, store.retentionMs, Number.MAX_SAFE_INTEGER, keep);
      const countedBefore = store.history.keptCount();
      store.expireMessages(start + DAY_MS + 3_600_000, start + 30 * DAY_MS, null);
      store.history.maintain(start + DAY_MS + 3_600_001, store.retentionMs, Number.MAX_SAFE_INTEGER, keep);
      const countedAfter = store.history.keptCount();
      // Over the budget: the closed day gives way with every message it holds, and the floor passes both.
      const drops = store.history.maintain(start + DAY_MS + 3_600_002, store.retentionMs, 0, keep);
      return { countedBefore, countedAfter, gaveWay: drops.gaveWay, floor: store.history.floor() };
    });
    expect(result).toEqual({ countedBefore: 1, countedAfter: 2, gaveWay: 2, floor: dead.id });
  });
});

describe("a history long-poll over more than one scan's bound", () => {
  it("answers at once with the cursor past what it looked at, instead of holding the request while more is stored", async () => {
    const inbox = await claimInbox();
    const { epoch, ids } = await runInDurableObject(stubOf(inbox), (instance) => {
      const now = Date.now();
      const body = new TextEncoder().encode('{"plain":1}');
      const ids: number[] = [];
      for (let i = 0; i <= HISTORY_SCAN_IDS; i++) {
        ids.push(instance.store.insertMessage({ kind: "hook", subpath: null, content_type: "application/json", body, received_at: now, expires_at: now + 3_600_000, sender: null, msg_id: null, env_type: null }));
      }
      return { epoch: instance.store.epoch(), ids };
    });
    // Nothing matches in the first bound; the last stored message lies past it. The answer says where to go on.
    const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/history?search=needle&wait=60&cursor=${epoch}.0`);
    const page = (await res.json()) as HistoryPage;
    expect(page.messages).toEqual([]);
    expect(page.scanned).toBe(HISTORY_SCAN_IDS);
    expect(page.next_cursor).toBe(`${epoch}.${ids[HISTORY_SCAN_IDS - 1]}`);
  });
});

describe("dedup windows and history days", () => {
  it("an envelope's repeat is answered as one until its window's day is over, after its history day gave way", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const envelope = await envelopeFrom(alice, inbox.agent.id);
    const first = (await (await postEnvelope(envelope)).json()) as { id: number };
    await poll(inbox.agent, `after=${first.id}&ack=true`);
    const until = await runInDurableObject(stubOf(inbox), (instance) => {
      const { store } = instance;
      // A day later, just before the window ends: history's day (closed) gives way to a budget of 0.
      const at = Date.now() + DAY_MS - 1000;
      const drops = store.history.maintain(at, store.retentionMs, 0, () => store.keepFloor());
      store.sweepExpiredRecords(at);
      return { gaveWay: drops.gaveWay, left: store.history.dayList().length };
    });
    expect(until.gaveWay).toBe(1);
    expect(until.left).toBe(0);
    const again = (await (await postEnvelope(envelope)).json()) as { id: number; duplicate?: boolean };
    expect([again.id, again.duplicate]).toEqual([first.id, true]);
    // At the end of the UTC day in which the window (max(TTL, 24 h)) ends, the record's table goes.
    const windowEnd = Date.now() + Math.max(envelope.ttl_sec, 86_400) * 1000;
    await runInDurableObject(stubOf(inbox), (instance) => instance.store.sweepExpiredRecords(dayStartMs(dayOf(windowEnd)) + DAY_MS));
    const later = (await (await postEnvelope(envelope)).json()) as { id: number; duplicate?: boolean };
    expect(later.duplicate).toBeUndefined();
    expect(later.id).toBeGreaterThan(first.id);
  });
});
