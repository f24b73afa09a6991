// Rows per message over a whole life (accepted, deduplicated, delivered, acknowledged, kept, expired), by
// kind, with history (the default retention) and without it (retention 0: as before history), counted by
// the store's own counters (SQLite's rowsWritten/rowsRead of every statement: inbox-records.ts). Expiry
// runs at an injected time: the history day dropped whole, the dedup records swept. docs/limits.md's rows
// table quotes what this prints.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { DAY_MS } from "../../worker/storage/history-store.ts";
import { claimInbox, envelopeFrom, newAgent, poll, postEnvelope, postHook, registerAtHub } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { answer, liveAgent, liveSource, nextRequest, sendTo } from "../support/workerd/live.ts";
import { closeAllSockets } from "../support/workerd/socket-client.ts";
import { addSource, pathOf, postToSource, stripeHeaders } from "../support/workerd/sources.ts";

const N = 10;
const STRIPE_SECRET = "whsec_rows_0123456789abcdef0123456789abcdef";

const counters = (inbox: ClaimedInbox) =>
  runInDurableObject(env.INBOX.getByName(inbox.agent.id), (instance) => ({ written: instance.store.rowsWritten, read: instance.store.rowsRead }));

/** The alarm's expiry jobs as they would run a month on: history days dropped, dedup records swept. */
const expireAll = (inbox: ClaimedInbox) =>
  runInDurableObject(env.INBOX.getByName(inbox.agent.id), (instance) => {
    const later = Date.now() + 40 * DAY_MS;
    instance.store.history.maintain(later, instance.store.retentionMs, Number.MAX_SAFE_INTEGER, () => instance.store.keepFloor());
    instance.store.sweepExpiredRecords(later);
  });

interface Life {
  /** Rows written per message from intake to the ack. */
  written: number;
  /** Rows read from intake to the ack (the owner's listing not included). */
  read: number;
  /** Rows the expiry wrote for all N + 1 messages: per history day and per dedup day a few fixed rows (the DROPs count none); a delete per record of the `dedup` table of before. */
  expiry: number;
}

/** `post(i)` stores message i; the agent polls and acknowledges them all; then expiry. Per message, warm. */
async function lifeOf(inbox: ClaimedInbox, post: (i: number) => Promise<void>): Promise<Life> {
  await post(-1);
  const warm = await poll(inbox.agent);
  await poll(inbox.agent, `after=${warm.messages[warm.messages.length - 1]!.id}&ack=true`);
  const start = await counters(inbox);
  for (let i = 0; i < N; i++) await post(i);
  const { messages } = await poll(inbox.agent);
  expect(messages).toHaveLength(N);
  await poll(inbox.agent, `after=${messages[N - 1]!.id}&ack=true`);
  const acked = await counters(inbox);
  await expireAll(inbox);
  const end = await counters(inbox);
  return { written: (acked.written - start.written) / N, read: (acked.read - start.read) / N, expiry: end.written - acked.written };
}

async function hookLife(retentionSec: number): Promise<Life> {
  const inbox = await claimInbox(undefined, { rate_per_minute: 1000, limits: { retention_sec: retentionSec } });
  return lifeOf(inbox, async (i) => void (await (await postHook(inbox, "agentgram_inbox/agent", `{"n":${i}}`)).json()));
}

async function sourceLife(retentionSec: number): Promise<Life> {
  const inbox = await claimInbox(undefined, { rate_per_minute: 1000, limits: { retention_sec: retentionSec } });
  const { source } = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET });
  return lifeOf(inbox, async (i) => {
    const body = JSON.stringify({ id: `evt_${i + 1}`, object: "event", type: "charge.succeeded" });
    expect((await postToSource(pathOf(source.url), body, stripeHeaders(STRIPE_SECRET, body))).status).toBe(200);
  });
}

async function envelopeLife(retentionSec: number): Promise<Life> {
  const inbox = await claimInbox(undefined, { rate_per_minute: 1000, limits: { retention_sec: retentionSec } });
  const alice = newAgent();
  await registerAtHub(alice);
  return lifeOf(inbox, async () => void expect((await postEnvelope(await envelopeFrom(alice, inbox.agent.id))).status).toBe(202));
}

/** Rows written per live request answered at once (nothing of it queued), warm. */
async function liveAnsweredWritten(retentionSec: number): Promise<number> {
  const inbox = await claimInbox(undefined, { rate_per_minute: 1000, limits: { retention_sec: retentionSec } });
  const [path, agent] = [await liveSource(inbox), await liveAgent(inbox)];
  const exchange = async () => {
    const pending = sendTo(path, { method: "POST", body: "{}" });
    answer(agent, (await nextRequest(agent)).rid, 200, [], "ok");
    expect((await pending).status).toBe(200);
  };
  await exchange();
  const start = await counters(inbox);
  for (let i = 0; i < N; i++) await exchange();
  return ((await counters(inbox)).written - start.written) / N;
}

afterEach(closeAllSockets);

describe("rows per message, whole life", () => {
  it("a live request answered: its live-log row and its history entry are in the store's counters (2 written; 1 with retention 0)", async () => {
    expect(await liveAnsweredWritten(604800)).toBe(2);
    expect(await liveAnsweredWritten(0)).toBe(1);
  });

  it("hook body 3 written over its life, source event and envelope 4: expiry is a day's DROP, not a delete per message or record", async () => {
    const rows = {
      "hook body": { kept: await hookLife(604800), before: await hookLife(0) },
      "source event (stripe)": { kept: await sourceLife(604800), before: await sourceLife(0) },
      "envelope (hub-verified sender)": { kept: await envelopeLife(604800), before: await envelopeLife(0) },
    };
    const lines = Object.entries(rows).map(([kind, { kept, before }]) =>
      `${kind}: written intake→ack ${kept.written} (retention 0: ${before.written}); read intake→ack ${kept.read} (${before.read}); expiry wrote for ${N + 1} messages: ${kept.expiry} (${before.expiry})`,
    );
    console.log(`rows per message over a whole life (N = ${N}, warm):\n  ${lines.join("\n  ")}`);
    // Hook body: INSERT, then at the ack DELETE + the history row; its expiry is its day's DROP (no row).
    expect(rows["hook body"].kept.written).toBe(3);
    expect(rows["hook body"].kept.expiry).toBeLessThan(N + 1);
    // Source event and envelope: the dedup record too; its day table is dropped whole when its window ends.
    expect(rows["source event (stripe)"].kept.written).toBe(4);
    expect(rows["envelope (hub-verified sender)"].kept.written).toBe(4);
    expect(rows["source event (stripe)"].kept.expiry).toBeLessThan(N + 1);
  });
});
