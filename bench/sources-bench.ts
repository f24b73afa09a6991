// npm run bench:sources: what verifying a webhook source's request costs, against baselines measured in
// the same run.
//   1. Inside workerd (bench/verify-worker.ts): each kind's check of an 8 KiB body (worker/sources/),
//      µs per request, against one Ed25519 WebCrypto verify (what every signed envelope costs).
//   2. On the relay Worker: a GitHub-signed 8 KiB event to …/sources/github against the same body to
//      …/hooks/… with the inbox's bearer token (verified by its hash), interleaved rounds, req/s and
//      workerd CPU per message.
// Prints, asserts nothing. Runs the bundles `wrangler deploy --dry-run` makes, in Miniflare on loopback.
import { createHmac } from "node:crypto";
import path from "node:path";
import { printHeader } from "./bench-header.ts";
import { BenchRun, workerdCpuMs } from "./bench-run.ts";
import { printGoalSummary } from "./goal-summary.ts";
import type { HttpClient } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import { LOOPBACK_HUB_URL, emptyInbox, newAgent, signedRequest } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { fmt, median, range, table } from "./stats.ts";
import { OPERATIONS_PER_REQUEST, REPETITIONS, runVerifyBench } from "./verify-bench.ts";
import { SOURCE_BODY_BYTES, SOURCE_OPERATIONS } from "./verify-operations.ts";
import { bundleWorker, startMiniflare, startRelayMiniflare } from "../scripts/local-workerd.ts";

const run = new BenchRun("bench:sources");
const log = (line: string) => process.stderr.write(`[bench:sources] ${line}\n`);
const EVENTS = 1000;
const ROUNDS = 3;
const CONCURRENCY = 8;

interface Row {
  rate: number;
  cpuUsPerMessage: number | null;
}

async function claim(relay: HttpClient, agent: BenchAgent): Promise<string> {
  const answer = await signedRequest(relay, agent, "PUT", `/inbox/${agent.id}`, {
    keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }],
    receipt_key: agent.receiptKey,
    hub_url: LOOPBACK_HUB_URL,
    limits: { max_queue_messages: 100_000 },
  });
  if (answer.status !== 201) throw new Error(`claim failed: ${answer.status} ${answer.body}`);
  return (JSON.parse(answer.body) as { webhook_token: string }).webhook_token;
}

async function timedLoad(count: number, post: (i: number) => Promise<number>): Promise<Row> {
  const before = workerdCpuMs();
  const load = await runClosedLoop(count, CONCURRENCY, post);
  const after = workerdCpuMs();
  return { rate: (count * 1000) / load.wallMs, cpuUsPerMessage: before === null || after === null ? null : ((after - before) * 1000) / count };
}

async function main(): Promise<void> {
  await printHeader("clawrelay bench:sources");
  const tmpDir = await run.makeTmpDir("clawrelay-bench-sources-");
  log("bundling the relay and the verify worker (wrangler deploy --dry-run)…");
  const [relayBundle, verifyBundle] = await Promise.all([bundleWorker("wrangler.toml", path.join(tmpDir, "relay")), bundleWorker("bench/verify-worker.toml", path.join(tmpDir, "verify"))]);

  const ops = ["webcrypto", ...SOURCE_OPERATIONS] as const;
  log(`part 1: the checks inside workerd (${REPETITIONS} reps)…`);
  const verify = await runVerifyBench(await run.startMiniflare(() => startMiniflare("clawrelay-verify-bench", verifyBundle)), ops);
  await run.stopMiniflare();

  log(`part 2: ${ROUNDS} rounds of ${EVENTS} GitHub events and ${EVENTS} token hooks at concurrency ${CONCURRENCY}…`);
  // With RECEIPT_KEY_SECRET, as a deployment should run: the source secret is sealed at rest.
  const relay = await run.startMiniflare(() => startRelayMiniflare(relayBundle, LOOPBACK_HUB_URL, { vars: { RECEIPT_KEY_SECRET: "bench-receipt-key-secret-0123456789" } }));
  const agent = await newAgent();
  const token = await claim(relay, agent);
  const added = await signedRequest(relay, agent, "POST", `/inbox/${agent.id}/sources`, { name: "github", kind: "github" });
  if (added.status !== 201) throw new Error(`adding the source failed: ${added.status} ${added.body}`);
  const secret = (JSON.parse(added.body) as { secret: string }).secret;
  const body = JSON.stringify({ ref: "refs/heads/main", pad: "x".repeat(SOURCE_BODY_BYTES - 40) });
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  const github = (round: number) => (i: number) =>
    relay.timed("POST", `/inbox/${agent.id}/sources/github`, 200, { "content-type": "application/json", "x-hub-signature-256": signature, "x-github-event": "push", "x-github-delivery": `r${round}-${i}` }, body);
  const hook = (i: number) => relay.timed("POST", `/inbox/${agent.id}/hooks/sources/github`, 202, { "content-type": "application/json", authorization: `Bearer ${token}`, "x-n": String(i) }, body);
  await runClosedLoop(100, CONCURRENCY, github(-1));
  await runClosedLoop(100, CONCURRENCY, hook);
  const rows: { github: Row; hook: Row }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await emptyInbox(relay, agent);
    const g = await timedLoad(EVENTS, github(round));
    const h = await timedLoad(EVENTS, hook);
    rows.push({ github: g, hook: h });
  }
  await run.stopMiniflare();

  const us = (op: string) => median(verify.figures.find((f) => f.op === op)!.usPerOp);
  const ed25519 = us("webcrypto");
  console.log(`\n1. The checks inside workerd (bench/verify-worker.ts; ${SOURCE_BODY_BYTES / 1024} KiB JSON body, keys imported once as the relay keeps them)`);
  console.log(`   Each request runs N checks back to back; Node times it, subtracts ?n=0 requests, divides by N. ${REPETITIONS} reps.`);
  console.log(table([
    ["check", "N/request", "µs/request median", "range of reps", "÷ Ed25519 verify"],
    ...verify.figures.map((f) => [f.op === "webcrypto" ? "Ed25519 verify (WebCrypto), the baseline" : f.op, String(OPERATIONS_PER_REQUEST[f.op]), fmt(median(f.usPerOp)), range(f.usPerOp), `${fmt(median(f.usPerOp) / ed25519)}×`]),
  ]));
  const rateRatios = rows.map((r) => r.github.rate / r.hook.rate);
  console.log(`\n2. On the relay Worker, concurrency ${CONCURRENCY}, ${EVENTS} requests per row, ${ROUNDS} interleaved rounds (median round shown)`);
  const mid = [...rows].sort((a, b) => a.github.rate / a.hook.rate - b.github.rate / b.hook.rate)[Math.floor(rows.length / 2)]!;
  const cpu = (r: Row) => (r.cpuUsPerMessage === null ? "n/a" : fmt(r.cpuUsPerMessage));
  console.log(table([
    ["request", "req/s", "workerd CPU µs/msg"],
    ["POST …/sources/github (HMAC-SHA256 verify, dedup record)", fmt(mid.github.rate), cpu(mid.github)],
    ["POST …/hooks/… (bearer token, by its hash), the baseline", fmt(mid.hook.rate), cpu(mid.hook)],
  ]));
  console.log(`   req/s ratio of each round: ${rateRatios.map((r) => fmt(r)).join(", ")}`);

  printGoalSummary("Summary", [
    ...SOURCE_OPERATIONS.map((op) => ({ figure: `${op} check µs (8 KiB)`, value: fmt(us(op)), baseline: `${fmt(ed25519)} (Ed25519 verify)`, ratio: us(op) / ed25519, goal: "—", met: null })),
    { figure: "GitHub event req/s ÷ token hook", value: fmt(mid.github.rate), baseline: fmt(mid.hook.rate), ratio: median(rateRatios), goal: "—", met: null },
  ]);
}

await run.run(main, { releaseFirst: true });
