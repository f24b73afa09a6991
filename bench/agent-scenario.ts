// `npm run bench:agent`: the local agent as users install it (the built CLI, a child process) against a stand-in gateway:
// 1. relay receipt -> gateway accept vs the intake alone and a direct POST; 2. its memory vs bare Node; 3. backlog drains;
// 4. the fault soak's shape (13 conversations, 503s and resets, a 20 s outage) against its healthy drain; 5. lanes: a hanging
// app's backlog ahead of gateway hooks, and local apps failing a share of posts, each against the same without (lanes-drain.ts).
// `--lanes-only 1` runs part 5 alone.
import { execFileSync } from "node:child_process";
import { chmodSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { DEFAULT_CONCURRENCY, idempotencyKeyFor } from "../local-agent/delivery/delivery.ts";
import { REPO_ROOT, startRelayMiniflare } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import { NodeChild, readMemory } from "./agent-child.ts";
import type { Memory } from "./agent-child.ts";
import { runDrain } from "./agent-drain.ts";
import { makeBenchHome } from "./agent-home.ts";
import { runLanes } from "./lanes-drain.ts";
import type { BenchHome } from "./agent-home.ts";
import { Arrivals } from "./arrivals.ts";
import type { BenchRun } from "./bench-run.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";
import { runClosedLoop, warmedLoop } from "./http-client.ts";
import { LOOPBACK_HUB_URL } from "./relay-agents.ts";
import { fmt, latencyRow, loadRow, median, p50, p99, printGoalSummary, rate, table, unitRow } from "./report.ts";

const [CONCURRENCY, MESSAGES] = [[1, 32] as const, { 1: 1000, 32: 3000 }];
const [WARMUP, IDLE_WAIT_MS, SAMPLE_EVERY_MS, MEMORY_GOAL_MIB] = [100, 3000, 100, 60];
/** An opaque hub-style body (no envelope inside): stored byte-exact, forwarded as is. */
const HOOK_BODY = JSON.stringify({ message: "Alice (ag_0123456789ab) says: could you look at the thread I shared yesterday and reply by tonight?", name: "Alice", sessionKey: "agentline:ag_0123456789ab" });
const SUBPATH = "agentgram_inbox/agent";
const BARE_NODE_SCRIPT = "setInterval(()=>{},1000)";
const CLI = path.join(REPO_ROOT, "dist/local-agent/cli.js");
const DRAIN = { messages: 1440, conversations: 48 };
/** The outside fault soak's shape (issue 22): 3,500 messages, 13 conversations, 10 % 503s + 3 % resets, a 20 s outage; healthy/faulty pairs in `rounds`. */
const SOAK = { messages: 3500, conversations: 13, failureRate: 0.1, resetRate: 0.03, outageMs: 20_000, rounds: 3 };
const mib = (kib: number) => kib / 1024;

const hookPoster = (relay: HttpClient, home: BenchHome) => async () => {
  const [route, start] = [`/inbox/${home.agentId}/hooks/${SUBPATH}`, performance.now()];
  const answer = await relay.request("POST", route, { authorization: `Bearer ${home.webhookToken}`, "content-type": "application/json" }, HOOK_BODY);
  if (answer.status !== 202) throw new Error(`POST ${route} -> ${answer.status}: ${answer.body.slice(0, 300)}`);
  return { postMs: performance.now() - start, id: (JSON.parse(answer.body) as { id: number }).id, start };
};

async function runEndToEnd(relay: HttpClient, home: BenchHome, agent: NodeChild, arrivals: Arrivals, count: number, concurrency: number) {
  const [post, ids, postMs] = [hookPoster(relay, home), [] as number[], [] as number[]];
  const once = async (measured: boolean) => {
    const posted = await post();
    const arrivedAt = await arrivals.arrival(idempotencyKeyFor(home.agentId, posted.id), 15_000);
    if (measured) ids.push(posted.id), postMs.push(posted.postMs);
    return arrivedAt - posted.start;
  };
  await runClosedLoop(WARMUP, concurrency, () => once(false));
  const sampler = agent.sampleRss(SAMPLE_EVERY_MS);
  try {
    const bench = await runClosedLoop(count, concurrency, () => once(true));
    // The "delivered" line is written after the gateway's answer reached the agent: wait for the last ones.
    await agent.until(`"delivered" lines for all ${count} measured ids`, () => ids.every((id) => agent.delivered.has(id)), 10_000);
    return { bench, postMs, agentMs: ids.map((id) => agent.delivered.get(id)!), rss: sampler.stop() };
  } finally {
    sampler.stop();
  }
}

/** The machine's own `node` (first on PATH outside node_modules) if it is another version: users run the installed CLI on it. */
function systemNode(): { path: string; version: string } | null {
  for (const node of (process.env.PATH ?? "").split(":").filter((d) => d && !d.includes("node_modules")).map((d) => path.join(d, "node"))) {
    let version = process.version;
    try { version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim(); } catch { continue; }
    return version === process.version ? null : { path: node, version };
  }
  return null;
}

export async function agentScenario(run: BenchRun, args: Record<string, number>): Promise<void> {
  console.log(`all traffic on 127.0.0.1, the bench, workerd and the agent on the same cores; N per row: ${MESSAGES[1]} at concurrency 1, ${MESSAGES[32]} at 32 (+${WARMUP} warm-up)`);
  run.log("building the CLI users install (tsc -p tsconfig.build.json -> dist/)…");
  execFileSync(process.execPath, [path.join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", path.join(REPO_ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  // Run as a bin, through its shebang, as npm's bin link runs it: tsc does not set the executable bit.
  chmodSync(CLI, 0o755);
  const [bundle] = (await run.bundle("wrangler.toml")) as [WorkerBundle];
  const relay = await run.startMiniflare(() => startRelayMiniflare(bundle, LOOPBACK_HUB_URL));
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const arrivals = new Arrivals();
  gateway.onReceive = (hook) => arrivals.arrived(hook.idempotencyKey ?? "");
  const newHome = (dir: string, name: string) => makeBenchHome(path.join(run.dir, dir), relay.origin.origin, gateway, name);
  const [home, other] = [await newHome("agent", "Bench Agent"), systemNode()];
  const spawn = (label: string, bin: string, args: string[], env: Record<string, string>) => {
    const child = new NodeChild(label, bin, args, env, REPO_ROOT);
    run.own(() => child.stop(), () => child.killNow());
    return child;
  };
  // As users start it: the installed bin through its shebang (its Node flags apply), `node` on PATH next to the chosen binary.
  const spawnAgent = (label: string, env: Record<string, string>, node = process.execPath) => spawn(label, CLI, ["start", "--json"], { ...env, PATH: `${path.dirname(node)}:${env.PATH ?? ""}` });
  if (args["lanes-only"]) {
    const lanes = await runLanes(run, relay, run.dir, spawnAgent);
    lanes.print();
    return printGoalSummary("Summary (bench:agent, part 5 alone)", lanes.goals);
  }
  const idle = async (env: Record<string, string>, node = process.execPath, version = process.version) => {
    const [agent, bare] = [spawnAgent(`local agent (node ${version})`, env, node), spawn(`bare node ${version}`, node, ["-e", BARE_NODE_SCRIPT], env)];
    await agent.waitForEvent("relay connected");
    await new Promise((resolve) => setTimeout(resolve, IDLE_WAIT_MS));
    const [agentIdle, bareIdle] = (await readMemory([agent, bare], SAMPLE_EVERY_MS)) as [Memory, Memory];
    await bare.stop();
    return { agent, version, agentIdle, bareIdle };
  };
  run.log(`idle memory of the agent ${home.agentId} and a bare node${other ? `, then again on the machine's node ${other.version}` : ""}…`);
  const { agent, agentIdle, bareIdle } = await idle(home.env);
  // The same idle figure on the machine's own Node, each against its own bare node.
  const onSystemNode = other ? await idle((await newHome("agent-system-node", "Bench Agent (system node)")).env, other.path, other.version) : null;
  await onSystemNode?.agent.stop();
  const [intake, e2e, direct] = [new Map<number, LoadResult>(), new Map<number, Awaited<ReturnType<typeof runEndToEnd>>>(), new Map<number, LoadResult>()];
  for (const c of CONCURRENCY) {
    // A freshly claimed inbox with no agent attached: messages just queue.
    const post = hookPoster(relay, await newHome(`intake-${c}`, `Intake ${c}`));
    intake.set(c, await warmedLoop(WARMUP, MESSAGES[c], c, async () => (await post()).postMs));
  }
  for (const c of CONCURRENCY) e2e.set(c, await runEndToEnd(relay, home, agent, arrivals, MESSAGES[c], c));
  const agentHwmKiB = agent.memory().hwm;
  const [accepted, refused, duplicates] = [gateway.received.length, gateway.requests.filter((r) => r.status !== 200).length, arrivals.duplicates];
  for (const c of CONCURRENCY) {
    // A bare node:http POST whose answer is only drained: as little of the client's own cost as can be.
    const [agent, body] = [new http.Agent({ keepAlive: true, maxSockets: c }), Buffer.from(HOOK_BODY)];
    const headers = { authorization: `Bearer ${gateway.token}`, "content-type": "application/json", "content-length": String(body.length) };
    const post = (i: number) => new Promise<number>((resolve, reject) => {
      const [start, options] = [performance.now(), { host: "127.0.0.1", port: gateway.port, method: "POST", path: `${gateway.hooksPath}/${SUBPATH}`, agent, headers: { ...headers, "idempotency-key": `direct-${c}-${i}` } }];
      http.request(options, (res) => res.resume().on("end", () => (res.statusCode === 200 ? resolve(performance.now() - start) : reject(new Error(`direct POST -> ${res.statusCode}`))))).on("error", reject).end(body);
    });
    direct.set(c, await warmedLoop(WARMUP, MESSAGES[c], c, post).finally(() => agent.destroy()));
  }
  const problems = agent.events.map((e) => e.event).filter((e) => !["delivered", "relay connected", "agent started"].includes(e));
  await agent.stop();
  run.log(`draining ${DRAIN.messages} queued messages into a healthy gateway and a 10 % 503 one…`);
  const [healthy, failing] = [await runDrain(run, relay, run.dir, { label: "healthy", failureRate: 0, ...DRAIN }, spawnAgent), await runDrain(run, relay, run.dir, { label: "10 % 503", failureRate: 0.1, ...DRAIN }, spawnAgent)];
  run.log(`the fault soak's shape: ${SOAK.messages} messages over ${SOAK.conversations} conversations, ${SOAK.rounds} × (healthy, 10 % 503 + 3 % resets), then with a ${SOAK.outageMs / 1000} s outage…`);
  const { outageMs, rounds, ...faults } = SOAK;
  const soak: Awaited<ReturnType<typeof runDrain>>[] = [];
  for (let r = 1; r <= rounds; r++) {
    soak.push(await runDrain(run, relay, run.dir, { ...faults, label: `${r}: healthy`, failureRate: 0, resetRate: 0 }, spawnAgent));
    soak.push(await runDrain(run, relay, run.dir, { ...faults, label: `${r}: 10 % 503 + 3 % resets` }, spawnAgent));
  }
  soak.push(await runDrain(run, relay, run.dir, { ...faults, outageMs, label: `the same + a ${outageMs / 1000} s outage` }, spawnAgent));
  const outage = soak.at(-1)!.outage!;
  const lanes = await runLanes(run, relay, run.dir, spawnAgent);
  const [soakHealthy, soakFaults] = [0, 1].map((odd) => median(soak.slice(0, -1).filter((_, i) => i % 2 === odd).map((d) => d.rate))) as [number, number];
  console.log(`\n1. Latency: webhook POST (${Buffer.byteLength(HOOK_BODY)} bytes) -> local agent -> gateway accept, closed loop; agent log: from the relay's received_at.`);
  console.log(table([
    ["measure", "conc", "count", "wall s", "msg/s", "p50 ms", "p99 ms"],
    ...CONCURRENCY.flatMap((c) => {
      const e = e2e.get(c)!;
      return [
        loadRow("baseline: POST straight to the stand-in gateway", direct.get(c)!), loadRow("baseline: relay intake POST -> 202, no agent", intake.get(c)!),
        loadRow("agent log: relay receipt -> gateway accept", { ...e.bench, latenciesMs: e.agentMs }),
        latencyRow("bench: POST start -> gateway received", c, e.bench.latenciesMs), latencyRow("  (same POSTs -> 202, agent attached)", c, e.postMs),
      ];
    }),
  ]));
  for (const c of CONCURRENCY) {
    const [base, e] = [intake.get(c)!.latenciesMs, e2e.get(c)!];
    const versus = (ms: number[]) => `p50 ${fmt(p50(ms) / p50(base))}×, p99 ${fmt(p99(ms) / p99(base))}×`;
    console.log(`   concurrency ${c}: end-to-end (agent log) / intake baseline ${versus(e.agentMs)}; (bench) ${versus(e.bench.latenciesMs)}; throughput intake/end-to-end ${fmt(rate(intake.get(c)!) / rate(e.bench))}×`);
  }
  const [bare, bareAnon] = [median(bareIdle.rss), median(bareIdle.anon)];
  const [peak1, peak32] = CONCURRENCY.map((c) => Math.max(...e2e.get(c)!.rss.samples)) as [number, number];
  const row = (label: string, kib: number | number[], base = bare) => {
    const value = typeof kib === "number" ? kib : median(kib);
    return [label, fmt(mib(value)), typeof kib === "number" ? "" : `${fmt(mib(Math.min(...kib)))}–${fmt(mib(Math.max(...kib)))}`, fmt(value / base)];
  };
  console.log(`\n2. Resident memory (VmRSS), children on ${process.execPath}: idle ${IDLE_WAIT_MS / 1000} s after "relay connected", 10 readings; peak every ${SAMPLE_EVERY_MS} ms under load.`);
  console.log(table([
    ["process / moment", "VmRSS MiB", "range MiB", "× bare node"],
    row(`baseline: node -e "${BARE_NODE_SCRIPT}", idle`, bareIdle.rss),
    row("local agent, idle after connecting", agentIdle.rss), row("local agent, peak under concurrency 1", peak1), row("local agent, peak under concurrency 32", peak32),
    row("local agent, VmHWM at the end (start-up incl.)", agentHwmKiB), row("RssAnon (private part of VmRSS): bare node, idle", bareIdle.anon, bareAnon),
    row("RssAnon: local agent, idle", agentIdle.anon, bareAnon),
  ]));
  const e32 = e2e.get(32)!.rss;
  console.log(`   concurrency 32: ${e32.samples.length} readings over ${fmt(e32.spanMs / 1000)} s (mean gap ${fmt(e32.spanMs / Math.max(1, e32.samples.length - 1))} ms); peak − idle = ${fmt(mib(peak32 - median(agentIdle.rss)))} MiB`);
  if (onSystemNode) {
    console.log(`   On the machine's node ${onSystemNode.version} (what the installed CLI runs on), same idle procedure:`);
    const rows = ([["bare node -e, idle", onSystemNode.bareIdle], ["local agent, idle after connecting", onSystemNode.agentIdle]] as const).map(([label, m]) => [label, fmt(mib(median(m.rss))), fmt(mib(median(m.anon)))]);
    console.log(table([["process", "VmRSS MiB", "RssAnon MiB"], ...rows]));
  }
  console.log(`\n3. Draining ${DRAIN.messages} hub bodies over ${DRAIN.conversations} conversations queued while no agent was connected, from its "relay connected" to the last arrival:`);
  console.log(table([
    ["gateway", "posts in flight", "wall s", "msg/s", "posts", "503s", "order violations", "duplicates"],
    ...[healthy, failing].map((d) => [d.label, String(DEFAULT_CONCURRENCY), fmt(d.wallMs / 1000), fmt(d.rate), String(d.posts), String(d.refused), String(d.orderViolations), String(d.duplicates)]),
  ]));
  console.log(`\n4. The fault soak's shape: ${SOAK.messages} hub bodies over ${SOAK.conversations} conversations, queued first; the outage once a third arrived (the port kept, every connection reset and counted):`);
  console.log(table([
    ["round: gateway", "wall s", "msg/s", "posts", "503s", "resets", "seen down", "order violations", "duplicates"],
    ...soak.map((d) => [d.label, fmt(d.wallMs / 1000), fmt(d.rate), String(d.posts), String(d.refused), String(d.resets), String(d.outagesSeen), String(d.orderViolations), String(d.duplicates)]),
  ]));
  console.log(`   median of ${rounds}: healthy ${fmt(soakHealthy)} msg/s, faults ${fmt(soakFaults)} msg/s (each round's ratio: ${Array.from({ length: rounds }, (_, r) => fmt(soak[2 * r + 1]!.rate / soak[2 * r]!.rate)).join(", ")})`);
  console.log(`   down ${fmt(outage.downMs / 1000)} s: ${outage.attempts} connections tried (bound ${outage.bound}: ${DEFAULT_CONCURRENCY} posts in flight + 4 before the outage is recognised, then one probe at a time);`);
  console.log(`   back: the ${SOAK.conversations} conversations went on after ${outage.resumedMs.map((ms) => fmt(ms)).join(", ")} ms`);
  const [first, last] = [outage.resumedMs[0]!, outage.resumedMs.at(-1)!];
  lanes.print();
  const memoryRow = (figure: string, value: number, baseline: number, goal = true) =>
    unitRow(figure, mib(value), "MiB", "bare node -e", mib(baseline), goal ? `≤ ${MEMORY_GOAL_MIB} MiB` : "reported", goal ? mib(value) <= MEMORY_GOAL_MIB : undefined);
  printGoalSummary("Summary (bench:agent)", [
    unitRow("end to end p50, concurrency 1 (agent log)", p50(e2e.get(1)!.agentMs), "ms", "direct to gateway", p50(direct.get(1)!.latenciesMs), "reported"),
    memoryRow(`agent resident memory, idle, node ${process.version}`, median(agentIdle.rss), bare),
    ...(onSystemNode ? [memoryRow(`agent resident memory, idle, node ${onSystemNode.version}`, median(onSystemNode.agentIdle.rss), median(onSystemNode.bareIdle.rss))] : []),
    memoryRow("agent private memory (RssAnon), idle", median(agentIdle.anon), bareAnon, false),
    unitRow("drain with 10 % 503s", failing.rate, "msg/s", "healthy gateway", healthy.rate, "≥ 0.5× healthy, order kept", failing.rate / healthy.rate >= 0.5 && failing.orderViolations === 0 && failing.duplicates === 0),
    unitRow(`soak shape: drain with 10 % 503s + 3 % resets, ${SOAK.conversations} conversations (median)`, soakFaults, "msg/s", "healthy gateway", soakHealthy, "≥ 0.6× healthy, order kept",
      soakFaults / soakHealthy >= 0.6 && soak.every((d) => d.orderViolations === 0 && d.duplicates === 0)),
    unitRow(`soak shape: last conversation going on after a ${outageMs / 1000} s outage`, last, "ms", "first conversation", first, "≤ 1000 ms after the gateway is back", last <= 1000),
    { figure: `soak shape: connections tried during the ${fmt(outage.downMs / 1000)} s outage`, value: String(outage.attempts), baseline: "—", ratio: null, goal: `≤ ${outage.bound} (the bound)`, met: outage.attempts <= outage.bound },
    ...lanes.goals,
  ]);
  const expected = CONCURRENCY.reduce((sum, c) => sum + WARMUP + MESSAGES[c], 0);
  console.log(`\nchecks: gateway accepted ${accepted}/${expected} hooks through the agent, ${refused} refused/replayed requests, ${duplicates} duplicate keys;`);
  console.log(`        agent logged ${agent.delivered.size} "delivered" lines; other agent events: ${problems.join(", ") || "none"}`);
}
