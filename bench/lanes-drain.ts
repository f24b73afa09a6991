// The agent scenario's part 5, the forwarding soak's two shapes through the real relay and the agent users
// install (a child process): (a) a 300-event backlog for a local app that never answers, then 100 gateway
// hooks — the first hook's latency against the same hooks with no app backlog; (b) 3,000 queued events for
// three local apps drained while the apps answer 503 to 10 % of posts and reset 3 % — against the same into
// healthy apps. Order per source and duplicates are counted; the relay's pump's rows read per message sent
// come from the inbox's own counters (GET /inbox/{id}/queue → summary.storage).
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { idempotencyKeyFor } from "../local-agent/delivery/delivery.ts";
import { loadSettings } from "../local-agent/settings.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import type { NodeChild } from "./agent-child.ts";
import { homeOwner, makeBenchHome } from "./agent-home.ts";
import type { BenchHome } from "./agent-home.ts";
import type { BenchRun } from "./bench-run.ts";
import type { HttpClient } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import { signedCall } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { fmt, table, unitRow } from "./report.ts";
import type { GoalRow } from "./report.ts";
import { rng } from "./seeded-random.ts";

export const LANES = { backlog: 300, hooks: 100, drained: 3000, apps: 3, failureRate: 0.1, resetRate: 0.03 };
type SpawnAgent = (label: string, env: Record<string, string>) => NodeChild;

interface App {
  url: string;
  /** The `n` of every event taken (answered 200), in the order taken. */
  taken: number[];
  posts: number;
  refused: number;
  resets: number;
  close(): Promise<void>;
}

/** A local app: answers 200, or (seeded) 503 / a reset with no answer; "hang" never answers at all. */
async function startApp(mode: { failureRate: number; resetRate: number; seed: number } | "hang"): Promise<App> {
  const random = mode === "hang" ? () => 1 : rng(mode.seed);
  const app: Omit<App, "url" | "close"> = { taken: [], posts: 0, refused: 0, resets: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
      app.posts++;
      if (mode === "hang") return;
      const r = random();
      if (r < mode.failureRate) return void (app.refused++, res.writeHead(503).end("busy"));
      if (r < mode.failureRate + mode.resetRate) return void (app.resets++, req.socket.destroy());
      app.taken.push((JSON.parse(Buffer.concat(chunks).toString()) as { n: number }).n);
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return Object.assign(app, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  });
}

const owner = (home: BenchHome): Promise<BenchAgent> => homeOwner(loadSettings(path.join(home.env.CLAWRELAY_HOME, "agent.json")));

/** Queues `count` events for a source forwarding to `app` (one poster, so ids follow n). */
async function queueEvents(relay: HttpClient, home: BenchHome, name: string, app: App, count: number): Promise<void> {
  const added = await signedCall<{ post_url: string }>(relay, await owner(home), "POST", `/inbox/${home.agentId}/sources`, 201, { name, kind: "token", forward: `${app.url}/hooks` });
  const route = new URL(added.post_url).pathname;
  await runClosedLoop(count, 1, async (i) => {
    const answer = await relay.request("POST", route, { "content-type": "application/json" }, JSON.stringify({ n: i + 1 }));
    if (answer.status !== 200) throw new Error(`POST ${route} -> ${answer.status}: ${answer.body.slice(0, 200)}`);
    return 0;
  });
}

interface Storage {
  pump_rows_read: number;
  messages_sent: number;
}

async function storage(relay: HttpClient, home: BenchHome): Promise<Storage> {
  const answer = await signedCall<{ summary: { storage?: Storage } }>(relay, await owner(home), "GET", `/inbox/${home.agentId}/queue?limit=1`, 200);
  return answer.summary.storage ?? { pump_rows_read: Number.NaN, messages_sent: Number.NaN };
}

/**
 * Waits for a condition of the bench's own (an app's counts), checked every 20 ms: the child's until() looks
 * again only when the agent logs a line, and an agent waiting on a hanging app logs nothing.
 */
async function poll(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface FirstHook {
  label: string;
  firstMs: number;
  lastMs: number;
  pumpRowsPerSend: number;
}

/** (a): hooks posted after the agent connected, with `backlog` events for a hanging app queued ahead of them. */
export async function firstHookBehind(run: BenchRun, relay: HttpClient, dir: string, backlog: number, spawnAgent: SpawnAgent): Promise<FirstHook> {
  const label = backlog === 0 ? "no app backlog" : `${backlog} events for a hanging app ahead`;
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const app = await startApp("hang");
  run.own(() => app.close());
  const home = await makeBenchHome(path.join(dir, `lanes-first-${backlog}`), relay.origin.origin, gateway, `Lanes ${label}`);
  if (backlog > 0) await queueEvents(relay, home, "hanging", app, backlog);
  const arrivals = new Map<string, number>();
  gateway.onReceive = (hook) => arrivals.set(hook.idempotencyKey ?? "", performance.now());
  const agent = spawnAgent(`agent (${label})`, home.env);
  await agent.waitForEvent("relay connected");
  if (backlog > 0) await poll("the hanging app holding its lane's head", () => app.posts > 0, 60_000);
  const before = await storage(relay, home);
  const posted: { key: string; at: number }[] = [];
  for (let i = 0; i < LANES.hooks; i++) {
    const at = performance.now();
    const answer = await relay.request("POST", `/inbox/${home.agentId}/hooks/agentgram_inbox/agent`, { authorization: `Bearer ${home.webhookToken}`, "content-type": "application/json" }, JSON.stringify({ message: `hook ${i}`, sessionKey: `hook:bench-${i % 10}` }));
    if (answer.status !== 202) throw new Error(`hook -> ${answer.status}`);
    posted.push({ key: idempotencyKeyFor(home.agentId, (JSON.parse(answer.body) as { id: number }).id), at });
  }
  await poll(`all ${LANES.hooks} hooks at the gateway`, () => posted.every((p) => arrivals.has(p.key)), 300_000);
  const after = await storage(relay, home);
  await agent.stop();
  const [first, last] = [posted[0]!, posted.at(-1)!];
  return { label, firstMs: arrivals.get(first.key)! - first.at, lastMs: arrivals.get(last.key)! - first.at, pumpRowsPerSend: (after.pump_rows_read - before.pump_rows_read) / Math.max(1, after.messages_sent - before.messages_sent) };
}

export interface AppDrain {
  label: string;
  wallMs: number;
  rate: number;
  posts: number;
  refused: number;
  resets: number;
  orderViolations: number;
  duplicates: number;
  pumpRowsPerSend: number;
}

/** (b): `LANES.drained` events over `LANES.apps` sources queued while no agent is connected, then drained. */
export async function drainIntoApps(run: BenchRun, relay: HttpClient, dir: string, faulty: boolean, spawnAgent: SpawnAgent): Promise<AppDrain> {
  const label = faulty ? `${LANES.failureRate * 100} % 503 + ${LANES.resetRate * 100} % resets` : "healthy apps";
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const home = await makeBenchHome(path.join(dir, `lanes-drain-${faulty ? "faulty" : "healthy"}`), relay.origin.origin, gateway, `Lanes drain ${label}`);
  const perApp = LANES.drained / LANES.apps;
  const apps: App[] = [];
  for (let a = 0; a < LANES.apps; a++) {
    const app = await startApp({ failureRate: faulty ? LANES.failureRate : 0, resetRate: faulty ? LANES.resetRate : 0, seed: 11 + a });
    run.own(() => app.close());
    apps.push(app);
    await queueEvents(relay, home, `app${a}`, app, perApp);
  }
  const before = await storage(relay, home);
  const agent = spawnAgent(`agent (drain, ${label})`, home.env);
  await agent.waitForEvent("relay connected");
  const start = performance.now();
  await poll(`all ${LANES.drained} events at the apps`, () => apps.every((app) => new Set(app.taken).size >= perApp), 600_000);
  const wallMs = performance.now() - start;
  const after = await storage(relay, home);
  await agent.stop();
  const orderViolations = apps.reduce((sum, app) => sum + app.taken.filter((n, i) => i > 0 && n < app.taken[i - 1]!).length, 0);
  const duplicates = apps.reduce((sum, app) => sum + app.taken.length - new Set(app.taken).size, 0);
  const total = (key: "posts" | "refused" | "resets") => apps.reduce((sum, app) => sum + app[key], 0);
  return {
    label, wallMs, rate: (LANES.drained * 1000) / wallMs, posts: total("posts"), refused: total("refused"), resets: total("resets"), orderViolations, duplicates,
    pumpRowsPerSend: (after.pump_rows_read - before.pump_rows_read) / Math.max(1, after.messages_sent - before.messages_sent),
  };
}

/** Part 5 as a whole: runs both shapes and their baselines; `print` writes the tables, `goals` the summary rows. */
export async function runLanes(run: BenchRun, relay: HttpClient, dir: string, spawnAgent: SpawnAgent): Promise<{ print(): void; goals: GoalRow[] }> {
  run.log(`lanes: ${LANES.hooks} gateway hooks with and without ${LANES.backlog} events for a hanging app ahead; ${LANES.drained} events drained into ${LANES.apps} healthy and failing apps…`);
  const hooks = [await firstHookBehind(run, relay, dir, 0, spawnAgent), await firstHookBehind(run, relay, dir, LANES.backlog, spawnAgent)] as const;
  const drains = [await drainIntoApps(run, relay, dir, false, spawnAgent), await drainIntoApps(run, relay, dir, true, spawnAgent)] as const;
  const print = () => {
    console.log(`\n5. Lanes: ${LANES.hooks} gateway hooks over 10 conversations, posted one after another once the agent is connected, with no other backlog and behind ${LANES.backlog} events for a local app that never answers:`);
    console.log(table([
      ["hooks posted", "first hook ms", "last hook ms (from the first POST)", "pump rows read / message sent"],
      ...hooks.map((f) => [f.label, fmt(f.firstMs), fmt(f.lastMs), fmt(f.pumpRowsPerSend)]),
    ]));
    console.log(`   ${LANES.drained} events for ${LANES.apps} sources (one app each, ordered), queued first, from "relay connected" to the last taken:`);
    console.log(table([
      ["apps", "wall s", "events/s", "posts", "503s", "resets", "order violations", "duplicates", "pump rows read / message sent"],
      ...drains.map((d) => [d.label, fmt(d.wallMs / 1000), fmt(d.rate), String(d.posts), String(d.refused), String(d.resets), String(d.orderViolations), String(d.duplicates), fmt(d.pumpRowsPerSend)]),
    ]));
  };
  const goals: GoalRow[] = [
    unitRow(`lanes: first gateway hook behind ${LANES.backlog} events for a hanging app`, hooks[1].firstMs, "ms", "no app backlog", hooks[0].firstMs, "≤ 1.5×", hooks[1].firstMs <= 1.5 * hooks[0].firstMs),
    unitRow(`lanes: ${LANES.drained} events into apps failing ${LANES.failureRate * 100} % + ${LANES.resetRate * 100} % resets`, drains[1].rate, "events/s", "healthy apps", drains[0].rate, "≥ 0.5×, order kept",
      drains[1].rate / drains[0].rate >= 0.5 && drains.every((d) => d.orderViolations === 0 && d.duplicates === 0)),
    unitRow("lanes: pump rows read per message sent, behind a hanging app's backlog", hooks[1].pumpRowsPerSend, "rows", "no backlog", hooks[0].pumpRowsPerSend, "reported"),
  ];
  return { print, goals };
}
