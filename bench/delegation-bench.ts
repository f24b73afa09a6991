// Part 2 of bench/directory-bench.ts: the delegation round trip. POST /api/delegate-task on a requester
// agent -> relay -> target agent -> its stand-in gateway's /v1/chat/completions (answers at once) ->
// result back, vs the same chat completion posted straight to that gateway; concurrency 1 and 8.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import type { BenchRun } from "./bench-run.ts";
import { hookCounts, makeDelegationHome, runAgent, TARGET_CARD, TimedLog } from "./delegation-agents.ts";
import { delegationOps } from "./delegation-calls.ts";
import type { DelegationRow, DelegationSetup } from "./delegation-calls.ts";
import { measurePieces } from "./delegation-pieces.ts";
import type { Pieces } from "./delegation-pieces.ts";
import { runClosedLoop } from "./http-client.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";
import type { BenchAgent } from "./relay-agents.ts";

export const DELEGATION_CONCURRENCY = [1, 8] as const;
/** Warm-up delegations (and direct calls) per concurrency, and rounds of pieces, before the measured ones. */
export const DELEGATION_WARMUP = 20;

export interface DelegationReport {
  rows: Map<number, DelegationRow>;
  requesterProblems: string[];
  targetProblems: string[];
  lateDropped: number;
  gatewayRefused: number;
  pieces: Pieces;
  requesterHooks: { total: number; acks: number };
  targetHooks: { total: number; acks: number };
}

/** Splits each measured delegation at the agents' log events (looked up once the target logged them all). */
async function segment(setup: DelegationSetup, row: DelegationRow): Promise<void> {
  const deadline = Date.now() + 5000;
  while (row.tasks.some((t) => !setup.targetLog.at.has(t.taskId)) && Date.now() < deadline) await sleep(10);
  for (const { taskId, start, end } of row.tasks) {
    const sent = setup.requesterLog.at.get(taskId);
    const answered = setup.targetLog.at.get(taskId);
    if (sent === undefined || answered === undefined) continue;
    row.sentMs.push(sent - start);
    row.restMs.push(end - sent);
    row.answeredMs.push(answered - sent);
  }
}

const emptyLoad = (concurrency: number): LoadResult => ({ count: 0, concurrency, wallMs: 0, latenciesMs: [] });

async function runDelegations(setup: DelegationSetup, concurrency: number, count: number): Promise<DelegationRow> {
  const row: DelegationRow = { delegate: emptyLoad(concurrency), chat: emptyLoad(concurrency), sentMs: [], restMs: [], answeredMs: [], tasks: [], failures: [] };
  const ops = delegationOps(setup, row, concurrency > 1);
  if (concurrency === 1) {
    for (let i = 0; i < DELEGATION_WARMUP; i++) {
      await ops.delegate(false);
      await ops.chat();
    }
    // Interleaved one by one, so both see the same moment of the machine.
    const start = performance.now();
    for (let i = 0; i < count; i++) {
      row.delegate.latenciesMs.push(await ops.delegate(true));
      row.chat.latenciesMs.push(await ops.chat());
    }
    const wallMs = performance.now() - start;
    row.delegate = { ...row.delegate, count, wallMs };
    row.chat = { ...row.chat, count, wallMs };
  } else {
    await runClosedLoop(DELEGATION_WARMUP, concurrency, () => ops.chat());
    await runClosedLoop(DELEGATION_WARMUP, concurrency, () => ops.delegate(false));
    row.chat = await runClosedLoop(count, concurrency, () => ops.chat());
    row.delegate = await runClosedLoop(count, concurrency, () => ops.delegate(true));
  }
  await segment(setup, row);
  return row;
}

/**
 * Two agents in this process, each with its own stand-in gateway and a home under `dir`, on `relay`;
 * `count` delegations per concurrency, then the pieces alone (`idle`: one of part 1's inboxes).
 */
export async function runDelegationPart(run: BenchRun, relay: HttpClient, dir: string, idle: BenchAgent, count: number): Promise<DelegationReport> {
  const relayUrl = relay.origin.origin;
  const targetGateway = await startStandinGateway();
  run.own(() => targetGateway.close());
  const requesterGateway = await startStandinGateway();
  run.own(() => requesterGateway.close());
  await mkdir(path.join(dir, "target"));
  await mkdir(path.join(dir, "requester"));
  const targetHome = await makeDelegationHome(path.join(dir, "target"), relayUrl, targetGateway, "Bench Target", TARGET_CARD);
  const requesterHome = await makeDelegationHome(path.join(dir, "requester"), relayUrl, requesterGateway, "Bench Requester");
  const targetLog = new TimedLog("task answered", "task_id");
  const requesterLog = new TimedLog("task sent", "task_id");
  await runAgent(run, targetHome, targetLog);
  const requester = await runAgent(run, requesterHome, requesterLog);
  const setup: DelegationSetup = {
    api: run.client(`http://127.0.0.1:${requester.apiPort}`),
    gatewayClient: run.client(`http://127.0.0.1:${targetGateway.port}`),
    gatewayToken: targetGateway.authToken,
    requesterLog,
    targetLog,
  };
  const requesterHooksBefore = requesterGateway.received.length;
  const targetHooksBefore = targetGateway.received.length;
  const rows = new Map<number, DelegationRow>();
  for (const c of DELEGATION_CONCURRENCY) {
    run.log(`  delegations at concurrency ${c}…`);
    rows.set(c, await runDelegations(setup, c, count));
  }
  const requesterHooks = hookCounts(requesterGateway, requesterHooksBefore);
  const targetHooks = hookCounts(targetGateway, targetHooksBefore);
  run.log("  pieces alone…");
  const pieces = await measurePieces(relay, requesterHome, targetHome.settings.agent_id, idle, count, DELEGATION_WARMUP);
  return {
    rows,
    requesterProblems: requesterLog.problems,
    targetProblems: targetLog.problems,
    lateDropped: requester.status().delegation.late_results_dropped,
    gatewayRefused: targetGateway.requests.filter((r) => r.status !== 200).length,
    pieces,
    requesterHooks,
    targetHooks,
  };
}
