// bench:live's measurements, through the real relay (Miniflare) and the real local agent (in this process, as
// bench/forward-latency.ts runs it): (1) a live source's request → app → answer round trip against the same
// request straight to the app, small and 64 KiB bodies; (2) an A2A SendMessage through the relay against the
// same call straight to the A2A stand-in; (3) queued gateway deliveries' latency while 16 live requests wait
// on a slow app against the same deliveries with none waiting. Requests interleaved or rounds alternated,
// so a figure and its baseline see the same machine. Imported by bench/live-scenario.ts.
import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { startAgent } from "../local-agent/agent.ts";
import type { AgentHandle } from "../local-agent/agent.ts";
import { idempotencyKeyFor } from "../local-agent/delivery/delivery.ts";
import { createLogger } from "../local-agent/logger.ts";
import { journalPath, loadSettings } from "../local-agent/settings.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import type { StandinGateway } from "../scripts/standin-gateway.ts";
import { homeOwner, makeBenchHome } from "./agent-home.ts";
import type { BenchHome } from "./agent-home.ts";
import type { BenchRun } from "./bench-run.ts";
import { HttpClient } from "./http-client.ts";
import { signedCall } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { startA2aStandin, startEchoApp, startSlowApp } from "./live-servers.ts";

export const LIVE_BENCH = { requests: 200, warmup: 20, largeBytes: 64 * 1024, hooks: 100, rounds: 2, waiting: 16, slowLiveSec: 120 };

/** Latencies (ms) of one way and of its same-run baseline. */
export interface Paired {
  via: number[];
  straight: number[];
}

interface Connected {
  home: BenchHome;
  owner: BenchAgent;
  agent: AgentHandle;
}

/** A claimed home whose openclaw.json points at `gateway`, and the agent connected to the relay. */
async function connectedAgent(run: BenchRun, relay: HttpClient, gateway: StandinGateway, name: string): Promise<Connected> {
  const dir = join(run.dir, name.replace(/\W+/g, "-"));
  await mkdir(dir, { recursive: true });
  const home = await makeBenchHome(dir, relay.origin.origin, gateway, name);
  const settings = loadSettings(join(home.env.CLAWRELAY_HOME, "agent.json"));
  // The home's own key signs the owner's calls, as the CLI would.
  const owner = await homeOwner(settings);
  const agent = await startAgent({ settings, env: home.env, logger: createLogger({ json: true, write: () => {} }), apiPort: 0, journalFile: journalPath(home.env.CLAWRELAY_HOME) });
  run.own(() => agent.close());
  await until("the agent connected", () => agent.status().relay.state === "connected", 30_000);
  return { home, owner, agent };
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A live token source forwarding to `target`; its route on the relay. */
async function liveSource(relay: HttpClient, c: Connected, name: string, target: string, liveSec: number): Promise<string> {
  const added = await signedCall<{ post_url: string }>(relay, c.owner, "POST", `/inbox/${c.home.agentId}/sources`, 201, { name, kind: "token", forward: target, live_sec: liveSec });
  return new URL(added.post_url).pathname;
}

/** POSTs `body` and checks the answer is 200 and passes `check`; the milliseconds until the whole answer was read. */
async function exchange(client: HttpClient, path: string, headers: Record<string, string>, body: string, check: (answer: string) => boolean): Promise<number> {
  const start = performance.now();
  const answer = await client.request("POST", path, headers, body);
  const ms = performance.now() - start;
  if (answer.status !== 200 || !check(answer.body)) throw new Error(`POST ${client.origin.origin}${path} -> ${answer.status}: ${answer.body.slice(0, 300)}`);
  return ms;
}

/** The same request by both ways, interleaved, `warmup` pairs first not counted. */
async function interleaved(send: (way: "via" | "straight", i: number) => Promise<number>): Promise<Paired> {
  const out: Paired = { via: [], straight: [] };
  for (let i = 0; i < LIVE_BENCH.warmup + LIVE_BENCH.requests; i++) {
    for (const way of ["via", "straight"] as const) {
      const ms = await send(way, i);
      if (i >= LIVE_BENCH.warmup) out[way].push(ms);
    }
  }
  return out;
}

/** A JSON body of exactly `bytes` bytes (at least the skeleton's). */
function jsonBody(i: number, bytes: number): string {
  const skeleton = JSON.stringify({ type: "command", n: i, text: "" });
  return JSON.stringify({ type: "command", n: i, text: "x".repeat(Math.max(0, bytes - skeleton.length)) });
}

/** Part 1: a live source's round trip through relay and agent against the app itself, for each body size. */
export async function liveRoundTrips(run: BenchRun, relay: HttpClient, sizes: readonly number[]): Promise<Paired[]> {
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const app = await startEchoApp();
  run.own(() => app.close());
  const c = await connectedAgent(run, relay, gateway, "live round trip");
  const route = await liveSource(relay, c, "app", `${app.url}/echo`, 10);
  const direct = run.client(app.url);
  const out: Paired[] = [];
  for (const bytes of sizes) {
    out.push(await interleaved((way, i) => {
      const body = jsonBody(i, bytes);
      const headers = { "content-type": "application/json" };
      return way === "via" ? exchange(relay, route, headers, body, (a) => a === body) : exchange(direct, "/echo", headers, body, (a) => a === body);
    }));
  }
  await c.agent.close();
  return out;
}

/** Part 2: A2A SendMessage through the relay (the stand-in is the agent's gateway) against straight to the stand-in. */
export async function a2aRoundTrips(run: BenchRun, relay: HttpClient): Promise<Paired> {
  const peerToken = createHash("sha256").update(`bench-peer-${Date.now()}`).digest("hex");
  const a2a = await startA2aStandin(peerToken);
  run.own(() => a2a.close());
  // The agent sends A2A calls to its gateway's port (openclaw.json gateway.port): the stand-in's.
  const hooks = await startStandinGateway();
  run.own(() => hooks.close());
  const c = await connectedAgent(run, relay, { ...hooks, port: a2a.port }, "live a2a");
  await signedCall(relay, c.owner, "PUT", `/inbox/${c.home.agentId}/a2a`, 200, {
    peers: [{ name: "bench", token_sha256: createHash("sha256").update(peerToken).digest("hex") }], deadline_sec: 30,
  });
  const direct = run.client(a2a.url);
  const headers = { "content-type": "application/json", authorization: `Bearer ${peerToken}` };
  const completed = (answer: string) => answer.includes("TASK_STATE_COMPLETED");
  const out = await interleaved((way, i) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: i, method: "SendMessage", params: { message: { messageId: `m-${way}-${i}`, role: "ROLE_USER", parts: [{ text: `task ${i}` }] } } });
    return way === "via" ? exchange(relay, `/inbox/${c.home.agentId}/a2a/v1`, headers, body, completed) : exchange(direct, "/a2a/v1", headers, body, completed);
  });
  await c.agent.close();
  return out;
}

/** Part 3: per round, `hooks` gateway hooks posted one after another, each one's POST → the gateway has it. */
export async function deliveriesBesideWaitingLive(run: BenchRun, relay: HttpClient): Promise<Paired & { lastMs: { via: number[]; straight: number[] } }> {
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const slow = await startSlowApp();
  run.own(() => slow.close());
  const c = await connectedAgent(run, relay, gateway, "live beside deliveries");
  const route = await liveSource(relay, c, "slow", `${slow.url}/slow`, LIVE_BENCH.slowLiveSec);
  const arrivals = new Map<string, number>();
  gateway.onReceive = (hook) => arrivals.set(hook.idempotencyKey ?? "", performance.now());
  const hooksPath = `/inbox/${c.home.agentId}/hooks/agentgram_inbox/agent`;
  const headers = { authorization: `Bearer ${c.home.webhookToken}`, "content-type": "application/json" };
  let sent = 0;
  const burst = async (): Promise<{ ms: number[]; lastMs: number }> => {
    const posted: { key: string; at: number }[] = [];
    for (let i = 0; i < LIVE_BENCH.hooks; i++) {
      const at = performance.now();
      const n = sent++;
      const answer = await relay.request("POST", hooksPath, headers, JSON.stringify({ message: `hook ${n}`, sessionKey: `hook:bench-${n % 10}` }));
      if (answer.status !== 202) throw new Error(`hook -> ${answer.status}: ${answer.body.slice(0, 200)}`);
      posted.push({ key: idempotencyKeyFor(c.home.agentId, (JSON.parse(answer.body) as { id: number }).id), at });
    }
    await until(`${LIVE_BENCH.hooks} hooks at the gateway`, () => posted.every((p) => arrivals.has(p.key)), 120_000);
    return { ms: posted.map((p) => arrivals.get(p.key)! - p.at), lastMs: arrivals.get(posted.at(-1)!.key)! - posted[0]!.at };
  };
  const out = { via: [] as number[], straight: [] as number[], lastMs: { via: [] as number[], straight: [] as number[] } };
  await burst(); // warm-up, not counted
  for (let round = 0; round < LIVE_BENCH.rounds; round++) {
    const quiet = await burst();
    out.straight.push(...quiet.ms);
    out.lastMs.straight.push(quiet.lastMs);
    // The slow app holds each request, so each stays in flight: relay waiting, agent's request open at the app.
    const before = slow.taken();
    const waiting = Array.from({ length: LIVE_BENCH.waiting }, (_, i) => relay.request("POST", route, { "content-type": "application/json" }, JSON.stringify({ slow: round, i })));
    await until(`${LIVE_BENCH.waiting} live requests at the slow app`, () => slow.taken() - before >= LIVE_BENCH.waiting, 30_000);
    const busy = await burst();
    out.via.push(...busy.ms);
    out.lastMs.via.push(busy.lastMs);
    slow.releaseAll();
    const answers = await Promise.all(waiting);
    if (answers.some((a) => a.status !== 200)) throw new Error(`a waiting live request was answered ${answers.map((a) => a.status).join(",")}`);
  }
  await c.agent.close();
  return out;
}
