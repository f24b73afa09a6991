// `npm run bench` part 6, rows per message by kind: SQLite rows written and read from intake to the agent's
// acknowledgement, read from the inbox's own counters (GET …/queue's summary.storage), with the default
// retention (history kept) and with retention 0 (as before history), beside the figures measured before
// history (issue 33's memo). Kinds: a hook body, an envelope from a sibling inbox, a Stripe-signed source event
// and a live request answered by a raw agent socket (bench/live-answerer.ts). Expiry's rows (a history day's
// DROP: none) are in test/worker/history-rows.test.ts. Run by relay-scenario.ts.
import { createHmac } from "node:crypto";
import { utf8 } from "../protocol/index.ts";
import type { HttpClient } from "./http-client.ts";
import { liveAnswerer } from "./live-answerer.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { claimInbox, newAgent, presignEnvelopes, signedCall } from "./relay-agents.ts";
import { fmt, table } from "./report.ts";

const N = 50;
/** Whole-life rows written and rows read (intake, deliver, ack) per message before history. */
const BEFORE: Record<Kind, { written: string; read: string }> = {
  "hook body": { written: "3", read: "8" },
  "envelope, sibling sender": { written: "5 + 2 in the sender's inbox", read: "9" },
  "source event (Stripe)": { written: "5", read: "9" },
  "live request, answered": { written: "1", read: "2" },
};
type Kind = "hook body" | "envelope, sibling sender" | "source event (Stripe)" | "live request, answered";
/** Kinds with no sender's inbox on this relay: that column shows "—". */
const NO_SENDER: readonly Kind[] = ["source event (Stripe)", "live request, answered"];
const STRIPE_SECRET = "whsec_bench_rows_0123456789abcdef0123456789abcdef";
const stripeEvent = (i: number) => JSON.stringify({ id: `evt_bench_${i}`, object: "event", type: "charge.succeeded" });
const stripeSigned = (body: string) => {
  const t = Math.floor(Date.now() / 1000);
  return { "content-type": "application/json; charset=utf-8", "stripe-signature": `t=${t},v1=${createHmac("sha256", STRIPE_SECRET).update(`${t}.${body}`).digest("hex")}` };
};

type Storage = { rows_read: number; rows_written: number };
const storage = async (client: HttpClient, agent: BenchAgent) =>
  (await signedCall<{ summary: { storage: Storage } }>(client, agent, "GET", `/inbox/${agent.id}/queue?limit=1`, 200)).summary.storage;
const messages = (client: HttpClient, agent: BenchAgent, query: string) =>
  signedCall<{ messages: { id: number }[] }>(client, agent, "GET", `/inbox/${agent.id}/messages?${query}`, 200);

async function deliverAll(client: HttpClient, agent: BenchAgent): Promise<void> {
  const { messages: got } = await messages(client, agent, `ack=false&limit=100`);
  await messages(client, agent, `after=${got[got.length - 1]!.id}&ack=true&limit=1`);
}

/** Rows per message, intake → ack, in the receiving inbox (and the sender's, for envelopes). */
async function measure(client: HttpClient, kind: Kind, retentionSec: number): Promise<{ written: number; read: number; senderWritten: number }> {
  const [receiver, sender] = [await newAgent(), await newAgent()];
  const token = await claimInbox(client, receiver, { rate_per_minute: 10_000, limits: { retention_sec: retentionSec } });
  await claimInbox(client, sender);
  const envelopes = kind === "envelope, sibling sender" ? await presignEnvelopes([sender], receiver.id, N + 1) : [];
  const added = (body: Record<string, unknown>) => signedCall<{ post_url: string }>(client, receiver, "POST", `/inbox/${receiver.id}/sources`, 201, body);
  const sourcePath = kind === "source event (Stripe)" ? new URL((await added({ name: "stripe", kind: "stripe", secret: STRIPE_SECRET })).post_url).pathname
    : kind === "live request, answered" ? new URL((await added({ name: "app", kind: "token", forward: "http://127.0.0.1:9/app", live_sec: 10 })).post_url).pathname : "";
  // A live request is answered at once by the agent's socket and never queued: nothing to deliver or acknowledge.
  const socket = kind === "live request, answered" ? await liveAnswerer(client, receiver) : null;
  const post = async (i: number) => {
    const [path, body, headers, status] = kind === "hook body"
      ? [`/inbox/${receiver.id}/hooks/agentgram_inbox/agent`, `{"n":${i}}`, { authorization: `Bearer ${token}`, "content-type": "application/json" }, 202]
      : kind === "envelope, sibling sender" ? [`/inbox/${receiver.id}/envelopes`, envelopes[i]!.body, { "content-type": "application/json" }, 202]
      : kind === "source event (Stripe)" ? [sourcePath, stripeEvent(i), stripeSigned(stripeEvent(i)), 200]
      : [sourcePath, `{"n":${i}}`, { "content-type": "application/json" }, 200];
    const answer = await client.request("POST", path, headers, utf8(body));
    if (answer.status !== status) throw new Error(`POST ${path} -> ${answer.status}: ${answer.body.slice(0, 200)}`);
  };
  const deliver = () => (socket ? Promise.resolve() : deliverAll(client, receiver));
  try {
    return await measured(client, receiver, sender, post, deliver);
  } finally {
    await socket?.close();
  }
}

async function measured(client: HttpClient, receiver: BenchAgent, sender: BenchAgent, post: (i: number) => Promise<void>, deliver: () => Promise<void>) {
  // Warm: keys looked up, the day's history table made.
  await post(N);
  await deliver();
  const [before, senderBefore] = [await storage(client, receiver), await storage(client, sender)];
  // The listing's own reads, to take out of the figure.
  const listing = (await storage(client, receiver)).rows_read - before.rows_read;
  for (let i = 0; i < N; i++) await post(i);
  await deliver();
  const [after, senderAfter] = [await storage(client, receiver), await storage(client, sender)];
  return { written: (after.rows_written - before.rows_written) / N, read: (after.rows_read - before.rows_read - 2 * listing) / N, senderWritten: (senderAfter.rows_written - senderBefore.rows_written) / N };
}

export type HistoryRows = { kind: Kind; kept: Awaited<ReturnType<typeof measure>>; none: Awaited<ReturnType<typeof measure>> }[];

export async function runHistoryRows(client: HttpClient): Promise<HistoryRows> {
  const kinds: Kind[] = ["hook body", "envelope, sibling sender", "source event (Stripe)", "live request, answered"];
  const rows: HistoryRows = [];
  for (const kind of kinds) rows.push({ kind, kept: await measure(client, kind, 604_800), none: await measure(client, kind, 0) });
  return rows;
}

export function printHistoryRows(rows: HistoryRows): void {
  console.log(`\n6. Rows per message by kind, intake -> acknowledgement (N = ${N}, polling agent; the inbox's own counters). Whole life adds expiry:`);
  console.log(`   a history day's and a dedup day's DROP TABLE (0 rows a message; a few fixed rows a day). Retention 0 acks in one batch here, so its`);
  console.log(`   id-floor row is written once, not per message as with a socket's acks. Before: issue 33's memo (whole life, a socket's acks).`);
  console.log(`   A live request: a raw agent socket answers it at once (live-answerer.ts); nothing queued, its live-log row and history entry counted.`);
  console.log(`   A pulled hub record is not measured here: this bench has no hub (LOOPBACK_HUB_URL); see docs/limits.md.`);
  const lines = [["kind", "written, kept 7 d", "written, retention 0", "sender's inbox", "read, kept", "read, retention 0", "before: written (life)", "before: read"]];
  for (const { kind, kept, none } of rows) {
    lines.push([kind, fmt(kept.written), fmt(none.written), NO_SENDER.includes(kind) ? "—" : fmt(kept.senderWritten), fmt(kept.read), fmt(none.read), BEFORE[kind].written, BEFORE[kind].read]);
  }
  console.log(table(lines));
}
