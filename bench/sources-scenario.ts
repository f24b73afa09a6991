// `npm run bench:sources`: each webhook source's check of an 8 KiB body inside workerd vs one Ed25519 verify (what every
// envelope costs), GitHub-signed events to …/sources/github vs the same body to …/hooks/… with the bearer token, and
// a Stripe event's POST-to-local-app latency through the relay and the agent vs a direct POST (forward-latency.ts).
import { createHmac } from "node:crypto";
import { startMiniflare, startRelayMiniflare } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import type { BenchRun } from "./bench-run.ts";
import { FORWARD_EVENTS, forwardLatency } from "./forward-latency.ts";
import { cpuPerOp, runClosedLoop, withCpu } from "./http-client.ts";
import { LOOPBACK_HUB_URL, claimInbox, emptyInbox, newAgent, signedCall } from "./relay-agents.ts";
import { fmt, median, printGoalSummary, rate, table } from "./report.ts";
import { SOURCE_BODY_BYTES, SOURCE_OPERATIONS } from "./verify-operations.ts";
import { REPETITIONS, printOperations, timeOperations } from "./verify-timing.ts";

const EVENTS = 1000;
const ROUNDS = 3;
const CONCURRENCY = 8;

export async function sourcesScenario(run: BenchRun): Promise<void> {
  const [relayBundle, verifyBundle] = (await run.bundle("wrangler.toml", "bench/verify-worker.toml")) as [WorkerBundle, WorkerBundle];
  run.log(`part 1: the checks inside workerd (${REPETITIONS} reps)…`);
  const ops = ["webcrypto", ...SOURCE_OPERATIONS] as const;
  const verify = await timeOperations(await run.startMiniflare(() => startMiniflare("clawrelay-verify-bench", verifyBundle)), ops);
  await run.stopMiniflare();
  run.log(`part 2: ${ROUNDS} rounds of ${EVENTS} GitHub events and ${EVENTS} token hooks at concurrency ${CONCURRENCY}…`);
  // With RECEIPT_KEY_SECRET, as a deployment should run: the source secret is sealed at rest.
  const relay = await run.startMiniflare(() => startRelayMiniflare(relayBundle, LOOPBACK_HUB_URL, { vars: { RECEIPT_KEY_SECRET: "bench-receipt-key-secret-0123456789" } }));
  const agent = await newAgent();
  const token = await claimInbox(relay, agent, { limits: { max_queue_messages: 100_000 } });
  const { secret } = await signedCall<{ secret: string }>(relay, agent, "POST", `/inbox/${agent.id}/sources`, 201, { name: "github", kind: "github" });
  // Each event its own body, as GitHub's are: a GitHub source deduplicates by the body's digest.
  const bodyOf = (tag: string) => JSON.stringify({ ref: "refs/heads/main", after: tag.padStart(12, "0"), pad: "x".repeat(SOURCE_BODY_BYTES - 64) });
  const github = (round: number) => (i: number) => {
    const body = bodyOf(`r${round}-${i}`);
    const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
    return relay.timed("POST", `/inbox/${agent.id}/sources/github`, 200, { "content-type": "application/json", "x-hub-signature-256": signature, "x-github-event": "push", "x-github-delivery": `r${round}-${i}` }, body);
  };
  const hook = (i: number) => relay.timed("POST", `/inbox/${agent.id}/hooks/sources/github`, 202, { "content-type": "application/json", authorization: `Bearer ${token}`, "x-n": String(i) }, bodyOf(`h${i}`));
  await runClosedLoop(100, CONCURRENCY, github(-1));
  await runClosedLoop(100, CONCURRENCY, hook);
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    await emptyInbox(relay, agent);
    rounds.push({ github: await withCpu(() => runClosedLoop(EVENTS, CONCURRENCY, github(round))), hook: await withCpu(() => runClosedLoop(EVENTS, CONCURRENCY, hook)) });
  }
  await run.stopMiniflare();
  run.log(`part 3: ${FORWARD_EVENTS} Stripe events to a local app through the relay and the agent, and ${FORWARD_EVENTS} straight to it…`);
  const forwardRelay = await run.startMiniflare(() => startRelayMiniflare(relayBundle, LOOPBACK_HUB_URL));
  const forward = await forwardLatency(forwardRelay, run.dir);
  await run.stopMiniflare();
  const us = verify.us;
  console.log(`\n1. The checks inside workerd (bench/verify-worker.ts), ${SOURCE_BODY_BYTES / 1024} KiB JSON body: N per request, less ?n=0 requests, ÷ N; ${REPETITIONS} reps.`);
  printOperations(verify, ops.map((op) => [op, op === "webcrypto" ? "Ed25519 verify (WebCrypto), the baseline" : op] as const));
  const ratios = rounds.map((r) => rate(r.github.load) / rate(r.hook.load));
  const mid = rounds[ratios.indexOf([...ratios].sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!)]!;
  console.log(`\n2. On the relay Worker, concurrency ${CONCURRENCY}, ${EVENTS} requests per row, ${ROUNDS} interleaved rounds (median round shown)`);
  console.log(table([
    ["request", "req/s", "workerd CPU µs/msg"],
    ["POST …/sources/github (HMAC-SHA256 verify, dedup record)", fmt(rate(mid.github.load)), fmt(cpuPerOp(mid.github))],
    ["POST …/hooks/… (bearer token, by its hash), the baseline", fmt(rate(mid.hook.load)), fmt(cpuPerOp(mid.hook))],
  ]));
  console.log(`   req/s ratio of each round: ${ratios.map((r) => fmt(r)).join(", ")}`);
  console.log(`\n3. A source forwarding to a local app (sources add stripe --forward …): sender's POST → the app has it, one at a time,`);
  console.log("   interleaved with a direct POST of the same signed event to the same app (20 of each first, not counted)");
  console.log(table(forward.rows));
  printGoalSummary("Summary", [
    ...SOURCE_OPERATIONS.map((op) => ({ figure: `${op} check µs (8 KiB)`, value: fmt(us(op)), baseline: `${fmt(us("webcrypto"))} (Ed25519 verify)`, ratio: us(op) / us("webcrypto") })),
    { figure: "GitHub event req/s ÷ token hook", value: fmt(rate(mid.github.load)), baseline: fmt(rate(mid.hook.load)), ratio: median(ratios) },
    ...forward.summary,
  ]);
}
