// `npm run bench` part 6, rows per message by kind: SQLite rows written and read from intake to the agent's
// acknowledgement, read from the inbox's own counters (GET …/queue's summary.storage), with the default
// retention (history kept) and with retention 0 (as before history), beside the figures measured before
// history (issue 33's memo). Expiry's rows (a history day's DROP: none) are in test/worker/history-rows.test.ts.
// Run by relay-scenario.ts.
import { utf8 } from "../protocol/index.ts";
import type { HttpClient } from "./http-client.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { claimInbox, newAgent, presignEnvelopes, signedCall } from "./relay-agents.ts";
import { fmt, table } from "./report.ts";

const N = 50;
/** Whole-life rows written and rows read (intake, deliver, ack) per message before history. */
const BEFORE: Record<Kind, { written: string; read: string }> = { "hook body": { written: "3", read: "8" }, "envelope, sibling sender": { written: "5 + 2 in the sender's inbox", read: "9" } };
type Kind = "hook body" | "envelope, sibling sender";

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
  const envelopes = await presignEnvelopes([sender], receiver.id, N + 1);
  const post = async (i: number) => {
    const [path, body, headers] = kind === "hook body"
      ? [`/inbox/${receiver.id}/hooks/agentgram_inbox/agent`, `{"n":${i}}`, { authorization: `Bearer ${token}`, "content-type": "application/json" }]
      : [`/inbox/${receiver.id}/envelopes`, envelopes[i]!.body, { "content-type": "application/json" }];
    const answer = await client.request("POST", path, headers, utf8(body));
    if (answer.status !== 202) throw new Error(`POST ${path} -> ${answer.status}: ${answer.body.slice(0, 200)}`);
  };
  // Warm: keys looked up, the day's history table made.
  await post(N);
  await deliverAll(client, receiver);
  const [before, senderBefore] = [await storage(client, receiver), await storage(client, sender)];
  // The listing's own reads, to take out of the figure.
  const listing = (await storage(client, receiver)).rows_read - before.rows_read;
  for (let i = 0; i < N; i++) await post(i);
  await deliverAll(client, receiver);
  const [after, senderAfter] = [await storage(client, receiver), await storage(client, sender)];
  return { written: (after.rows_written - before.rows_written) / N, read: (after.rows_read - before.rows_read - 2 * listing) / N, senderWritten: (senderAfter.rows_written - senderBefore.rows_written) / N };
}

export type HistoryRows = { kind: Kind; kept: Awaited<ReturnType<typeof measure>>; none: Awaited<ReturnType<typeof measure>> }[];

export async function runHistoryRows(client: HttpClient): Promise<HistoryRows> {
  const kinds: Kind[] = ["hook body", "envelope, sibling sender"];
  const rows: HistoryRows = [];
  for (const kind of kinds) rows.push({ kind, kept: await measure(client, kind, 604_800), none: await measure(client, kind, 0) });
  return rows;
}

export function printHistoryRows(rows: HistoryRows): void {
  console.log(`\n6. Rows per message by kind, intake -> acknowledgement (N = ${N}, polling agent; the inbox's own counters). Whole life adds expiry:`);
  console.log(`   a history day's DROP TABLE (0 rows), and for an envelope its dedup record's delete (1). Retention 0 acks in one batch here, so its`);
  console.log(`   id-floor row is written once, not per message as with a socket's acks. Before: issue 33's memo (whole life, a socket's acks).`);
  const lines = [["kind", "written, kept 7 d", "written, retention 0", "sender's inbox", "read, kept", "read, retention 0", "before: written (life)", "before: read"]];
  for (const { kind, kept, none } of rows) {
    lines.push([kind, fmt(kept.written), fmt(none.written), fmt(kept.senderWritten), fmt(kept.read), fmt(none.read), BEFORE[kind].written, BEFORE[kind].read]);
  }
  console.log(table(lines));
}
