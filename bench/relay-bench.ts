// npm run bench: speed figures of the relay, each against a baseline measured in the same run.
//   1. Ed25519 verify inside workerd, WebCrypto vs pure JS (and the JCS hash + signing-input build);
//   2. envelope intake on the real relay Worker vs GET /healthz, concurrency 1 and 32;
//   3. delivery latency POST -> frame at a local WebSocket client vs the intake POST alone.
// Runs the Worker bundled by `wrangler deploy --dry-run` in Miniflare 5 on loopback; prints, asserts nothing.
import path from "node:path";
import { printHeader } from "./bench-header.ts";
import { BenchRun } from "./bench-run.ts";
import { runDelivery } from "./delivery-bench.ts";
import type { DeliveryResult } from "./delivery-bench.ts";
import type { LoadResult } from "./http-client.ts";
import { WARMUP_REQUESTS, runHealthz, runIntake } from "./intake-bench.ts";
import type { IntakeResult } from "./intake-bench.ts";
import { bundleWorker, startMiniflare, startRelayMiniflare } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import { LOOPBACK_HUB_URL, claimInbox, newAgent } from "./relay-agents.ts";
import { fmt, median, p50, p99, range, rate, table } from "./stats.ts";
import { OPERATIONS_PER_REQUEST, REPETITIONS, runVerifyBench } from "./verify-bench.ts";
import type { VerifyResult } from "./verify-bench.ts";

const CONCURRENCY = [1, 32] as const;
const HEALTHZ_REQUESTS: Record<(typeof CONCURRENCY)[number], number> = { 1: 2000, 32: 4000 };
const ENVELOPES: Record<(typeof CONCURRENCY)[number], number> = { 1: 1000, 32: 3000 };
const SENDERS = 8;

const run = new BenchRun("bench");
const log = run.log;

function printVerify(result: VerifyResult): void {
  const [webcrypto, purejs, hashInput] = result.figures.map((f) => median(f.usPerOp)) as [number, number, number];
  console.log(`\n1. Ed25519 verification inside workerd (bench/verify-worker.ts, protocol/ed25519.ts)`);
  console.log(`   Each request runs N operations back to back; Node times the request, subtracts the median of 3`);
  console.log(`   ?n=0 requests made just before it, divides by N. ${REPETITIONS} repetitions, operations interleaved.`);
  console.log(table([
    ["operation", "N/request", "µs/op median", "range of reps"],
    ...result.figures.map((f) => [
      { webcrypto: "verifyWebCrypto (crypto.subtle, key cached)", purejs: "verifyPureJs (noble points, RFC 8032)", "hash-input": "payload_hash (JCS+sha256) + signing input" }[f.op],
      String(f.n), fmt(median(f.usPerOp)), range(f.usPerOp),
    ]),
  ]));
  console.log(`   baseline request ?n=0: ${fmt(median(result.baselineMs))} ms median (${result.baselineMs.length} requests)`);
  console.log(`   ratio pure JS / WebCrypto: ${fmt(purejs / webcrypto)}×; hash + input build = ${fmt((hashInput / webcrypto) * 100, 2)}% of a WebCrypto verify`);
}

function loadRow(label: string, r: LoadResult): string[] {
  return [label, String(r.concurrency), String(r.count), fmt(r.wallMs / 1000), fmt(rate(r)), fmt(p50(r.latenciesMs)), fmt(p99(r.latenciesMs))];
}

function printIntake(healthz: Map<number, LoadResult>, intake: Map<number, IntakeResult>): void {
  console.log(`\n2. Envelope intake on the relay Worker (wrangler deploy --dry-run bundle in Miniflare 5, sqlite DO "Inbox")`);
  console.log(`   Closed loop, keep-alive node:http client; ${WARMUP_REQUESTS} warm-up requests per row, not counted. Envelopes`);
  console.log(`   pre-signed in Node from ${SENDERS} sender inboxes claimed on this relay (keys resolved relay-to-relay, acks`);
  console.log(`   delivered to the senders' inboxes); a fresh receiving inbox per row (rate_per_minute 10000), drained after.`);
  const rows = [["request", "conc", "count", "wall s", "req/s", "p50 ms", "p99 ms"]];
  for (const c of CONCURRENCY) {
    rows.push(loadRow("GET /healthz (baseline: edge only)", healthz.get(c)!));
    rows.push(loadRow("POST /inbox/{id}/envelopes -> 202", intake.get(c)!.load));
  }
  console.log(table(rows));
  for (const c of CONCURRENCY) {
    const h = healthz.get(c)!;
    const e = intake.get(c)!.load;
    console.log(`   concurrency ${c}: healthz/envelope throughput ${fmt(rate(h) / rate(e))}×; envelope/healthz latency p50 ${fmt(p50(e.latenciesMs) / p50(h.latenciesMs))}×, p99 ${fmt(p99(e.latenciesMs) / p99(h.latenciesMs))}×`);
  }
}

function printDelivery(delivery: Map<number, DeliveryResult>, intake: Map<number, IntakeResult>): void {
  console.log(`\n3. Delivery latency: just before POST -> delivery frame at a local ws client (/inbox/{id}/connect)`);
  console.log(`   Socket authenticated (challenge -> auth, window 64), every frame acked on arrival; a fresh inbox per row.`);
  console.log(`   Baseline: the POST -> 202 latency of row 2 (same concurrency, no socket attached).`);
  const rows = [["measure", "conc", "count", "wall s", "msg/s", "p50 ms", "p99 ms"]];
  for (const c of CONCURRENCY) {
    const d = delivery.get(c)!;
    rows.push(loadRow("POST -> frame at the client", d.delivery));
    rows.push(["  (same POSTs -> 202)", String(c), String(d.postMs.length), "", "", fmt(p50(d.postMs)), fmt(p99(d.postMs))]);
  }
  console.log(table(rows));
  for (const c of CONCURRENCY) {
    const d = delivery.get(c)!.delivery.latenciesMs;
    const base = intake.get(c)!.load.latenciesMs;
    console.log(`   concurrency ${c}: delivery / intake-only POST latency p50 ${fmt(p50(d) / p50(base))}×, p99 ${fmt(p99(d) / p99(base))}×`);
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  await printHeader("clawrelay bench");
  console.log(`all traffic on 127.0.0.1; client and workerd share the same cores`);

  const tmpDir = await run.makeTmpDir("clawrelay-bench-");
  log("bundling the relay and the verify worker (wrangler deploy --dry-run)…");
  // allSettled: both wrangler processes must have exited before a failure removes their outdirs.
  const bundles = await Promise.allSettled([
    bundleWorker("wrangler.toml", path.join(tmpDir, "relay")),
    bundleWorker("bench/verify-worker.toml", path.join(tmpDir, "verify")),
  ]);
  const [relayBundle, verifyBundle] = bundles.map((b) => {
    if (b.status === "rejected") throw b.reason;
    return b.value;
  }) as [WorkerBundle, WorkerBundle];

  log(`part 1: verify (N = ${Object.values(OPERATIONS_PER_REQUEST).join("/")}, ${REPETITIONS} reps)…`);
  const verify = await runVerifyBench(await run.startMiniflare(() => startMiniflare("clawrelay-verify-bench", verifyBundle)));
  await run.stopMiniflare();

  const relay = await run.startMiniflare(() => startRelayMiniflare(relayBundle, LOOPBACK_HUB_URL));
  const senders = await Promise.all(Array.from({ length: SENDERS }, () => newAgent()));
  for (const sender of senders) await claimInbox(relay, sender);

  const healthz = new Map<number, LoadResult>();
  const intake = new Map<number, IntakeResult>();
  const delivery = new Map<number, DeliveryResult>();
  for (const c of CONCURRENCY) {
    log(`part 2: healthz and intake at concurrency ${c}…`);
    healthz.set(c, await runHealthz(relay, HEALTHZ_REQUESTS[c], c));
    intake.set(c, await runIntake(relay, senders, ENVELOPES[c], c));
  }
  for (const c of CONCURRENCY) {
    log(`part 3: delivery at concurrency ${c}…`);
    delivery.set(c, await runDelivery(relay, senders, ENVELOPES[c], c));
  }
  await run.stopMiniflare();

  printVerify(verify);
  printIntake(healthz, intake);
  printDelivery(delivery, intake);
  console.log(`\nwhole run ${fmt((performance.now() - started) / 1000)} s (bundling, Miniflare start-up, pre-signing included)`);
}

// A signal removes the directory at once: Miniflare's own exit hook ends the process right after it.
await run.run(main, { releaseFirst: true });
