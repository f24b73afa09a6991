// The directory scenario's part 2: POST /api/delegate-task on a requester agent -> relay -> target agent -> its
// gateway's /v1/chat/completions -> result back, vs that chat completion posted straight to the gateway.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startAgent } from "../local-agent/agent.ts";
import { identityFromPrivateKey } from "../local-agent/identity.ts";
import type { LogFields, Logger } from "../local-agent/logger.ts";
import { relayErrorText, signedRelayCall } from "../local-agent/relay/relay-api.ts";
import { journalPath, loadSettings, settingsPath } from "../local-agent/settings.ts";
import { cardPath } from "../local-agent/society/card-file.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import type { StandinGateway } from "../scripts/standin-gateway.ts";
import { makeBenchHome } from "./agent-home.ts";
import type { BenchRun } from "./bench-run.ts";
import { runClosedLoop } from "./http-client.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";

export const CONCURRENCY = [1, 8] as const;
export const WARMUP = 20;
export const SKILL = "forecast";
export const TARGET_NAME = "bench-weather-target";
const TARGET_CARD = {
  name: TARGET_NAME, description: "Real-time weather forecasts and severe-weather alerts for any city",
  skills: [{ id: SKILL, name: "Weather Forecast", description: "Current conditions and a 7-day forecast for a city", tags: ["weather", "forecast"], examples: ["Will it rain in Paris tomorrow?"] }],
};
/** What a delegation waits for the target's result here (the agent's default is 180 s). */
const DELEGATE_TIMEOUT_MS = 20_000;
/** Both inboxes at the ceiling: at the default 20 a minute per sender, the 21st task (or result) in a minute is refused. */
export const RATE_PER_MINUTE = 10_000;
const emptyLoad: LoadResult = { count: 0, concurrency: 0, wallMs: 0, latenciesMs: [] };

function timedLog(event: string) {
  const [at, problems] = [new Map<string, number>(), [] as string[]];
  const info = (name: string, fields: LogFields = {}) => void (name === event && at.set(String(fields.task_id), performance.now()));
  return { at, problems, logger: { info, warn: (name: string) => void problems.push(`warn ${name}`), error: (name: string, fields: LogFields = {}) => void problems.push(`error ${name} ${fields.error ?? ""}`) } satisfies Logger };
}

async function startBenchAgent(run: BenchRun, relayUrl: string, dir: string, gateway: StandinGateway, logger: Logger, card?: object) {
  const { env } = await makeBenchHome(dir, relayUrl, gateway, `Bench ${path.basename(dir)}`);
  if (card) await writeFile(cardPath(env.CLAWRELAY_HOME), JSON.stringify(card));
  const settings = { ...loadSettings(settingsPath(env)), delegate_timeout_ms: DELEGATE_TIMEOUT_MS };
  const identity = await identityFromPrivateKey(settings.key.private_key, settings.key.key_id);
  const raised = await signedRelayCall(relayUrl, identity, "PUT", `/inbox/${settings.agent_id}`, { rate_per_minute: RATE_PER_MINUTE });
  if (raised.status !== 200) throw new Error(`raising the rate of ${settings.agent_id}: ${relayErrorText(raised)}`);
  const agent = await startAgent({ settings, env, logger, apiPort: 0, cardFile: cardPath(env.CLAWRELAY_HOME), journalFile: journalPath(env.CLAWRELAY_HOME) });
  run.own(() => agent.close());
  for (const deadline = Date.now() + 15_000; agent.status().relay.state !== "connected"; await sleep(25)) {
    if (Date.now() > deadline) throw new Error(`agent ${settings.agent_id} did not connect to the relay within 15 s`);
  }
  return agent;
}

export async function runDelegation(run: BenchRun, relay: HttpClient, dir: string, count: number) {
  const relayUrl = relay.origin.origin;
  const [targetGateway, requesterGateway] = [await startStandinGateway(), await startStandinGateway()];
  run.own(() => targetGateway.close()), run.own(() => requesterGateway.close());
  const [targetLog, requesterLog] = [timedLog("task answered"), timedLog("task sent")];
  await startBenchAgent(run, relayUrl, path.join(dir, "target"), targetGateway, targetLog.logger, TARGET_CARD);
  const requester = await startBenchAgent(run, relayUrl, path.join(dir, "requester"), requesterGateway, requesterLog.logger);
  const [api, gatewayClient] = [run.client(`http://127.0.0.1:${requester.apiPort}`), run.client(`http://127.0.0.1:${targetGateway.port}`)];
  const hooksBefore = [requesterGateway.received.length, targetGateway.received.length];
  let seq = 0; // every message (and baseline `user`) in the run is distinct, across rows too
  const rows = new Map<number, { delegate: LoadResult; chat: LoadResult; sentMs: number[]; restMs: number[]; answeredMs: number[]; failures: string[] }>();
  for (const c of CONCURRENCY) {
    const [failures, tasks] = [[] as string[], [] as { taskId: string; start: number; end: number }[]];
    const failed = (what: string) => {
      if (c === 1) throw new Error(what);
      failures.push(what);
      return Number.NaN;
    };
    const delegate = async (record: boolean) => {
      const [text, start] = [`Will it rain in Paris tomorrow morning? (task ${++seq})`, performance.now()];
      const answer = await api.request("POST", "/api/delegate-task", { "content-type": "application/json" }, JSON.stringify({ agent_id: TARGET_NAME, skill_id: SKILL, message: text }));
      const end = performance.now();
      const parsed = JSON.parse(answer.body) as { success?: boolean; response?: string; task_id?: string };
      if (answer.status !== 200 || parsed.success !== true || parsed.response !== `Reply 1: I have heard "${text}"`) return failed(`delegate-task -> ${answer.status}: ${answer.body.slice(0, 300)}`);
      // The target may log "task answered" after the requester already answered: segments are read at the end.
      if (record) tasks.push({ taskId: parsed.task_id!, start, end });
      return end - start;
    };
    // The request the target's task runner makes (local-agent/gateway/chat-completions.ts runChat), sent straight: a fresh `user` each time.
    const chat = async () => {
      const text = `Will it rain in Paris tomorrow morning? (direct ${++seq})`;
      const body = JSON.stringify({ model: "openclaw", user: `clawrelay-bench:direct:${seq}`, messages: [{ role: "user", content: text }] });
      const start = performance.now();
      const answer = await gatewayClient.request("POST", "/v1/chat/completions", { "content-type": "application/json", authorization: `Bearer ${targetGateway.authToken}` }, body);
      const elapsed = performance.now() - start;
      const content = answer.status === 200 ? (JSON.parse(answer.body) as { choices: { message: { content: string } }[] }).choices[0]?.message.content : null;
      return content === `Reply 1: I have heard "${text}"` ? elapsed : failed(`chat completions -> ${answer.status}: ${answer.body.slice(0, 300)}`);
    };
    let [delegated, direct] = [emptyLoad, emptyLoad];
    if (c === 1) {
      for (let i = 0; i < WARMUP; i++) await delegate(false), await chat();
      // Interleaved one by one, so both see the same moment of the machine; the wall time is the pairs'.
      const [d, h, start] = [[] as number[], [] as number[], performance.now()];
      for (let i = 0; i < count; i++) d.push(await delegate(true)), h.push(await chat());
      const wallMs = performance.now() - start;
      [delegated, direct] = [{ count, concurrency: 1, wallMs, latenciesMs: d }, { count, concurrency: 1, wallMs, latenciesMs: h }];
    } else {
      await runClosedLoop(WARMUP, c, chat), await runClosedLoop(WARMUP, c, () => delegate(false));
      direct = await runClosedLoop(count, c, chat);
      delegated = await runClosedLoop(count, c, () => delegate(true));
    }
    // Each measured delegation split at the agents' log events, once the target logged them all.
    for (const deadline = Date.now() + 5000; tasks.some((t) => !targetLog.at.has(t.taskId)) && Date.now() < deadline; ) await sleep(10);
    const row = { delegate: delegated, chat: direct, sentMs: [] as number[], restMs: [] as number[], answeredMs: [] as number[], failures };
    for (const { taskId, start, end } of tasks) {
      const [sent, answered] = [requesterLog.at.get(taskId), targetLog.at.get(taskId)];
      if (sent !== undefined && answered !== undefined) row.sentMs.push(sent - start), row.restMs.push(end - sent), row.answeredMs.push(answered - sent);
    }
    rows.set(c, row);
  }
  const hooks = [requesterGateway, targetGateway].map((gateway, i) => gateway.received.slice(hooksBefore[i]))
    .map((received) => ({ total: received.length, acks: received.filter((h) => h.body.toString("utf8").includes("received your message")).length }));
  return {
    rows, requesterHooks: hooks[0]!, targetHooks: hooks[1]!, requesterProblems: requesterLog.problems, targetProblems: targetLog.problems,
    lateDropped: requester.status().delegation.late_results_dropped, gatewayRefused: targetGateway.requests.filter((r) => r.status !== 200).length,
  };
}
export type Delegation = Awaited<ReturnType<typeof runDelegation>>;
