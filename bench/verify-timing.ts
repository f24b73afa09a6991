// How Node times and prints the operations bench/verify-worker.ts runs inside workerd: the relay
// scenario's Ed25519 figures and the sources scenario's webhook checks.
import type { HttpClient } from "./http-client.ts";
import { fmt, median, range, table } from "./report.ts";
import type { VerifyOperation } from "./verify-operations.ts";

/** Operations per request: each request does ~0.1–0.2 s of work, far above the request overhead. */
export const OPERATIONS_PER_REQUEST: Record<VerifyOperation, number> = {
  webcrypto: 2000, purejs: 100, "hash-input": 20_000, github: 2000, stripe: 2000, slack: 2000, "standard-webhooks": 2000, token: 5000,
  "utf8-decode": 200, "strict-scan": 50, "json-parse": 50, jcs: 50, "canonical-check": 50, sha256: 200, "re-serialise": 50,
};
export const REPETITIONS = 7;

async function timedRun(client: HttpClient, op: VerifyOperation, n: number): Promise<number> {
  const start = performance.now();
  const answer = await client.request("GET", `/?op=${op}&n=${n}`);
  const elapsed = performance.now() - start;
  const ok = answer.status === 200 ? (JSON.parse(answer.body) as { ok: number }).ok : -1;
  if (ok !== n) throw new Error(`${op} n=${n}: expected ${n} successful operations, got ${answer.status} ${answer.body}`);
  return elapsed;
}

// µs per operation of each of `ops`, per repetition: Node's wall time of ?n=N (workerd freezes its clocks while JS
// runs) minus the median of 3 ?n=0 requests just before, ÷ N; and every ?n=0 request's ms.
export async function timeOperations(client: HttpClient, ops: readonly VerifyOperation[]) {
  const result = { usPerOp: new Map(ops.map((op) => [op, [] as number[]])), baselineMs: [] as number[] };
  // Warm-up: JIT, the fixture, WebCrypto's key import (cached per key, as in the relay).
  for (const op of ops) await timedRun(client, op, Math.ceil(OPERATIONS_PER_REQUEST[op] / 4));
  for (let i = 0; i < 10; i++) await timedRun(client, "webcrypto", 0);
  // Operations interleaved per repetition, so drift on a noisy VM spreads over all of them.
  for (let rep = 0; rep < REPETITIONS; rep++) {
    for (const op of ops) {
      const baselines = [await timedRun(client, op, 0), await timedRun(client, op, 0), await timedRun(client, op, 0)];
      result.baselineMs.push(...baselines);
      const n = OPERATIONS_PER_REQUEST[op];
      result.usPerOp.get(op)!.push((((await timedRun(client, op, n)) - median(baselines)) * 1000) / n);
    }
  }
  return { ...result, us: (op: VerifyOperation) => median(result.usPerOp.get(op)!) };
}

export function printOperations(v: Awaited<ReturnType<typeof timeOperations>>, labels: readonly (readonly [VerifyOperation, string])[]): void {
  console.log(table([
    ["operation", "N/request", "µs/op median", "range of reps", "÷ Ed25519 verify"],
    ...labels.map(([op, label]) => [label, String(OPERATIONS_PER_REQUEST[op]), fmt(v.us(op)), range(v.usPerOp.get(op)!), `${fmt(v.us(op) / v.us("webcrypto"))}×`]),
  ]));
}
