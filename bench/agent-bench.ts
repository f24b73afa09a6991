// npm run bench:agent: the local agent end to end, each figure against a baseline measured in the same run.
//   1. latency relay receipt -> gateway accept (webhook POSTs at concurrency 1 and 32), the agent running
//      as a child process (`node local-agent/cli.ts start --json`), vs the relay's own intake POST -> 202;
//   2. the agent's resident memory (VmRSS) idle and at peak under load vs a bare Node child;
//   3. draining a backlog into a healthy gateway and into one answering 503 to 10 % of posts;
//   and a summary of every figure against its baseline and goal.
// The agent runs as users install it: the built CLI (dist/local-agent/cli.js, built first by this bench).
// The relay Worker (wrangler deploy --dry-run bundle) runs in Miniflare 5, the gateway is the stand-in
// (scripts/standin-gateway.ts); everything on 127.0.0.1. Prints, asserts nothing.
import { execFileSync } from "node:child_process";
import { chmodSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import path from "node:path";
import { idempotencyKeyFor } from "../local-agent/delivery/delivery.ts";
import { bundleWorker, REPO_ROOT, startRelayMiniflare } from "../scripts/local-workerd.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import type { StandinGateway } from "../scripts/standin-gateway.ts";
import { NodeChild, sampleRss } from "./agent-child.ts";
import { makeBenchHome } from "./agent-home.ts";
import type { BenchHome } from "./agent-home.ts";
import { printHeader } from "./bench-header.ts";
import { BenchRun } from "./bench-run.ts";
import { runDrain } from "./delivery-drain.ts";
import type { DrainResult } from "./delivery-drain.ts";
import { printGoalSummary } from "./goal-summary.ts";
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
const CLI = path.join(REPO_ROOT, "dist/local-agent/cli.js");
const DRAIN = { messages: 1440, conversations: 48 };
const MEMORY_GOAL_MIB = 60;

const run = new BenchRun("bench:agent");
const log = run.log;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function spawnChild(label: string, args: string[], env: Record<string, string>, node?: string): NodeChild {
  const child = new NodeChild(label, args, env, REPO_ROOT, node);
  run.own(() => child.stop(), () => child.killNow());
  return child;
}

/**
 * The agent as users start it: the installed bin run through its shebang (so its Node flags apply),
 * with `node` resolved on PATH from the directory of the chosen binary.
 */
function spawnAgent(label: string, env: Record<string, string>, node = process.execPath): NodeChild {
  return spawnChild(label, ["start", "--json"], { ...env, PATH: `${path.dirname(node)}:${env.PATH ?? ""}` }, CLI);
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

/** IDLE_SAMPLES VmRSS (and RssAnon) readings of each child, SAMPLE_EVERY_MS apart. */
async function idleRss(targets: NodeChild[]): Promise<{ rss: Map<NodeChild, number[]>; anon: Map<NodeChild, number[]> }> {
  const rss = new Map<NodeChild, number[]>(targets.map((t) => [t, []]));
  const anon = new Map<NodeChild, number[]>(targets.map((t) => [t, []]));
  for (let i = 0; i < IDLE_SAMPLES; i++) {
    for (const t of targets) {
      const m = t.memory();
      rss.get(t)!.push(m.rssKiB);
      anon.get(t)!.push(m.anonKiB);
    }
    await sleep(SAMPLE_EVERY_MS);
  }
  return { rss, anon };
}

/** Baseline of the end-to-end path: the same body POSTed straight to the stand-in gateway, keep-alive. */
async function runGatewayDirect(gateway: StandinGateway, count: number, concurrency: number): Promise<LoadResult> {
  const agent = new HttpAgent({ keepAlive: true, maxSockets: concurrency });
  const body = Buffer.from(HOOK_BODY);
  let n = 0;
  const post = () =>
    new Promise<number>((resolve, reject) => {
      const start = performance.now();
      const req = httpRequest(
        {
          host: "127.0.0.1", port: gateway.port, method: "POST", path: `${gateway.hooksPath}/${SUBPATH}`, agent,
          headers: { authorization: `Bearer ${gateway.token}`, "content-type": "application/json", "content-length": body.length, "idempotency-key": `direct-${concurrency}-${n++}` },
        },
        (res) => {
          res.resume();
          res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - start) : reject(new Error(`direct post -> ${res.statusCode}`))));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  try {
    await runClosedLoop(WARMUP, concurrency, post);
    return await runClosedLoop(count, concurrency, post);
  } finally {
    agent.destroy();
  }
}

// ---- report -------------------------------------------------------------------------------------

const mib = (kib: number) => kib / 1024;

function printLatency(intake: Map<Concurrency, LoadResult>, e2e: Map<Concurrency, EndToEnd>, direct: Map<Concurrency, LoadResult>): void {
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
    const d = direct.get(c)!;
    rows.push(["baseline: POST straight to the stand-in gateway", String(c), String(d.count), fmt(d.wallMs / 1000), fmt(rate(d)), fmt(p50(d.latenciesMs)), fmt(p99(d.latenciesMs))]);
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
  bareAnon: number[];
  agentAnon: number[];
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
  rows.push([`RssAnon (private part of VmRSS): bare node, idle`, fmt(mib(median(m.bareAnon))), range(m.bareAnon), "1.00"]);
  rows.push([`RssAnon: local agent, idle`, fmt(mib(median(m.agentAnon))), range(m.agentAnon), fmt(median(m.agentAnon) / median(m.bareAnon))]);
  console.log(table(rows));
  console.log(`   VmRSS − RssAnon is file-backed: the node binary's pages and libraries, shared with every other node process.`);
  console.log(
    `   concurrency 32: ${e32.rssKiB.length} readings over ${fmt(e32.rssSpanMs / 1000)} s (mean gap ${fmt(e32.rssSpanMs / Math.max(1, e32.rssKiB.length - 1))} ms);` +
      ` peak − idle = ${fmt(mib(peak32 - median(m.agentIdle)))} MiB`,
  );
}

function printDrains(drains: DrainResult[]): void {
  console.log(`\n3. Draining a backlog: ${DRAIN.messages} hub bodies over ${DRAIN.conversations} conversations (sessionKey agentline:<sender>), queued while`);
  console.log(`   no agent was connected; then the agent (built CLI) starts. Timed from its "relay connected" line to the last arrival at`);
  console.log(`   the stand-in gateway. Failing gateway: each post answered 503 with the given probability (seeded). Order is checked per`);
  console.log(`   conversation; duplicates by Idempotency-Key among accepted posts.`);
  console.log(table([
    ["gateway", "posts in flight", "wall s", "msg/s", "posts", "503s", "order violations", "duplicates"],
    ...drains.map((d) => [d.label, String(d.concurrency ?? 4), fmt(d.wallMs / 1000), fmt(d.rate), String(d.posts), String(d.refused), String(d.orderViolations), String(d.duplicates)]),
  ]));
}

/**
 * The machine's own `node` (first on PATH outside node_modules), when it is another version than the
 * project's: users run the installed CLI on it (Node >= 20), so its figure is the one they see.
 */
function systemNode(): { path: string; version: string } | null {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (!dir || dir.includes("node_modules")) continue;
    const candidate = path.join(dir, "node");
    try {
      const version = execFileSync(candidate, ["--version"], { encoding: "utf8" }).trim();
      return version === process.version ? null : { path: candidate, version };
    } catch {
      // not here
    }
  }
  return null;
}

// ---- main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  await printHeader("clawrelay local-agent bench", " (bench and children)");
  console.log(`all traffic on 127.0.0.1; the bench (load client + stand-in gateway), workerd and the agent share the same cores`);
  console.log(`N per row: ${MESSAGES[1]} messages at concurrency 1, ${MESSAGES[32]} at concurrency 32 (+${WARMUP} warm-up each)`);

  const tmpDir = await run.makeTmpDir("clawrelay-agent-bench-");
  log("building the CLI users install (tsc -p tsconfig.build.json -> dist/)…");
  execFileSync(process.execPath, [path.join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", path.join(REPO_ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  // Run as a bin, through its shebang, as npm's bin link runs it: tsc does not set the executable bit.
  chmodSync(CLI, 0o755);
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
  const agent = spawnAgent("local agent", home.env);
  const bare = spawnChild("bare node", ["-e", BARE_NODE_SCRIPT], home.env);
  const bareTs = spawnChild("bare .ts", [idleTs], home.env);
  await agent.waitForEvent("relay connected", 20_000);
  await sleep(IDLE_WAIT_MS);
  const idle = await idleRss([agent, bare, bareTs]);
  await bare.stop();
  await bareTs.stop();
  // The same idle figure on the machine's own Node, each against its own bare node.
  const other = systemNode();
  let onSystemNode: { version: string; agent: number[]; bare: number[]; agentAnon: number[]; bareAnon: number[] } | null = null;
  if (other) {
    log(`idle memory again on the machine's node ${other.version}…`);
    const dir = path.join(tmpDir, "agent-system-node");
    await mkdir(dir);
    const otherHome = await makeBenchHome(dir, relayOrigin.origin, LOOPBACK_HUB_URL, gateway, "Bench Agent (system node)");
    const agent2 = spawnAgent(`local agent (node ${other.version})`, otherHome.env, other.path);
    const bare2 = spawnChild(`bare node ${other.version}`, ["-e", BARE_NODE_SCRIPT], otherHome.env, other.path);
    await agent2.waitForEvent("relay connected", 20_000);
    await sleep(IDLE_WAIT_MS);
    const idle2 = await idleRss([agent2, bare2]);
    onSystemNode = { version: other.version, agent: idle2.rss.get(agent2)!, bare: idle2.rss.get(bare2)!, agentAnon: idle2.anon.get(agent2)!, bareAnon: idle2.anon.get(bare2)! };
    await agent2.stop();
    await bare2.stop();
  }

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
  const direct = new Map<Concurrency, LoadResult>();
  for (const c of CONCURRENCY) {
    log(`baseline: straight to the stand-in gateway at concurrency ${c}…`);
    direct.set(c, await runGatewayDirect(gateway, MESSAGES[c], c));
  }

  const expected = CONCURRENCY.reduce((sum, c) => sum + WARMUP + MESSAGES[c], 0);
  const refused = gateway.requests.filter((r) => r.status !== 200).length;
  const problems = agent.events.filter((e) => e.event !== "delivered" && e.event !== "relay connected" && e.event !== "agent started");
  await agent.stop();

  const drains: DrainResult[] = [];
  for (const [label, failureRate] of [["healthy", 0], ["10 % 503", 0.1]] as const) {
    log(`draining ${DRAIN.messages} queued messages into a ${label} gateway…`);
    drains.push(await runDrain(run, relay, relayOrigin.origin, tmpDir, CLI, { label, failureRate, ...DRAIN }));
  }

  printLatency(intake, e2e, direct);
  printMemory({ bareIdle: idle.rss.get(bare)!, bareTsIdle: idle.rss.get(bareTs)!, agentIdle: idle.rss.get(agent)!, bareAnon: idle.anon.get(bare)!, agentAnon: idle.anon.get(agent)!, e2e, agentHwmKiB });
  if (onSystemNode) {
    console.log(`   On the machine's node ${onSystemNode.version} (what the installed CLI runs on), same idle procedure:`);
    console.log(table([
      ["process", "VmRSS MiB", "RssAnon MiB"],
      [`bare node -e, idle`, fmt(mib(median(onSystemNode.bare))), fmt(mib(median(onSystemNode.bareAnon)))],
      [`local agent, idle after connecting`, fmt(mib(median(onSystemNode.agent))), fmt(mib(median(onSystemNode.agentAnon)))],
    ]));
  }
  printDrains(drains);
  const [healthy, failing] = drains as [DrainResult, DrainResult];
  const agentIdleMiB = mib(median(idle.rss.get(agent)!));
  const bareMiB = mib(median(idle.rss.get(bare)!));
  const systemRows = onSystemNode
    ? [{
        figure: `agent resident memory, idle, node ${onSystemNode.version}`, value: `${fmt(mib(median(onSystemNode.agent)))} MiB`,
        baseline: `bare node -e ${fmt(mib(median(onSystemNode.bare)))} MiB`, ratio: median(onSystemNode.agent) / median(onSystemNode.bare),
        goal: `≤ ${MEMORY_GOAL_MIB} MiB`, met: mib(median(onSystemNode.agent)) <= MEMORY_GOAL_MIB,
      }]
    : [];
  printGoalSummary("Summary (bench:agent)", [
    {
      figure: "end to end p50, concurrency 1 (agent log)", value: `${fmt(p50(e2e.get(1)!.agentMs))} ms`, baseline: `direct to gateway ${fmt(p50(direct.get(1)!.latenciesMs))} ms`,
      ratio: p50(e2e.get(1)!.agentMs) / p50(direct.get(1)!.latenciesMs), goal: "reported", met: null,
    },
    {
      figure: `agent resident memory, idle, node ${process.version}`, value: `${fmt(agentIdleMiB)} MiB`, baseline: `bare node -e ${fmt(bareMiB)} MiB`,
      ratio: agentIdleMiB / bareMiB, goal: `≤ ${MEMORY_GOAL_MIB} MiB`, met: agentIdleMiB <= MEMORY_GOAL_MIB,
    },
    ...systemRows,
    {
      figure: "agent private memory (RssAnon), idle", value: `${fmt(mib(median(idle.anon.get(agent)!)))} MiB`, baseline: `bare node -e ${fmt(mib(median(idle.anon.get(bare)!)))} MiB`,
      ratio: median(idle.anon.get(agent)!) / median(idle.anon.get(bare)!), goal: "reported", met: null,
    },
    {
      figure: "drain with 10 % 503s", value: `${fmt(failing.rate)} msg/s`, baseline: `healthy gateway ${fmt(healthy.rate)} msg/s`,
      ratio: failing.rate / healthy.rate, goal: "≥ 0.5× healthy, order kept", met: failing.rate / healthy.rate >= 0.5 && failing.orderViolations === 0 && failing.duplicates === 0,
    },
  ]);
  console.log(`\nchecks: gateway accepted ${gateway.received.length}/${expected} hooks, ${refused} refused/replayed requests, ${arrivals.duplicates} duplicate keys;`);
  console.log(`        agent logged ${agent.delivered.size} "delivered" lines; other agent events: ${problems.map((e) => e.event).join(", ") || "none"}`);
  console.log(`whole run ${fmt((performance.now() - started) / 1000)} s (bundling, Miniflare start-up, ${IDLE_WAIT_MS / 1000} s idle wait included)`);
}

// A signal or the watchdog kills the children and removes the directory at once, then cleans up.
await run.run(main, { watchdogMs: WATCHDOG_MS, releaseFirst: true });
