// Part 1 of bench/relay-bench.ts: Ed25519 verification and the per-envelope hash/input build, timed
// from Node against bench/verify-worker.ts running in workerd (Miniflare).
import type { HttpClient } from "./http-client.ts";
import { median } from "./stats.ts";
import type { VerifyOperation } from "./verify-operations.ts";

/** Operations per request: each request does ~0.1–0.2 s of work, far above the request overhead. */
export const OPERATIONS_PER_REQUEST: Record<VerifyOperation, number> = {
  webcrypto: 2000,
  purejs: 100,
  "hash-input": 20_000,
  github: 2000,
  stripe: 2000,
  slack: 2000,
  "standard-webhooks": 2000,
  token: 5000,
};
/** What `npm run bench` times in its part 1 (bench:sources times the source checks). */
export const ED25519_OPERATIONS: readonly VerifyOperation[] = ["webcrypto", "purejs", "hash-input"];
export const REPETITIONS = 7;
const BASELINES_PER_REPETITION = 3;

export interface VerifyFigure {
  op: VerifyOperation;
  n: number;
  /** µs per operation, one value per repetition. */
  usPerOp: number[];
}

export interface VerifyResult {
  figures: VerifyFigure[];
  /** Wall time of ?n=0 requests (ms): the overhead subtracted from every timed request. */
  baselineMs: number[];
}

async function timedRun(client: HttpClient, op: VerifyOperation, n: number): Promise<number> {
  const start = performance.now();
  const answer = await client.request("GET", `/?op=${op}&n=${n}`);
  const elapsed = performance.now() - start;
  const ok = answer.status === 200 ? (JSON.parse(answer.body) as { ok: number }).ok : -1;
  if (ok !== n) throw new Error(`${op} n=${n}: expected ${n} successful operations, got ${answer.status} ${answer.body}`);
  return elapsed;
}

export async function runVerifyBench(client: HttpClient, ops: readonly VerifyOperation[] = ED25519_OPERATIONS): Promise<VerifyResult> {
  const figures = ops.map((op): VerifyFigure => ({ op, n: OPERATIONS_PER_REQUEST[op], usPerOp: [] }));
  const baselineMs: number[] = [];
  // Warm-up: JIT, the fixture, WebCrypto's key import (cached per key, as in the relay).
  for (const f of figures) await timedRun(client, f.op, Math.ceil(f.n / 4));
  for (let i = 0; i < 10; i++) await timedRun(client, "webcrypto", 0);
  // Operations interleaved per repetition, so drift on a noisy VM spreads over all of them.
  for (let rep = 0; rep < REPETITIONS; rep++) {
    for (const f of figures) {
      const baselines: number[] = [];
      for (let i = 0; i < BASELINES_PER_REPETITION; i++) baselines.push(await timedRun(client, f.op, 0));
      const base = median(baselines);
      baselineMs.push(...baselines);
      const total = await timedRun(client, f.op, f.n);
      f.usPerOp.push(((total - base) * 1000) / f.n);
    }
  }
  return { figures, baselineMs };
}
