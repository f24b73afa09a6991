// Part 2 of bench/relay-bench.ts: POST /inbox/{id}/envelopes on the real relay Worker against, in the
// same run and behind the same edge (worker/bench-baselines.ts): GET /healthz (the edge alone), a bare
// Durable Object that inserts the body and answers 202, and one that also does one Ed25519 verify and
// one sign.
import { workerdCpuMs } from "./bench-run.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { claimInbox, drainQueue, emptyInbox, inboxBacklog, newAgent, presignEnvelopes } from "./relay-agents.ts";

export const WARMUP_REQUESTS = 100;
/** How long the relay may take, after the last 202, to have every ack in its sender's inbox. */
const ACK_DEADLINE_MS = 30_000;
const ACK_POLL_MS = 10;

export type Baseline = "bare" | "verify-sign";

export async function runHealthz(client: HttpClient, count: number, concurrency: number): Promise<LoadResult> {
  await runClosedLoop(WARMUP_REQUESTS, concurrency, () => client.timed("GET", "/healthz", 200));
  return runClosedLoop(count, concurrency, () => client.timed("GET", "/healthz", 200));
}

/** A timed run and the workerd CPU time it took (null where it cannot be read). */
export interface Measured {
  load: LoadResult;
  cpuMs: number | null;
}

async function measured(run: () => Promise<LoadResult>): Promise<Measured> {
  const before = workerdCpuMs();
  const load = await run();
  const after = workerdCpuMs();
  return { load, cpuMs: before === null || after === null ? null : after - before };
}

/** A fresh baseline object per row, posted the same pre-signed envelopes as the relay. */
export async function runBaseline(client: HttpClient, kind: Baseline, senders: readonly BenchAgent[], count: number, concurrency: number): Promise<Measured> {
  const target = await newAgent();
  if (kind === "verify-sign") {
    const keys = JSON.stringify(Object.fromEntries(senders.map((s) => [s.id, s.publicKey])));
    const answer = await client.request("PUT", `/baseline/verify-sign/${target.id}/keys`, { "content-type": "application/json" }, keys);
    if (answer.status !== 204) throw new Error(`baseline keys: ${answer.status} ${answer.body}`);
  }
  const envelopes = await presignEnvelopes(senders, target.id, WARMUP_REQUESTS + count);
  const path = `/baseline/${kind}/${target.id}/envelopes`;
  const post = (i: number) => client.timed("POST", path, 202, { "content-type": "application/json" }, envelopes[i]!.body);
  await runClosedLoop(WARMUP_REQUESTS, concurrency, post);
  return measured(() => runClosedLoop(count, concurrency, (i) => post(WARMUP_REQUESTS + i)));
}

export interface IntakeResult extends Measured {
  /** wallMs (and cpuMs) run until the last ack is in its sender's inbox, not just until the last 202. */
  load: LoadResult;
  /** Wall time until the last 202 alone. */
  answeredMs: number;
  /** Messages the receiving inbox stored (warm-up included); the bench drained them afterwards. */
  stored: number;
}

async function backlogs(client: HttpClient, senders: readonly BenchAgent[]): Promise<number[]> {
  return Promise.all(senders.map((s) => inboxBacklog(client, s)));
}

/** Resolves once every sender's backlog reached `expected` (its acks arrived); throws after the deadline. */
async function awaitAcks(client: HttpClient, senders: readonly BenchAgent[], expected: readonly number[]): Promise<void> {
  const deadline = performance.now() + ACK_DEADLINE_MS;
  // Each poll is work for the relay too: one sender is watched until its acks are in (one call hands
  // over a sender's acks, and every sender's go out together), then the others are asked.
  let waiting = senders.map((_, i) => i);
  for (let watched = waiting.slice(0, 1); ; ) {
    const now = await Promise.all(watched.map((i) => inboxBacklog(client, senders[i]!)));
    const done = new Set(watched.filter((i, k) => now[k]! >= expected[i]!));
    waiting = waiting.filter((i) => !done.has(i));
    if (waiting.length === 0) return;
    if (performance.now() > deadline) throw new Error(`acks missing ${ACK_DEADLINE_MS} ms after the last 202 for senders ${waiting.join(", ")} (expected ${expected.join(", ")})`);
    // A sender whose acks came in: ask the others at once. None yet: wait, and ask the first one again.
    watched = done.size > 0 ? waiting : waiting.slice(0, 1);
    if (done.size === 0) await new Promise((resolve) => setTimeout(resolve, ACK_POLL_MS));
  }
}

/**
 * Claims a fresh receiving inbox (so no run can fill a queue: the cap is 10,000), pre-signs every
 * envelope, then posts them; each must be answered 202 (stored, with the relay's signed ack). The run
 * ends when every ack is in its sender's inbox, so ack work the relay defers is inside the figure
 * (and so are the polls that watch for them, every ACK_POLL_MS once the last 202 came).
 */
export async function runIntake(client: HttpClient, senders: readonly BenchAgent[], count: number, concurrency: number): Promise<IntakeResult> {
  const receiver = await newAgent();
  await claimInbox(client, receiver);
  const envelopes = await presignEnvelopes(senders, receiver.id, WARMUP_REQUESTS + count);
  const path = `/inbox/${receiver.id}/envelopes`;
  const post = (i: number) => client.timed("POST", path, 202, { "content-type": "application/json" }, envelopes[i]!.body);
  // presignEnvelopes takes senders round-robin: sender j signed envelopes j, j + S, j + 2S, …
  const signedBy = (n: number, j: number) => Math.max(0, Math.ceil((n - j) / senders.length));
  // Senders start each row empty: every poll for their acks reads their whole queue's summary.
  for (const sender of senders) await emptyInbox(client, sender);
  const before = await backlogs(client, senders);
  await runClosedLoop(WARMUP_REQUESTS, concurrency, post);
  await awaitAcks(client, senders, before.map((n, j) => n + signedBy(WARMUP_REQUESTS, j)));
  let answeredMs = 0;
  const start = performance.now();
  const { load, cpuMs } = await measured(async () => {
    const answered = await runClosedLoop(count, concurrency, (i) => post(WARMUP_REQUESTS + i));
    answeredMs = answered.wallMs;
    await awaitAcks(client, senders, before.map((n, j) => n + signedBy(WARMUP_REQUESTS + count, j)));
    return { ...answered, wallMs: performance.now() - start };
  });
  await drainQueue(client, receiver, WARMUP_REQUESTS + count);
  return { load, cpuMs, answeredMs, stored: WARMUP_REQUESTS + count };
}
