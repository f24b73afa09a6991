// Part 2 of bench/relay-bench.ts: POST /inbox/{id}/envelopes on the real relay Worker against
// GET /healthz (edge only, no Durable Object) at the same concurrency.
import type { HttpClient, LoadResult } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { claimInbox, drainQueue, newAgent, presignEnvelopes } from "./relay-agents.ts";

export const WARMUP_REQUESTS = 100;

export async function runHealthz(client: HttpClient, count: number, concurrency: number): Promise<LoadResult> {
  await runClosedLoop(WARMUP_REQUESTS, concurrency, () => client.timed("GET", "/healthz", 200));
  return runClosedLoop(count, concurrency, () => client.timed("GET", "/healthz", 200));
}

export interface IntakeResult {
  load: LoadResult;
  /** Messages the receiving inbox stored (warm-up included); the bench drained them afterwards. */
  stored: number;
}

/**
 * Claims a fresh receiving inbox (so no run can fill a queue: the cap is 10,000), pre-signs every
 * envelope, then posts them; each must be answered 202 (stored, with the relay's signed ack).
 */
export async function runIntake(client: HttpClient, senders: readonly BenchAgent[], count: number, concurrency: number): Promise<IntakeResult> {
  const receiver = await newAgent();
  await claimInbox(client, receiver);
  const envelopes = await presignEnvelopes(senders, receiver.id, WARMUP_REQUESTS + count);
  const path = `/inbox/${receiver.id}/envelopes`;
  const post = (i: number) => client.timed("POST", path, 202, { "content-type": "application/json" }, envelopes[i]!.body);
  await runClosedLoop(WARMUP_REQUESTS, concurrency, post);
  const load = await runClosedLoop(count, concurrency, (i) => post(WARMUP_REQUESTS + i));
  await drainQueue(client, receiver, WARMUP_REQUESTS + count);
  return { load, stored: WARMUP_REQUESTS + count };
}
