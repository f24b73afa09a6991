// `npm run bench:live`: answers through the relay (issue 31). A live source's request → app → answer round trip
// through the relay and the agent against the same request straight to the app (small JSON and 64 KiB bodies);
// an A2A SendMessage through the relay against straight to an A2A stand-in; queued gateway deliveries' latency
// while 16 live requests wait on a slow app against the same deliveries with none waiting. Every figure beside
// its same-run baseline; nothing asserted. The measurements are in bench/live-parts.ts.
import { startRelayMiniflare } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import type { BenchRun } from "./bench-run.ts";
import { LIVE_BENCH, a2aRoundTrips, deliveriesBesideWaitingLive, liveRoundTrips } from "./live-parts.ts";
import type { Paired } from "./live-parts.ts";
import { LOOPBACK_HUB_URL } from "./relay-agents.ts";
import { fmt, median, p50, p99, printGoalSummary, table } from "./report.ts";
import type { GoalRow } from "./report.ts";

const SMALL_BYTES = 120;

const pairRows = (label: string, baseline: string, p: Paired) => [
  [label, String(p.via.length), fmt(p50(p.via)), fmt(p99(p.via))],
  [baseline, String(p.straight.length), fmt(p50(p.straight)), fmt(p99(p.straight))],
];

/** Value and baseline as p50 (p99), the ratio of the p50s, and the p50 the relay adds. */
const pairGoal = (figure: string, p: Paired, baseline: string, goal?: string): GoalRow => {
  const added = p50(p.via) - p50(p.straight);
  return {
    figure: `${figure} (adds ${fmt(added)} ms at p50)`,
    value: `${fmt(p50(p.via))} (p99 ${fmt(p99(p.via))}) ms`,
    baseline: `${fmt(p50(p.straight))} (p99 ${fmt(p99(p.straight))}) ms ${baseline}`,
    ratio: p50(p.via) / p50(p.straight),
    ...(goal ? { goal, met: added <= 3 } : {}),
  };
};

export async function liveScenario(run: BenchRun): Promise<void> {
  const [bundle] = (await run.bundle("wrangler.toml")) as [WorkerBundle];
  const relay = await run.startMiniflare(() => startRelayMiniflare(bundle, LOOPBACK_HUB_URL));
  run.log(`part 1: ${LIVE_BENCH.requests} live round trips per body size (${SMALL_BYTES} B, ${LIVE_BENCH.largeBytes / 1024} KiB) via relay and agent, interleaved with as many straight to the app…`);
  const [small, large] = (await liveRoundTrips(run, relay, [SMALL_BYTES, LIVE_BENCH.largeBytes])) as [Paired, Paired];
  run.log(`part 2: ${LIVE_BENCH.requests} A2A SendMessage calls through the relay, interleaved with as many straight to the stand-in…`);
  const a2a = await a2aRoundTrips(run, relay);
  run.log(`part 3: ${LIVE_BENCH.rounds} rounds of ${LIVE_BENCH.hooks} gateway hooks with none and with ${LIVE_BENCH.waiting} live requests waiting on a slow app…`);
  const hol = await deliveriesBesideWaitingLive(run, relay);
  await run.stopMiniflare();

  console.log(`\n1. A live token source forwarding to a local app that echoes the body (the answer is as large as the request),`);
  console.log(`   one request at a time, ${LIVE_BENCH.requests} of each way interleaved after ${LIVE_BENCH.warmup} not counted; sender's POST → the whole answer read`);
  console.log(table([
    ["way", "requests", "p50 ms", "p99 ms"],
    ...pairRows(`${SMALL_BYTES} B JSON: relay → agent → app → back`, `${SMALL_BYTES} B JSON: straight to the app, the baseline`, small),
    ...pairRows(`${LIVE_BENCH.largeBytes / 1024} KiB JSON: relay → agent → app → back`, `${LIVE_BENCH.largeBytes / 1024} KiB JSON: straight to the app, the baseline`, large),
  ]));
  console.log(`\n2. A2A SendMessage (JSON-RPC, bearer checked at the relay by its hash, then by the stand-in), answered at once with a completed task`);
  console.log(table([["way", "calls", "p50 ms", "p99 ms"], ...pairRows("through the relay: …/inbox/{id}/a2a/v1 → agent → stand-in", "straight to the stand-in's /a2a/v1, the baseline", a2a)]));
  console.log(`\n3. ${LIVE_BENCH.hooks} gateway hooks posted one after another (10 conversations), each one's POST → the stand-in gateway has it;`);
  console.log(`   ${LIVE_BENCH.rounds} rounds alternating: with ${LIVE_BENCH.waiting} live requests held open by a slow app, and with none (after a warm-up round)`);
  console.log(table([
    ["deliveries", "hooks", "p50 ms", "p99 ms", "last hook ms (from the first POST), per round"],
    [`${LIVE_BENCH.waiting} live requests waiting`, String(hol.via.length), fmt(p50(hol.via)), fmt(p99(hol.via)), hol.lastMs.via.map((ms) => fmt(ms)).join(", ")],
    ["none waiting, the baseline", String(hol.straight.length), fmt(p50(hol.straight)), fmt(p99(hol.straight)), hol.lastMs.straight.map((ms) => fmt(ms)).join(", ")],
  ]));
  printGoalSummary("Summary", [
    pairGoal(`live round trip, ${SMALL_BYTES} B JSON`, small, "straight", "adds ≤ 3 ms p50"),
    pairGoal(`live round trip, ${LIVE_BENCH.largeBytes / 1024} KiB JSON`, large, "straight", "adds ≤ 3 ms p50"),
    pairGoal("A2A SendMessage through the relay", a2a, "straight", "adds ≤ 3 ms p50"),
    {
      figure: `queued gateway deliveries beside ${LIVE_BENCH.waiting} waiting live requests`,
      value: `${fmt(p50(hol.via))} (p99 ${fmt(p99(hol.via))}) ms`,
      baseline: `${fmt(p50(hol.straight))} (p99 ${fmt(p99(hol.straight))}) ms none waiting`,
      ratio: p50(hol.via) / p50(hol.straight),
      goal: "unchanged within noise (reported)",
    },
    { figure: "last hook of a round, beside waiting live requests", value: `${fmt(median(hol.lastMs.via))} ms`, baseline: `${fmt(median(hol.lastMs.straight))} ms none waiting`, ratio: median(hol.lastMs.via) / median(hol.lastMs.straight) },
  ]);
}
