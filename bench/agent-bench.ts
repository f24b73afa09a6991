// npm run bench:agent: the local agent end to end, each figure against a baseline measured in the same run.
//   1. latency relay receipt -> gateway accept (webhook POSTs at concurrency 1 and 32), the agent running
//      as a child process (`node local-agent/cli.ts start --json`), vs the relay's own intake POST -> 202;
//   2. the agent's resident memory (VmRSS) idle and at peak under load vs a bare Node child.
// The relay Worker (wrangler deploy --dry-run bundle) runs in Miniflare 5, the gateway is the stand-in
// (scripts/standin-gateway.ts); everything on 127.0.0.1. Prints, asserts nothing.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { idempotencyKeyFor } from "../local-agent/delivery.ts";
import { bundleWorker, REPO_ROOT, startRelayMiniflare } from "../scripts/local-workerd.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import type { StandinGateway } from "../scripts/standin-gateway.ts";
import { NodeChild, sampleRss } from "./agent-child.ts";
import { makeBenchHome } from "./agent-home.ts";
import type { BenchHome } from "./agent-home.ts";
import { printHeader } from "./bench-header.ts";
import { BenchRun } from "./bench-run.ts";
import { runClosedLoop } from "./http-client.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";
import { LOOPBACK_HUB_URL } from "./relay-agents.ts";
import { fmt, median, p50, p99, rate, table } from "./stats.ts";

const CONCURRENCY = [1, 32] as const;
type Concurrency = (typeof CONCURRENCY)[number];
const MESSAGES: Record<Concurrency, number> = { 1: 1000, 32: 3000 };
const WARMUP = 100;
const IDLE_WAIT_MS = 3000;
const IDLE_SAMPLES = 10;
const SAMPLE_EVERY_MS = 100;
const ARRIVAL_TIMEOUT_MS = 15_000;
/** The whole run is aborted (and cleaned up) past this: the bench must stay under ~3 minutes. */
const WATCHDOG_MS = 170_000;

const SUBPATH = "agentgram_inbox/agent";
/** An opaque hub-style body (no envelope inside): stored byte-exact, forwarded as is. ~200 bytes. */
const HOOK_BODY = JSON.stringify({
  message: "Alice (ag_0123456789ab) says: could you look at the thread I shared yesterday and reply by tonight?",
  name: "Alice",
  sessionKey: "agentline:ag_0123456789ab",
});
const BARE_NODE_SCRIPT = "setInterval(()=>{},1000)";

const run = new BenchRun("bench:agent");
const log = run.log;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function spawnChild(label: string, args: string[], env: Record<string, string>): NodeChild {
  const child = new NodeChild(label, args, env, REPO_ROOT);
  run.own(() => child.stop(), () => child.killNow());
  return child;
}

// ---- gateway arrivals ---------------------------------------------------------------------------

/** performance.now() of each hook's arrival at the stand-in gateway, by Idempotency-Key. */
class GatewayArrivals {
  private readonly arrived = new Map<string, number>();
  private readonly waiters = new Map<string, (at: number) => void>();
  duplicates = 0;

  constructor(gw: StandinGateway) {
    gw.onReceive = (hook) => {
      const at = performance.now();
      const key = hook.idempotencyKey ?? "";
      const waiter = this.waiters.get(key);
      if (waiter) {
        this.waiters.delete(key);
        waiter(at);
      } else if (this.arrived.has(key)) this.duplicates++;
      else this.arrived.set(key, at);
    };
  }

  /** The arrival time of `key` (it may have arrived before the POST's 202 was read). */
  arrival(key: string): Promise<number> {
    const at = this.arrived.get(key);
    if (at !== undefined) {
      this.arrived.delete(key);
      return Promise.resolve(at);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(key);
        reject(new Error(`${key} did not reach the gateway within ${ARRIVAL_TIMEOUT_MS} ms`));
      }, ARRIVAL_TIMEOUT_MS);
      this.waiters.set(key, (arrivedAt) => {
        clearTimeout(timer);
        resolve(arrivedAt);
      });
    });
  }
}

// ---- measurements -------------------------------------------------------------------------------

function hookPoster(relay: HttpClient, home: BenchHome) {
  const path = `/inbox/${home.agentId}/hooks/${SUBPATH}`;
  const headers = { authorization: `Bearer ${home.webhookToken}`, "content-type": "application/json" };
  /** POST one hook body; its latency to the 202 and the relay id it got. */
  return async (): Promise<{ postMs: number; id: number; start: number }> => {
    const start = performance.now();
    const answer = await relay.request("POST", path, headers, HOOK_BODY);
    const postMs = performance.now() - start;
    if (answer.status !== 202) throw new Error(`POST ${path} -> ${answer.status}: ${answer.body.slice(0, 300)}`);
    const { id } = JSON.parse(answer.body) as { id: number };
    return { postMs, id, start };
  };
}

/** Baseline: POST -> 202 on a freshly claimed inbox with no agent attached (messages just queue). */
async function runIntakeBaseline(relay: HttpClient, home: BenchHome, count: number, concurrency: number): Promise<LoadResult> {
  const post = hookPoster(relay, home);
  await runClosedLoop(WARMUP, concurrency, async () => (await post()).postMs);
  return runClosedLoop(count, concurrency, async () => (await post()).postMs);
}

interface EndToEnd {
  /** POST start -> hook received by the gateway, measured in this process (closed loop on it). */
  bench: LoadResult;
  /** The same POSTs -> 202. */
  postMs: number[];
  /** latency_ms of the agent's "delivered" lines for the measured ids: relay received_at -> gateway accept. */
  agentMs: number[];
  /** VmRSS samples (KiB) of the agent during the measured run. */
  rssKiB: number[];
  rssSpanMs: number;
}

async function runEndToEnd(relay: HttpClient, home: BenchHome, agent: NodeChild, arrivals: GatewayArrivals, count: number, concurrency: number): Promise<EndToEnd> {
  const post = hookPoster(relay, home);
  const ids: number[] = [];
  const postMs: number[] = [];
  const once = async (record: boolean): Promise<number> => {
    const posted = await post();
    const arrivedAt = await arrivals.arrival(idempotencyKeyFor(home.agentId, posted.id));
    if (record) {
      ids.push(posted.id);
      postMs.push(posted.postMs);
    }
    return arrivedAt - posted.start;
  };
  await runClosedLoop(WARMUP, concurrency, () => once(false));
  const sampler = sampleRss(agent, SAMPLE_EVERY_MS);
  const measured = (async () => {
    const result = await runClosedLoop(count, concurrency, () => once(true));
    // The "delivered" line is written after the gateway's answer reached the agent: wait for the last ones.
    await agent.until(`"delivered" lines for all ${count} measured ids`, () => ids.every((id) => agent.delivered.has(id)), 10_000);
    return result;
  })();
  const outcome = await Promise.allSettled([measured]);
  const rss = sampler.stop();
  const [settled] = outcome;
  if (settled.status === "rejected") throw settled.reason;
  const bench = settled.value;
  return { bench, postMs, agentMs: ids.map((id) => agent.delivered.get(id)!), rssKiB: rss.samplesKiB, rssSpanMs: rss.spanMs };
}

/** IDLE_SAMPLES VmRSS readings of each child, SAMPLE_EVERY_MS apart. */
async function idleRss(targets: NodeChild[]): Promise<Map<NodeChild, number[]>> {
  const out = new Map<NodeChild, number[]>(targets.map((t) => [t, []]));
  for (let i = 0; i < IDLE_SAMPLES; i++) {
    for (const t of targets) out.get(t)!.push(t.memory().rssKiB);
    await sleep(SAMPLE_EVERY_MS);
  }
  return out;
}

// ---- report -------------------------------------------------------------------------------------

const mib = (kib: number) => kib / 1024;

function printLatency(intake: Map<Concurrency, LoadResult>, e2e: Map<Concurrency, EndToEnd>): void {
  console.log(`\n1. Latency: webhook POST /inbox/{id}/hooks/${SUBPATH} -> local agent (child process) -> gateway accept`);
  console.log(`   Closed loop: each of <conc> posters (keep-alive node:http client, Bearer webhook token, ${Buffer.byteLength(HOOK_BODY)}-byte`);
  console.log(`   opaque JSON body) posts, reads the 202 {id}, waits until the stand-in gateway received Idempotency-Key`);
  console.log(`   clawrelay:<agent_id>:<id>, then posts the next. ${WARMUP} warm-up messages per row, not counted.`);
  console.log(`   - agent log: latency_ms of the agent's --json "delivered" stderr line for that id = the agent's Date.now() when the`);
  console.log(`     gateway's 200 reached it − the relay's received_at (workerd Date.now() at intake); integer ms, same clock.`);
  console.log(`     received_at is taken inside the Inbox Durable Object after the body was read (worker/inbox.ts intake()), so this`);
  console.log(`     excludes the time a POST waits in line in front of the relay's Durable Object — most of POST -> 202 at conc 32.`);
  console.log(`   - bench: performance.now() just before the POST -> the stand-in gateway's request handler (in this process).`);
  console.log(`   - baseline: POST -> 202 on a freshly claimed inbox with no agent connected (relay intake alone), same concurrency.`);
  console.log(`   msg/s = measured messages / wall time of the row (first POST -> last gateway receipt).`);
  const rows = [["measure", "conc", "count", "wall s", "msg/s", "p50 ms", "p99 ms"]];
  for (const c of CONCURRENCY) {
    const base = intake.get(c)!;
    const e = e2e.get(c)!;
    rows.push(["baseline: relay intake POST -> 202, no agent", String(c), String(base.count), fmt(base.wallMs / 1000), fmt(rate(base)), fmt(p50(base.latenciesMs)), fmt(p99(base.latenciesMs))]);
    rows.push(["agent log: relay receipt -> gateway accept", String(c), String(e.agentMs.length), fmt(e.bench.wallMs / 1000), fmt(rate(e.bench)), fmt(p50(e.agentMs)), fmt(p99(e.agentMs))]);
    rows.push(["bench: POST start -> gateway received", String(c), String(e.bench.count), "", "", fmt(p50(e.bench.latenciesMs)), fmt(p99(e.bench.latenciesMs))]);
    rows.push(["  (same POSTs -> 202, agent attached)", String(c), String(e.postMs.length), "", "", fmt(p50(e.postMs)), fmt(p99(e.postMs))]);
  }
  console.log(table(rows));
  for (const c of CONCURRENCY) {
    const base = intake.get(c)!.latenciesMs;
    const e = e2e.get(c)!;
    console.log(
      `   concurrency ${c}: end-to-end (agent log) / intake baseline p50 ${fmt(p50(e.agentMs) / p50(base))}×, p99 ${fmt(p99(e.agentMs) / p99(base))}×;` +
        ` (bench) p50 ${fmt(p50(e.bench.latenciesMs) / p50(base))}×, p99 ${fmt(p99(e.bench.latenciesMs) / p99(base))}×;` +
        ` throughput intake/end-to-end ${fmt(rate(intake.get(c)!) / rate(e.bench))}×`,
    );
  }
}

interface MemoryFigures {
  bareIdle: number[];
  bareTsIdle: number[];
  agentIdle: number[];
  e2e: Map<Concurrency, EndToEnd>;
  agentHwmKiB: number;
}

function printMemory(m: MemoryFigures): void {
  const base = median(m.bareIdle);
  const peak32 = Math.max(...m.e2e.get(32)!.rssKiB);
  const peak1 = Math.max(...m.e2e.get(1)!.rssKiB);
  const e32 = m.e2e.get(32)!;
  console.log(`\n2. Resident memory of the local agent (VmRSS from /proc/<pid>/status)`);
  console.log(`   All children spawned with this Node binary (${process.execPath}), the same env`);
  console.log(`   (PATH, HOME, CLAWRELAY_HOME, OPENCLAW_CONFIG_PATH) and cwd, stdout ignored, stderr piped, at the same moment.`);
  console.log(`   Idle: ${IDLE_WAIT_MS / 1000} s after the agent logged "relay connected", ${IDLE_SAMPLES} readings ${SAMPLE_EVERY_MS} ms apart of every`);
  console.log(`   child: median (range). Peak: max of readings every ${SAMPLE_EVERY_MS} ms during the measured part of the row.`);
  const rows = [["process / moment", "VmRSS MiB", "range MiB", "× bare node"]];
  const range = (v: number[]) => `${fmt(mib(Math.min(...v)))}–${fmt(mib(Math.max(...v)))}`;
  rows.push([`baseline: node -e "${BARE_NODE_SCRIPT}", idle`, fmt(mib(base)), range(m.bareIdle), "1.00"]);
  rows.push([`bare .ts file (same script, type stripping), idle`, fmt(mib(median(m.bareTsIdle))), range(m.bareTsIdle), fmt(median(m.bareTsIdle) / base)]);
  rows.push([`local agent, idle after connecting`, fmt(mib(median(m.agentIdle))), range(m.agentIdle), fmt(median(m.agentIdle) / base)]);
  rows.push([`local agent, peak under concurrency 1`, fmt(mib(peak1)), "", fmt(peak1 / base)]);
  rows.push([`local agent, peak under concurrency 32`, fmt(mib(peak32)), "", fmt(peak32 / base)]);
  rows.push([`local agent, VmHWM at the end (start-up incl.)`, fmt(mib(m.agentHwmKiB)), "", fmt(m.agentHwmKiB / base)]);
  console.log(table(rows));
  console.log(
    `   concurrency 32: ${e32.rssKiB.length} readings over ${fmt(e32.rssSpanMs / 1000)} s (mean gap ${fmt(e32.rssSpanMs / Math.max(1, e32.rssKiB.length - 1))} ms);` +
      ` peak − idle = ${fmt(mib(peak32 - median(m.agentIdle)))} MiB`,
  );
}

// ---- main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  await printHeader("clawrelay local-agent bench", " (bench and children)");
  console.log(`all traffic on 127.0.0.1; the bench (load client + stand-in gateway), workerd and the agent share the same cores`);
  console.log(`N per row: ${MESSAGES[1]} messages at concurrency 1, ${MESSAGES[32]} at concurrency 32 (+${WARMUP} warm-up each)`);

  const tmpDir = await run.makeTmpDir("clawrelay-agent-bench-");
  log("bundling the relay (wrangler deploy --dry-run)…");
  const bundle = await bundleWorker("wrangler.toml", path.join(tmpDir, "relay"));
  const relay = await run.startMiniflare(() => startRelayMiniflare(bundle, LOOPBACK_HUB_URL));
  const relayOrigin = relay.origin;
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const arrivals = new GatewayArrivals(gateway);

  const homeDir = path.join(tmpDir, "agent");
  await mkdir(homeDir);
  const home = await makeBenchHome(homeDir, relayOrigin.origin, LOOPBACK_HUB_URL, gateway, "Bench Agent");
  const idleTs = path.join(tmpDir, "idle.ts");
  await writeFile(idleTs, `const keep: ReturnType<typeof setInterval> = setInterval(() => {}, 1000);\nexport { keep };\n`);

  log(`starting the agent ${home.agentId} and the baseline children…`);
  const agent = spawnChild("local agent", [path.join(REPO_ROOT, "local-agent/cli.ts"), "start", "--json"], home.env);
  const bare = spawnChild("bare node", ["-e", BARE_NODE_SCRIPT], home.env);
  const bareTs = spawnChild("bare .ts", [idleTs], home.env);
  await agent.waitForEvent("relay connected", 20_000);
  await sleep(IDLE_WAIT_MS);
  const idle = await idleRss([agent, bare, bareTs]);
  await bare.stop();
  await bareTs.stop();

  const intake = new Map<Concurrency, LoadResult>();
  for (const c of CONCURRENCY) {
    log(`baseline: relay intake alone at concurrency ${c}…`);
    const dir = path.join(tmpDir, `intake-${c}`);
    await mkdir(dir);
    intake.set(c, await runIntakeBaseline(relay, await makeBenchHome(dir, relayOrigin.origin, LOOPBACK_HUB_URL, gateway, `Intake ${c}`), MESSAGES[c], c));
  }
  const e2e = new Map<Concurrency, EndToEnd>();
  for (const c of CONCURRENCY) {
    log(`end to end through the agent at concurrency ${c}…`);
    e2e.set(c, await runEndToEnd(relay, home, agent, arrivals, MESSAGES[c], c));
  }
  const agentHwmKiB = agent.memory().hwmKiB;

  const expected = CONCURRENCY.reduce((sum, c) => sum + WARMUP + MESSAGES[c], 0);
  const refused = gateway.requests.filter((r) => r.status !== 200).length;
  const problems = agent.events.filter((e) => e.event !== "delivered" && e.event !== "relay connected" && e.event !== "agent started");
  await agent.stop();

  printLatency(intake, e2e);
  printMemory({ bareIdle: idle.get(bare)!, bareTsIdle: idle.get(bareTs)!, agentIdle: idle.get(agent)!, e2e, agentHwmKiB });
  console.log(`\nchecks: gateway accepted ${gateway.received.length}/${expected} hooks, ${refused} refused/replayed requests, ${arrivals.duplicates} duplicate keys;`);
  console.log(`        agent logged ${agent.delivered.size} "delivered" lines; other agent events: ${problems.map((e) => e.event).join(", ") || "none"}`);
  console.log(`whole run ${fmt((performance.now() - started) / 1000)} s (bundling, Miniflare start-up, ${IDLE_WAIT_MS / 1000} s idle wait included)`);
}

// A signal or the watchdog kills the children and removes the directory at once, then cleans up.
await run.run(main, { watchdogMs: WATCHDOG_MS, releaseFirst: true });
