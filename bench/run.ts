// The one bench entry, `node bench/run.ts <scenario> [--option value …]` (the npm bench scripts): runs the scenario in
// a BenchRun frame between the header and its wall time. Figures are printed against baselines of the same run.
import { parseArgs } from "node:util";
import { BenchRun } from "./bench-run.ts";
import { fmt, loadAverage, printHeader } from "./report.ts";

/** `options`: numeric --options and their defaults; `includes`: what the wall time covers; `main` imported when chosen, so only its modules load. */
type Scenario = { title: string; nodeNote?: string; options?: Record<string, number>; watchdogMs?: number; includes: string; main: () => Promise<(run: BenchRun, args: Record<string, number>) => Promise<void>> };

const SCENARIOS: Record<string, Scenario> = {
  // --part 5: only part 5 and the intake steps of part 1 it prints (0, the default: every part).
  relay: { title: "clawrelay bench", includes: "bundling, Miniflare start-up, pre-signing included", options: { part: 0 }, main: async () => (await import("./relay-scenario.ts")).relayScenario },
  agent: {
    title: "clawrelay local-agent bench", nodeNote: " (bench and children)", watchdogMs: 1_200_000, includes: "bundling, Miniflare start-up, 3 s idle wait, a 20 s outage included",
    options: { "lanes-only": 0 }, main: async () => (await import("./agent-scenario.ts")).agentScenario },
  directory: {
    title: "clawrelay directory and delegation bench", watchdogMs: 900_000, includes: "bundling, key generation, loading, restarts included",
    options: { agents: 10_000, large: 100_000, updates: 1500, queries: 200, delegations: 200 }, main: async () => (await import("./directory-scenario.ts")).directoryScenario,
  },
  sources: { title: "clawrelay bench:sources", includes: "bundling, Miniflare start-up included", main: async () => (await import("./sources-scenario.ts")).sourcesScenario },
  live: { title: "clawrelay bench:live", includes: "bundling, Miniflare start-up, agent starts included", main: async () => (await import("./live-scenario.ts")).liveScenario },
  vectors: {
    title: "clawrelay bench:vectors", includes: "generating vectors and cards, loading the local model",
    options: { cards: 20_000 }, main: async () => (await import("./vectors-scenario.ts")).vectorsScenario,
  },
  lockout: {
    title: "clawrelay bench:lockout", includes: "bundling, Miniflare start-up, 400 ms pauses included",
    options: { rounds: 30, clients: 32, "pause-ms": 400 }, main: async () => (await import("./lockout-scenario.ts")).lockoutScenario,
  },
};

const [name = "", ...rest] = process.argv.slice(2);
const scenario = SCENARIOS[name];
if (!scenario) {
  console.error(`usage: node bench/run.ts <${Object.keys(SCENARIOS).join("|")}> [--option value …]`);
  process.exit(2);
}
const spec = Object.fromEntries(Object.entries(scenario.options ?? {}).map(([option, value]) => [option, { type: "string" as const, default: String(value) }]));
const args = Object.fromEntries(Object.entries(parseArgs({ args: rest, options: spec }).values).map(([option, value]) => [option, Number(value)]));
const run = new BenchRun(name === "relay" ? "bench" : `bench:${name}`);
await run.run(async () => {
  const started = performance.now();
  await printHeader(scenario.title, scenario.nodeNote);
  await (await scenario.main())(run, args);
  console.log(`\nwhole run ${fmt((performance.now() - started) / 1000)} s (${scenario.includes}); load avg now ${loadAverage()}`);
}, scenario.watchdogMs);
