// npm run bench: speed figures of the relay, each against a baseline measured in the same run.
//   1. Ed25519 verify inside workerd, WebCrypto vs pure JS (and the JCS hash + signing-input build);
//   2. envelope intake on the relay Worker vs, behind the same edge and in the same bundle
//      (worker/bench-baselines.ts), a bare insert object and an insert + verify + sign object; /healthz;
//   3. delivery latency POST -> frame at a local WebSocket client vs the intake POST alone;
//   4. the production Worker's size as `wrangler deploy` uploads it (gzipped).
// Ends with a summary: figure, value, baseline, ratio, goal, met. Runs the bundles `wrangler deploy
// --dry-run` makes, in Miniflare 5 on loopback; prints, asserts nothing.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { printHeader } from "./bench-header.ts";
import { BenchRun } from "./bench-run.ts";
import { runDelivery } from "./delivery-bench.ts";
import type { DeliveryResult } from "./delivery-bench.ts";
import type { LoadResult } from "./http-client.ts";
import { WARMUP_REQUESTS, runBaseline, runHealthz, runIntake } from "./intake-bench.ts";
import type { Baseline, IntakeResult, Measured } from "./intake-bench.ts";
import { QUIET_TOOL_ENV, REPO_ROOT, bundleWorker, startMiniflare } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import { LOOPBACK_HUB_URL, claimInbox, newAgent } from "./relay-agents.ts";
import { fmt, median, p50, p99, range, rate, table } from "./stats.ts";
import { printGoalSummary } from "./goal-summary.ts";
import type { GoalRow } from "./goal-summary.ts";
import { ED25519_OPERATIONS, OPERATIONS_PER_REQUEST, REPETITIONS, runVerifyBench } from "./verify-bench.ts";
import type { VerifyResult } from "./verify-bench.ts";

const CONCURRENCY = [1, 32] as const;
type Concurrency = (typeof CONCURRENCY)[number];
const HEALTHZ_REQUESTS: Record<Concurrency, number> = { 1: 2000, 32: 4000 };
const ENVELOPES: Record<Concurrency, number> = { 1: 1000, 32: 3000 };
const SENDERS = 8;
/** Rounds of (bare, verify-sign, relay) per concurrency, interleaved so drift on a shared VM hits all three. */
const ROUNDS = 5;
const INTAKE_GOAL = 0.8;
const BUNDLE_GOAL_KIB = 50;

const BASELINE_LABELS: Record<Baseline, string> = {
  bare: "bare object: insert body, 202",
  "verify-sign": "insert + 1 Ed25519 verify + 1 sign",
};

const run = new BenchRun("bench");
const log = run.log;

interface IntakeRow {
  healthz: LoadResult;
  /** One entry per round, in the order they ran. */
  bare: Measured[];
  verifySign: Measured[];
  relay: IntakeResult[];
}

const rateOf = (m: Measured) => rate(m.load);

/** The round with the median rate (whose latencies are shown). */
function medianRun<T extends Measured>(runs: readonly T[]): T {
  return [...runs].sort((a, b) => rateOf(a) - rateOf(b))[Math.floor(runs.length / 2)]!;
}

/** Median over the rounds of relay ÷ baseline, each pair measured back to back (drift cancels out). */
function pairedRatio(relay: readonly Measured[], baseline: readonly Measured[]): number {
  return median(relay.map((r, i) => rateOf(r) / rateOf(baseline[i]!)));
}

const cpuPerMessage = (m: Measured) => (m.cpuMs === null ? "n/a" : fmt((m.cpuMs * 1000) / m.load.count));

function printVerify(result: VerifyResult): void {
  const [webcrypto, purejs, hashInput] = result.figures.map((f) => median(f.usPerOp)) as [number, number, number];
  console.log(`\n1. Ed25519 verification inside workerd (bench/verify-worker.ts, protocol/ed25519*.ts)`);
  console.log(`   Each request runs N operations back to back; Node times the request, subtracts the median of 3`);
  console.log(`   ?n=0 requests made just before it, divides by N. ${REPETITIONS} repetitions, operations interleaved.`);
  console.log(table([
    ["operation", "N/request", "µs/op median", "range of reps"],
    ...result.figures.map((f) => [
      ({ webcrypto: "verifyWebCrypto (crypto.subtle, key cached)", purejs: "verifyPureJs (noble points, RFC 8032)", "hash-input": "payload_hash (JCS+sha256) + signing input" } as Record<string, string>)[f.op] ?? f.op,
      String(f.n), fmt(median(f.usPerOp)), range(f.usPerOp),
    ]),
  ]));
  console.log(`   baseline request ?n=0: ${fmt(median(result.baselineMs))} ms median (${result.baselineMs.length} requests)`);
  console.log(`   ratio pure JS / WebCrypto: ${fmt(purejs / webcrypto)}×; hash + input build = ${fmt((hashInput / webcrypto) * 100, 2)}% of a WebCrypto verify`);
}

function loadRow(label: string, r: LoadResult, extra: readonly string[] = []): string[] {
  return [label, String(r.concurrency), String(r.count), fmt(r.wallMs / 1000), fmt(rate(r)), fmt(p50(r.latenciesMs)), fmt(p99(r.latenciesMs)), ...extra];
}

function printIntake(rows: Map<Concurrency, IntakeRow>): void {
  console.log(`\n2. Envelope intake on the relay Worker vs baselines in the same bundle, behind the same edge`);
  console.log(`   (bench/baseline-worker.toml: the relay's edge app and Inbox plus worker/bench-baselines.ts, sqlite DOs)`);
  console.log(`   Closed loop, keep-alive node:http client; ${WARMUP_REQUESTS} warm-up requests per row, not counted. The same kind`);
  console.log(`   of envelopes, pre-signed in Node by ${SENDERS} sender inboxes claimed on this relay, go to a fresh object per row.`);
  console.log(`   The relay resolves keys relay-to-relay and puts each ack in its sender's inbox; its row ends when the`);
  console.log(`   last ack is there (wall s), not at the last 202. ${ROUNDS} interleaved rounds; the median round is shown;`);
  console.log(`   ratios are the median of the rounds' own ratios. CPU: workerd's user+system time over the row.`);
  const lines = [["request", "conc", "count", "wall s", "req/s", "p50 ms", "p99 ms", "CPU µs/msg", "÷ bare", "÷ verify+sign"]];
  for (const [c, row] of rows) {
    const bare = medianRun(row.bare);
    const verifySign = medianRun(row.verifySign);
    const versus = (runs: readonly Measured[]) => [`${fmt(pairedRatio(runs, row.bare))}×`, `${fmt(pairedRatio(runs, row.verifySign))}×`];
    if (lines.length > 1) lines.push([]);
    lines.push(loadRow("GET /healthz (the edge alone)", row.healthz, ["", `${fmt(rate(row.healthz) / rateOf(bare))}×`, `${fmt(rate(row.healthz) / rateOf(verifySign))}×`]));
    lines.push(loadRow(BASELINE_LABELS.bare, bare.load, [cpuPerMessage(bare), ...versus(row.bare)]));
    lines.push(loadRow(BASELINE_LABELS["verify-sign"], verifySign.load, [cpuPerMessage(verifySign), ...versus(row.verifySign)]));
    const relay = medianRun(row.relay);
    lines.push(loadRow("relay POST …/envelopes, acks delivered", relay.load, [cpuPerMessage(relay), ...versus(row.relay)]));
  }
  console.log(table(lines));
  for (const [c, row] of rows) {
    const rates = (runs: readonly Measured[]) => runs.map((r) => fmt(rateOf(r))).join(" ");
    console.log(`   concurrency ${c}, req/s of each round: bare ${rates(row.bare)}; verify+sign ${rates(row.verifySign)}; relay ${rates(row.relay)}`);
    const relay = medianRun(row.relay);
    console.log(`   concurrency ${c}: the relay's last 202 came ${fmt(relay.answeredMs)} ms into its ${fmt(relay.load.wallMs)} ms row (the rest: acks on their way)`);
  }
}

function printDelivery(delivery: Map<number, DeliveryResult>, intake: Map<Concurrency, IntakeRow>): void {
  console.log(`\n3. Delivery latency: just before POST -> delivery frame at a local ws client (/inbox/{id}/connect)`);
  console.log(`   Socket authenticated (challenge -> auth, window 64), every frame acked on arrival; a fresh inbox per row.`);
  console.log(`   Baseline: the POST -> 202 latency of row 2's median relay round (same concurrency, no socket attached).`);
  const rows = [["measure", "conc", "count", "wall s", "msg/s", "p50 ms", "p99 ms"]];
  for (const c of CONCURRENCY) {
    const d = delivery.get(c)!;
    rows.push(loadRow("POST -> frame at the client", d.delivery, []));
    rows.push(["  (same POSTs -> 202)", String(c), String(d.postMs.length), "", "", fmt(p50(d.postMs)), fmt(p99(d.postMs))]);
  }
  console.log(table(rows));
  for (const c of CONCURRENCY) {
    const d = delivery.get(c)!.delivery.latenciesMs;
    const base = medianRun(intake.get(c)!.relay).load.latenciesMs;
    console.log(`   concurrency ${c}: delivery / intake-only POST latency p50 ${fmt(p50(d) / p50(base))}×, p99 ${fmt(p99(d) / p99(base))}×`);
  }
}

function bundleKiB(contents: string): { raw: number; gzip: number } {
  // What wrangler prints as "Total Upload: … / gzip: …": zlib's default level over the module.
  return { raw: Buffer.byteLength(contents) / 1024, gzip: gzipSync(contents).byteLength / 1024 };
}

/** The production bundle as `minify = true` in wrangler.toml would make it (wrangler deploy --dry-run --minify). */
async function minifiedBundle(outdir: string): Promise<string> {
  const wrangler = path.join(REPO_ROOT, "node_modules/wrangler/bin/wrangler.js");
  await promisify(execFile)(process.execPath, [wrangler, "deploy", "--dry-run", "--minify", "--outdir", outdir], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...QUIET_TOOL_ENV, WRANGLER_LOG_PATH: path.join(outdir, "logs") },
  });
  return readFile(path.join(outdir, "index.js"), "utf8");
}

function intakeSummary(c: Concurrency, row: IntakeRow, versus: Baseline, goal: number | null): GoalRow {
  const baseline = versus === "bare" ? row.bare : row.verifySign;
  const ratio = pairedRatio(row.relay, baseline);
  return {
    figure: `intake msg/s, conc ${c}, ÷ ${versus === "bare" ? "bare insert" : "insert + verify + sign"}`,
    value: fmt(rateOf(medianRun(row.relay))),
    baseline: fmt(rateOf(medianRun(baseline))),
    ratio,
    goal: goal === null ? "—" : `≥ ${goal.toFixed(2)}×`,
    met: goal === null ? null : ratio >= goal,
  };
}

/** The bench Worker: the relay's bindings plus the two baseline objects, all SQLite-backed. */
function startBenchMiniflare(bundle: WorkerBundle) {
  const name = "clawrelay-bench";
  const objects = ["Inbox", "Directory", "BareInsert", "InsertVerifySign"] as const;
  const bindings = { INBOX: "Inbox", DIRECTORY: "Directory", BARE_INSERT: "BareInsert", INSERT_VERIFY_SIGN: "InsertVerifySign" } as const;
  return startMiniflare(
    name,
    bundle,
    {
      ...Object.fromEntries(Object.entries(bindings).map(([binding, exportName]) => [binding, { type: "durable-object" as const, worker: name, exportName }])),
      DEFAULT_HUB_URL: { type: "text", value: LOOPBACK_HUB_URL },
    },
    Object.fromEntries(objects.map((o) => [o, { type: "durable-object" as const, storage: "sqlite" as const }])),
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  await printHeader("clawrelay bench");
  console.log(`all traffic on 127.0.0.1; client and workerd share the same cores`);

  const tmpDir = await run.makeTmpDir("clawrelay-bench-");
  log("bundling the relay, the bench Worker and the verify worker (wrangler deploy --dry-run)…");
  // allSettled: every wrangler process must have exited before a failure removes their outdirs.
  const bundles = await Promise.allSettled([
    bundleWorker("wrangler.toml", path.join(tmpDir, "relay")),
    bundleWorker("bench/baseline-worker.toml", path.join(tmpDir, "bench")),
    bundleWorker("bench/verify-worker.toml", path.join(tmpDir, "verify")),
  ]);
  const [relayBundle, benchBundle, verifyBundle] = bundles.map((b) => {
    if (b.status === "rejected") throw b.reason;
    return b.value;
  }) as [WorkerBundle, WorkerBundle, WorkerBundle];
  const minified = await minifiedBundle(path.join(tmpDir, "relay-minified"));

  log(`part 1: verify (N = ${ED25519_OPERATIONS.map((op) => OPERATIONS_PER_REQUEST[op]).join("/")}, ${REPETITIONS} reps)…`);
  const verify = await runVerifyBench(await run.startMiniflare(() => startMiniflare("clawrelay-verify-bench", verifyBundle)));
  await run.stopMiniflare();

  const relay = await run.startMiniflare(() => startBenchMiniflare(benchBundle));
  const senders = await Promise.all(Array.from({ length: SENDERS }, () => newAgent()));
  for (const sender of senders) await claimInbox(relay, sender);

  const intake = new Map<Concurrency, IntakeRow>();
  const delivery = new Map<number, DeliveryResult>();
  for (const c of CONCURRENCY) {
    log(`part 2: healthz, then ${ROUNDS} rounds of bare, verify+sign and relay intake at concurrency ${c}…`);
    const row: IntakeRow = { healthz: await runHealthz(relay, HEALTHZ_REQUESTS[c], c), bare: [], verifySign: [], relay: [] };
    for (let round = 0; round < ROUNDS; round++) {
      row.bare.push(await runBaseline(relay, "bare", senders, ENVELOPES[c], c));
      row.verifySign.push(await runBaseline(relay, "verify-sign", senders, ENVELOPES[c], c));
      row.relay.push(await runIntake(relay, senders, ENVELOPES[c], c));
    }
    intake.set(c, row);
  }
  for (const c of CONCURRENCY) {
    log(`part 3: delivery at concurrency ${c}…`);
    delivery.set(c, await runDelivery(relay, senders, ENVELOPES[c], c));
  }
  await run.stopMiniflare();

  printVerify(verify);
  printIntake(intake);
  printDelivery(delivery, intake);
  const size = bundleKiB(relayBundle.contents);
  const minSize = bundleKiB(minified);
  console.log(`\n4. The Worker as deployed (wrangler.toml, wrangler deploy --dry-run): ${fmt(size.raw)} KiB, ${fmt(size.gzip)} KiB gzipped`);
  console.log(`   with minify = true (not set in wrangler.toml; wrangler deploy --dry-run --minify): ${fmt(minSize.raw)} KiB, ${fmt(minSize.gzip)} KiB gzipped`);

  const [webcrypto, purejs] = verify.figures.map((f) => median(f.usPerOp)) as [number, number];
  printGoalSummary("Summary (values: median rounds; intake ratios: median of the rounds' own ratios)", [
    ...CONCURRENCY.flatMap((c) => [intakeSummary(c, intake.get(c)!, "verify-sign", c === 32 ? INTAKE_GOAL : null), intakeSummary(c, intake.get(c)!, "bare", null)]),
    { figure: "Ed25519 verify µs, WebCrypto ÷ pure JS", value: fmt(webcrypto), baseline: fmt(purejs), ratio: webcrypto / purejs, goal: "—", met: null },
    { figure: "Worker bundle, KiB gzipped", value: fmt(size.gzip), baseline: "—", ratio: null, goal: `≤ ${BUNDLE_GOAL_KIB} KiB`, met: size.gzip <= BUNDLE_GOAL_KIB },
    { figure: "  the same with minify = true", value: fmt(minSize.gzip), baseline: "—", ratio: null, goal: `≤ ${BUNDLE_GOAL_KIB} KiB`, met: minSize.gzip <= BUNDLE_GOAL_KIB },
  ]);
  console.log(`\nwhole run ${fmt((performance.now() - started) / 1000)} s (bundling, Miniflare start-up, pre-signing included)`);
}

// A signal removes the directory at once: Miniflare's own exit hook ends the process right after it.
await run.run(main, { releaseFirst: true });
