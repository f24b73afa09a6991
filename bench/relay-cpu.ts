// `npm run bench` part 5, the CPU a message costs: workerd's CPU time per message for a signed envelope
// with a 1 KiB, 64 KiB and 256 KiB payload (posted as `clawrelay send` posts it, and one as
// JSON.stringify writes it), and for a 256 KiB hook body, each beside a bare insert of
// the same bytes (worker/bench-baselines.ts's BareInsert, behind the same edge) in the same run.
// Rounds interleave (bare, relay) so drift on a shared VM hits both; the row ends when every ack is in
// its sender's inbox, so the ack's signing and hand-over are in the relay's figure. Run by relay-scenario.ts.
import { draftEnvelope, envelopeText, signEnvelope, utf8 } from "../protocol/index.ts";
import type { UnsignedEnvelope } from "../protocol/index.ts";
import type { HttpClient, Measured } from "./http-client.ts";
import { cpuPerOp, runClosedLoop, withCpu } from "./http-client.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { claimInbox, emptyInbox, inboxBacklog, newAgent } from "./relay-agents.ts";
import { awaitAcks } from "./relay-rows.ts";
import { fmt, median, table } from "./report.ts";
import type { GoalRow } from "./report.ts";
import type { timeOperations } from "./verify-timing.ts";
import { INTAKE_OPERATIONS, INTAKE_PAYLOAD_BYTES } from "./verify-operations.ts";
import { payloadOf } from "./bench-payload.ts";

const KIB = 1024;
/**
 * Requests per row: about a second of workerd CPU for the big ones, far above /proc's 10 ms tick. An
 * envelope is posted as `clawrelay send` posts it (its payload in JCS form: the relay hashes the bytes),
 * or, `stringified`, as JSON.stringify writes it (keys unsorted here: the relay canonicalizes).
 */
export const CPU_ROWS = [
  { label: "signed envelope, 1 KiB payload (records)", kind: "envelope", shape: "records", bytes: KIB, count: 1500, stringified: false },
  { label: "signed envelope, 64 KiB payload (records)", kind: "envelope", shape: "records", bytes: 64 * KIB, count: 300, stringified: false },
  { label: "signed envelope, 256 KiB payload (records)", kind: "envelope", shape: "records", bytes: 256 * KIB, count: 150, stringified: false },
  { label: "signed envelope, 256 KiB payload (text)", kind: "envelope", shape: "text", bytes: 256 * KIB, count: 150, stringified: false },
  { label: "signed envelope, 256 KiB (records, JSON.stringify)", kind: "envelope", shape: "records", bytes: 256 * KIB, count: 150, stringified: true },
  { label: "hook body, 256 KiB (records, opaque)", kind: "hook", shape: "records", bytes: 256 * KIB, count: 150, stringified: false },
] as const;
const [ROUNDS, WARMUP, CONCURRENCY] = [3, 20, 4];
const GOAL_MS = 2;
const JSON_TYPE = { "content-type": "application/json" };
const CLAIM = { rate_per_minute: 10_000, limits: { max_body_bytes: 1_000_000, max_queue_messages: 100_000 } };

/** `count` envelopes of one payload from the senders in turn; the payload hash is worked out once. */
async function signedBodies(senders: readonly BenchAgent[], to: string, payload: Record<string, unknown>, count: number, stringified: boolean): Promise<string[]> {
  const hashed = await draftEnvelope({ from: senders[0]!.id, to, type: "message", payload });
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    const sender = senders[i % senders.length]!;
    const unsigned: UnsignedEnvelope = { ...hashed, from: sender.id, msg_id: crypto.randomUUID(), ts: Math.floor(Date.now() / 1000) };
    const signed = await signEnvelope(unsigned, sender.keyId, sender.sign);
    bodies.push(stringified ? JSON.stringify(signed) : envelopeText(signed));
  }
  return bodies;
}

type Row = (typeof CPU_ROWS)[number];
export type CpuResult = { row: Row; bodyBytes: number; bare: Measured[]; relay: Measured[] };

async function relayRound(client: HttpClient, senders: readonly BenchAgent[], row: Row): Promise<{ bare: Measured; relay: Measured; bodyBytes: number }> {
  const receiver = await newAgent();
  const token = await claimInbox(client, receiver, CLAIM);
  const total = WARMUP + row.count;
  const payload = payloadOf(row.bytes, row.shape);
  // A hook body is an opaque JSON document of the same size (not an envelope: it is stored as it came).
  const bodies = row.kind === "envelope" ? await signedBodies(senders, receiver.id, payload, total, row.stringified) : Array.from({ length: total }, (_, i) => JSON.stringify({ ...payload, n: i }));
  const bare = (i: number) => client.timed("POST", `/baseline/bare/${receiver.id}/envelopes`, 202, JSON_TYPE, bodies[i]!);
  const path = row.kind === "envelope" ? `/inbox/${receiver.id}/envelopes` : `/inbox/${receiver.id}/hooks/bench/cpu`;
  const headers = row.kind === "envelope" ? JSON_TYPE : { ...JSON_TYPE, authorization: `Bearer ${token}` };
  const relay = (i: number) => client.timed("POST", path, 202, headers, bodies[i]!);
  await runClosedLoop(WARMUP, CONCURRENCY, bare);
  const bareRun = await withCpu(() => runClosedLoop(row.count, CONCURRENCY, (i) => bare(WARMUP + i)));
  // Senders start empty, and the row waits for every ack (the batched hand-over is the relay's work too).
  for (const sender of senders) await emptyInbox(client, sender);
  const before = await Promise.all(senders.map((s) => inboxBacklog(client, s)));
  const acksAfter = (n: number) => before.map((b, j) => b + (row.kind === "envelope" ? Math.max(0, Math.ceil((n - j) / senders.length)) : 0));
  await runClosedLoop(WARMUP, CONCURRENCY, relay);
  await awaitAcks(client, senders, acksAfter(WARMUP));
  const relayRun = await withCpu(async () => {
    const load = await runClosedLoop(row.count, CONCURRENCY, (i) => relay(WARMUP + i));
    await awaitAcks(client, senders, acksAfter(total));
    return load;
  });
  return { bare: bareRun, relay: relayRun, bodyBytes: utf8(bodies[0]!).byteLength };
}

export async function runCpuRows(client: HttpClient, senders: readonly BenchAgent[], log: (line: string) => void): Promise<CpuResult[]> {
  const results = CPU_ROWS.map((row): CpuResult => ({ row, bodyBytes: 0, bare: [], relay: [] }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const result of results) {
      log(`part 5: round ${round + 1}/${ROUNDS}, ${result.row.label}: ${result.row.count} bare inserts, then ${result.row.count} to the relay…`);
      const measured = await relayRound(client, senders, result.row);
      result.bare.push(measured.bare);
      result.relay.push(measured.relay);
      result.bodyBytes = measured.bodyBytes;
    }
  }
  return results;
}

const us = (runs: readonly Measured[]) => median(runs.map(cpuPerOp));
/** Median over the rounds of (relay − bare), each pair measured back to back. */
const overBare = (r: CpuResult) => median(r.relay.map((m, i) => cpuPerOp(m) - cpuPerOp(r.bare[i]!)));

/** What the steps that grow with size cost inside workerd, from part 1's timings (one 256 KiB records payload). */
function printSteps(verify: Awaited<ReturnType<typeof timeOperations>>): void {
  const steps: Record<(typeof INTAKE_OPERATIONS)[number], string> = {
    "utf8-decode": "the body's bytes to text (fatal UTF-8)",
    "strict-scan": "strict JSON scan (keys, depth, surrogates)",
    "json-parse": "JSON.parse",
    jcs: "JCS of the payload (canonicalize)",
    "canonical-check": "are the payload's bytes its JCS form? (one scan: replaces decode, scan, parse, JCS)",
    sha256: "SHA-256 of the JCS bytes (WebCrypto)",
    "re-serialise": "JSON.stringify + UTF-8 (skipped when stored as sent)",
  };
  console.log(`   Where it goes: each step alone inside workerd over a ${INTAKE_PAYLOAD_BYTES / KIB} KiB records payload (part 1's method, medians of its reps):`);
  console.log(table([["step", "µs"], ...INTAKE_OPERATIONS.map((op) => [steps[op], fmt(verify.us(op))])]));
}

export function printCpuRows(results: readonly CpuResult[], verify: Awaited<ReturnType<typeof timeOperations>>): GoalRow[] {
  console.log(`\n5. The CPU a message costs: workerd CPU (/proc utime+stime, 10 ms ticks) per message, ${ROUNDS} rounds at concurrency ${CONCURRENCY}, medians;`);
  console.log(`   baseline: a bare insert of the same bytes behind the same edge, measured just before in each round. The relay's row includes`);
  console.log(`   the strict parse, payload_hash (JCS + SHA-256; SHA-256 of the bytes for a payload posted in JCS form), verification, dedup,`);
  console.log(`   storage and the signed ack handed to the sender's inbox.`);
  console.log(table([
    ["request", "body bytes", "count", "bare µs/msg", "relay µs/msg", "relay − bare µs", "÷ bare"],
    ...results.map((r) => [r.row.label, String(r.bodyBytes), String(r.row.count), fmt(us(r.bare)), fmt(us(r.relay)), fmt(overBare(r)), `${fmt(us(r.relay) / us(r.bare))}×`]),
  ]));
  for (const r of results) console.log(`   ${r.row.label}: relay − bare per round ${r.relay.map((m, i) => fmt(cpuPerOp(m) - cpuPerOp(r.bare[i]!))).join(", ")} µs`);
  printSteps(verify);
  return results
    .filter((r) => r.row.kind === "envelope" && r.row.bytes === 256 * KIB)
    .map((r) => {
      const row = { value: fmt(overBare(r) / 1000), baseline: `bare ${fmt(us(r.bare) / 1000)} ms`, ratio: us(r.relay) / us(r.bare) };
      // The goal is for a payload posted in JCS form, as our own send posts it; a stringified one is shown beside it.
      if (r.row.stringified) return { figure: `256 KiB envelope (${r.row.shape}, JSON.stringify): CPU over a bare insert, ms`, ...row };
      return { figure: `256 KiB envelope (${r.row.shape}): CPU over a bare insert, ms`, ...row, goal: `≤ ${GOAL_MS} ms`, met: overBare(r) / 1000 <= GOAL_MS };
    });
}
