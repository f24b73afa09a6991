// History (worker/storage/history-store.ts, worker/history/): delivered messages kept for the retention
// window and found by GET …/history's filters, search and cursor; the cursor's gap after history let go
// and after a new epoch; a long-poll for the next message; bulk replay, each once and in order; a kept
// message shown and dropped; dead messages kept past the shelf; days dropped whole at the end of their
// retention (the alarm set for a day's end when its table is opened; a test's shorter period), and the
// oldest giving way to the budget, said in the summary.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { DAY_MS, dayOf, dayStartMs } from "../../worker/storage/history-store.ts";
import { keepHistory } from "../../worker/housekeeping.ts";
import { UTC_DAYS, historyPeriodFrom, periodTableName } from "../../worker/storage/history-period.ts";
import type { HistoryPage, HistoryReplayResult } from "../../protocol/index.ts";
import { claimInbox, envelopeFrom, errorCode, listQueue, newAgent, poll, postEnvelope, postHook, registerAtHub, showMessage, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { stubOf } from "../support/workerd/socket-fixtures.ts";
import { answer, liveAgent, liveSource, nextRequest, sendTo } from "../support/workerd/live.ts";
import { closeAllSockets } from "../support/workerd/socket-client.ts";

async function history(inbox: ClaimedInbox, query = ""): Promise<HistoryPage> {
  const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/history${query ? `?${query}` : ""}`);
  if (res.status !== 200) throw new Error(`history failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as HistoryPage;
}

async function replay(inbox: ClaimedInbox, body: Record<string, unknown>): Promise<HistoryReplayResult> {
  const res = await signedFetch(inbox.agent, "POST", `/inbox/${inbox.agent.id}/history/replay`, body);
  if (res.status !== 200) throw new Error(`replay failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as HistoryReplayResult;
}

/** Posts hook bodies and has the agent acknowledge them all (they are delivered); their ids. */
async function delivered(inbox: ClaimedInbox, bodies: string[], subpath = "agentgram_inbox/agent"): Promise<number[]> {
  const ids: number[] = [];
  for (const body of bodies) {
    const res = await postHook(inbox, subpath, body);
    ids.push(((await res.json()) as { id: number }).id);
  }
  await poll(inbox.agent, `after=${ids[ids.length - 1]}&ack=true`);
  return ids;
}

/** The alarm's history job as it would run at `nowMs` (an injected clock: days end without waiting for them). */
function maintainAt(inbox: ClaimedInbox, nowMs: number, budgetBytes = Number.MAX_SAFE_INTEGER) {
  return runInDurableObject(stubOf(inbox), (instance) => instance.store.history.maintain(nowMs, instance.store.retentionMs, budgetBytes, () => instance.store.keepFloor()));
}

afterEach(() => closeAllSockets());

describe("history", () => {
  it("keeps a delivered message: found by a word of its body, shown with its body, not listed as waiting", async () => {
    const inbox = await claimInbox();
    const [id] = await delivered(inbox, ['{"note":"the Kiwi arrived at dawn"}']);
    const page = await history(inbox, "state=delivered&search=KIWI");
    expect(page.messages.map((m) => [m.id, m.state])).toEqual([[id, "delivered"]]);
    expect(page.messages[0]!.excerpt).toContain("Kiwi arrived");
    expect(page.messages[0]!.delivered_at).toBeGreaterThanOrEqual(page.messages[0]!.received_at);
    expect((await history(inbox, "state=delivered&search=banana")).messages).toEqual([]);
    expect((await listQueue(inbox.agent, "state=all")).messages).toEqual([]);
    const shown = await showMessage(inbox.agent, id!);
    expect([shown.message.state, shown.body]).toEqual(["delivered", '{"note":"the Kiwi arrived at dawn"}']);
    expect((await listQueue(inbox.agent)).summary.history).toMatchObject({ kept: 1, retention_sec: 7 * 24 * 3600 });
  });

  it("pages in id order with a cursor; next_cursor is null once nothing after it is kept", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 100 });
    const ids = await delivered(inbox, ["{}", "{}", "{}", "{}", "{}"]);
    await postHook(inbox, "agentgram_inbox/agent", '{"waiting":true}');
    const seen: number[] = [];
    let page = await history(inbox, "limit=2");
    for (let i = 0; i < 10 && page.next_cursor !== null; i++) {
      seen.push(...page.messages.map((m) => m.id));
      page = await history(inbox, `limit=2&cursor=${encodeURIComponent(page.next_cursor)}`);
    }
    expect(page.next_cursor).toBeNull();
    expect(seen).toEqual([...ids, ids[4]! + 1]);
    expect((await history(inbox, "state=queued")).messages.map((m) => m.id)).toEqual([ids[4]! + 1]);
    const bad = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/history?cursor=nonsense`);
    expect([bad.status, await errorCode(bad)]).toEqual([400, "invalid_query"]);
  });

  it("filters by sender, time, conversation and state", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 100 });
    const alice = newAgent();
    await registerAtHub(alice);
    const before = Date.now();
    await postEnvelope(await envelopeFrom(alice, inbox.agent.id, { payload: { text: "from alice" } }));
    const [hook] = await delivered(inbox, ["{}"], "other/path");
    const fromAlice = await history(inbox, `from=${alice.id}`);
    expect(fromAlice.messages.map((m) => m.sender)).toEqual([alice.id]);
    expect((await history(inbox, `since=${before}&until=${Date.now()}`)).messages).toHaveLength(2);
    expect((await history(inbox, `until=${before - 1}`)).messages).toEqual([]);
    const lane = (await history(inbox, "state=delivered")).messages.find((m) => m.id === hook)!.lane!;
    expect((await history(inbox, `conversation=${encodeURIComponent(lane)}`)).messages.map((m) => m.id)).toEqual([hook]);
    expect((await history(inbox, "search=other/PATH")).messages[0]!.excerpt).toBe("other/path");
  });

  it("a cursor from another epoch, or from before what history let go, says so in gap", async () => {
    const inbox = await claimInbox(undefined, { limits: { retention_sec: 3600 } });
    const [first] = await delivered(inbox, ["{}"]);
    const page = await history(inbox);
    const other = await history(inbox, `cursor=${"0".repeat(16)}.${first}`);
    expect(other.gap?.reason).toBe("epoch");
    expect(other.messages.map((m) => m.id)).toEqual([first]);
    // The day ends and its hour of retention with it: the day table is dropped whole.
    const drops = await maintainAt(inbox, Date.now() + DAY_MS + 3_600_000);
    expect(drops.expired).toBe(1);
    expect(await history(inbox, `cursor=${page.epoch}.0`)).toMatchObject({ gap: { reason: "retention", oldest_kept: null }, messages: [] });
    // Ids are never handed out again.
    const [next] = await delivered(inbox, ["{}"]);
    expect(next).toBe(first! + 1);
  });

  it("wait holds the request until a message arrives after the cursor", async () => {
    const inbox = await claimInbox();
    const [first] = await delivered(inbox, ["{}"]);
    const { epoch } = await history(inbox);
    const waiting = history(inbox, `wait=30&cursor=${epoch}.${first}`);
    const res = await postHook(inbox, "agentgram_inbox/agent", '{"late":true}');
    const { id } = (await res.json()) as { id: number };
    const page = await waiting;
    expect(page.messages.map((m) => m.id)).toEqual([id]);
    // Without a cursor, nothing stored before the request counts; a short wait ends empty.
    const started = Date.now();
    const empty = await history(inbox, "wait=1");
    expect(empty.messages).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("replays delivered messages since a time at once, in order, each once; dry_run only counts", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 100 });
    const since = Date.now();
    const ids = await delivered(inbox, ['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(await replay(inbox, { since, dry_run: true })).toMatchObject({ matched: 3, replayed: 0, ids: [], has_more: false });
    const result = await replay(inbox, { since, state: "delivered" });
    expect(result).toMatchObject({ matched: 3, replayed: 3, skipped_live: 0, has_more: false });
    expect(result.ids.map((r) => r.from)).toEqual(ids);
    const news = result.ids.map((r) => r.to);
    expect(news).toEqual([...news].sort((a, b) => a - b));
    const { messages } = await poll(inbox.agent);
    expect(messages.map((m) => m.body)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    // Once delivered, the copies are kept too, but a replay of their still-kept originals is not replayed again.
    await poll(inbox.agent, `after=${news[2]}&ack=true`);
    const again = await replay(inbox, { since });
    expect(again.ids.map((r) => r.from)).toEqual(ids);
  });

  it("a message history let go of keeps its dedup key until its window ends: a repeat is still a duplicate", async () => {
    const inbox = await claimInbox(undefined, { limits: { retention_sec: 60 } });
    const alice = newAgent();
    await registerAtHub(alice);
    const envelope = await envelopeFrom(alice, inbox.agent.id);
    const first = (await (await postEnvelope(envelope)).json()) as { id: number };
    await poll(inbox.agent, `after=${first.id}&ack=true`);
    // Two minutes into the next UTC day its history day is over, with its minute of retention: dropped.
    // The dedup record's window (at least 24 h from now) is not over.
    const drops = await maintainAt(inbox, dayStartMs(dayOf(Date.now())) + DAY_MS + 120_000);
    expect(drops.expired).toBe(1);
    expect((await history(inbox)).messages).toEqual([]);
    const again = (await (await postEnvelope(envelope)).json()) as { id: number; duplicate?: boolean };
    expect(again).toMatchObject({ id: first.id, duplicate: true });
  });

  it("lists a live request answered at once, marked live, without its query; a bulk replay never replays it", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox, { name: "oauth" });
    const since = Date.now();
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/callback?code=secret-one-time`, { redirect: "manual" });
    answer(agent, (await nextRequest(agent)).rid, 302, [["location", "http://localhost/done"]], "");
    expect((await pending).status).toBe(302);
    const page = await history(inbox);
    expect(page.messages).toMatchObject([{ state: "delivered", live: true, subpath: "/callback", last_status: 302, source: "oauth" }]);
    expect(JSON.stringify(page)).not.toContain("secret-one-time");
    expect(await replay(inbox, { since, state: "all" })).toMatchObject({ matched: 0, replayed: 0, skipped_live: 1 });
  });

  it("drops a kept message", async () => {
    const inbox = await claimInbox();
    const [id] = await delivered(inbox, ["{}"]);
    const res = await signedFetch(inbox.agent, "DELETE", `/inbox/${inbox.agent.id}/queue/${id}`);
    expect(await res.json()).toEqual({ dropped: id, was: "delivered" });
    const gone = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/queue/${id}`);
    expect([gone.status, await errorCode(gone)]).toEqual([404, "message_not_found"]);
  });

  it("keeps a dead message in history once its shelf time is over", async () => {
    const inbox = await claimInbox(undefined, { limits: { dead_ttl_sec: 1 } });
    const res = await postHook(inbox, "agentgram_inbox/agent", "{}");
    const { id } = (await res.json()) as { id: number };
    await runInDurableObject(stubOf(inbox), (instance) => {
      instance.store.expireMessages(Date.now() + 8 * DAY_MS, Date.now(), null);
      instance.store.expireMessages(Date.now() + 8 * DAY_MS + 1, Date.now(), null);
    });
    expect((await listQueue(inbox.agent)).summary.dead).toBe(0);
    expect((await history(inbox, "state=dead")).messages.map((m) => [m.id, m.state])).toEqual([[id, "dead"]]);
  });

  it("retention 0 keeps nothing after delivery", async () => {
    const inbox = await claimInbox(undefined, { limits: { retention_sec: 0 } });
    const [id] = await delivered(inbox, ["{}"]);
    expect((await history(inbox)).messages).toEqual([]);
    const gone = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/queue/${id}`);
    expect(gone.status).toBe(404);
  });

  it("an acknowledgement that opens a day's table sets the alarm for that day's end, however far off the message's TTL", async () => {
    // Without it a kept day outlived its retention until some other alarm came (here: the claim's spent
    // nonce in minutes, the hook's TTL in 30 days). Acknowledged as of yesterday, its day and retention are over.
    const inbox = await claimInbox(undefined, { limits: { hook_ttl_sec: 30 * 24 * 3600, retention_sec: 1 } });
    const { id } = (await (await postHook(inbox, "agentgram_inbox/agent", "{}")).json()) as { id: number };
    await runInDurableObject(stubOf(inbox), (instance) => instance.store.acknowledge({ upTo: id }, Date.now() - DAY_MS));
    const before = `${(await history(inbox)).epoch}.${id - 1}`;
    let page = await history(inbox, `cursor=${before}`);
    while (page.gap === null) {
      await scheduler.wait(100);
      page = await history(inbox, `cursor=${before}`);
    }
    expect(page).toMatchObject({ gap: { reason: "retention" }, messages: [] });
  });

  it("a test's HISTORY_PERIOD_MS keys history tables by period start, sorted by time; unset, by UTC day", () => {
    expect(historyPeriodFrom({})).toBe(UTC_DAYS);
    const period = historyPeriodFrom({ HISTORY_PERIOD_MS: "2000" });
    const at = Date.UTC(2026, 11, 7, 15, 8, 43, 999);
    expect(period.keyOf(at)).toBe("20261207150842000");
    expect(period.startMs(period.keyOf(at))).toBe(at - 1999);
    expect(period.keyOf(at + 1) > period.keyOf(at)).toBe(true);
    expect(periodTableName(period.keyOf(at))).toBe("h_20261207150842000");
    expect(() => periodTableName("1; DROP TABLE messages")).toThrow(/not a history period/);
    expect(() => historyPeriodFrom({ HISTORY_PERIOD_MS: "1.5" })).toThrow(/HISTORY_PERIOD_MS/);
  });

  it("the oldest closed day gives way to the history's budget first, and the summary says so", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 100 });
    const ids = await delivered(inbox, ['{"big":"' + "x".repeat(500) + '"}']);
    // The next day: a new day's message; yesterday is closed and over a 100-byte budget.
    const tomorrow = Date.now() + DAY_MS;
    await runInDurableObject(stubOf(inbox), (instance) => {
      instance.store.insertMessage({ kind: "hook", subpath: null, content_type: "application/json", body: new TextEncoder().encode("{}"), received_at: tomorrow, expires_at: tomorrow + DAY_MS, sender: null, msg_id: null, env_type: null });
      instance.store.acknowledge({ upTo: ids[0]! + 1 }, tomorrow);
    });
    // The alarm's history job, a day on, with a budget (max_queue_bytes) the closed day is over.
    await runInDurableObject(stubOf(inbox), (instance) => {
      instance.config!.limits.max_queue_bytes = 100;
      keepHistory({ store: instance.store, config: () => instance.config }, tomorrow + 1000);
    });
    const kept = await history(inbox);
    expect(kept.messages.map((m) => m.id)).toEqual([ids[0]! + 1]);
    expect((await listQueue(inbox.agent)).summary.history).toMatchObject({ kept: 1, gave_way: { count: 1, last_at: tomorrow + 1000 } });
  });
});
