// Part 1 of bench/directory-bench.ts, cold: the Directory object evicted (Miniflare's
// unsafeEvictDurableObject) and after a workerd restart on persisted storage, against the same for one
// agent's Inbox object; and the full rebuild of the search index (its persisted copy marked stale while
// workerd is down, bench/directory-storage.ts), as every start-up did before the index was persisted.
import { startRelayMiniflare } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import type { SearchIndex } from "../worker/directory/search-index.ts";
import type { BenchRun } from "./bench-run.ts";
import { healthz, sameHits, search } from "./directory-search-bench.ts";
import { directoryDatabase } from "./directory-storage.ts";
import type { HttpClient } from "./http-client.ts";
import { LOOPBACK_HUB_URL, signedRequest } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";

/** Evict-then-search rounds for the cold start, and searches after each. */
export const EVICTIONS = 5;
export const AFTER_EVICTION = 12;
export const RESTARTS = 2;
/** The Directory object's name (worker/directory/routes.ts DIRECTORY_NAME; that module needs the Workers runtime). */
export const DIRECTORY_NAME = "directory";

/** The relay on `persistDir`, and how long Miniflare took to be ready. */
export async function startRelay(run: BenchRun, bundle: WorkerBundle, persistDir: string): Promise<{ relay: HttpClient; readyMs: number }> {
  const start = performance.now();
  const relay = await run.startMiniflare(() => startRelayMiniflare(bundle, LOOPBACK_HUB_URL, { persistDir }));
  return { relay, readyMs: performance.now() - start };
}

export interface ColdRound {
  evictMs: number;
  firstMs: number;
  secondMs: number;
  warmMs: number[];
  /** Every search after the eviction, in order. */
  allMs: number[];
  firstCorrect: boolean;
}

/** Evicts the Directory object, then times the searches that follow (the first rebuilds the index from SQLite). */
export async function runDirectoryEvictions(run: BenchRun, relay: HttpClient, queries: string[], reference: SearchIndex): Promise<ColdRound[]> {
  const rounds: ColdRound[] = [];
  for (let r = 0; r < EVICTIONS; r++) {
    const start = performance.now();
    await run.miniflare!.unsafeEvictDurableObject("clawrelay", "Directory", { name: DIRECTORY_NAME });
    const evictMs = performance.now() - start;
    const first = await search(relay, queries[r]!);
    const after: number[] = [];
    for (let i = 1; i <= AFTER_EVICTION; i++) after.push((await search(relay, queries[(r + i) % queries.length]!)).ms);
    rounds.push({ evictMs, firstMs: first.ms, secondMs: after[0]!, warmMs: after.slice(2), allMs: [first.ms, ...after], firstCorrect: sameHits(first.hits, reference, queries[r]!) });
  }
  return rounds;
}

export interface InboxColdRound {
  firstMs: number;
  warmMs: number[];
}

/** Baseline: the same for one agent's Inbox object (config + an empty queue in SQLite), a signed poll. */
export async function runInboxEvictions(run: BenchRun, relay: HttpClient, agents: BenchAgent[]): Promise<InboxColdRound[]> {
  const rounds: InboxColdRound[] = [];
  for (let r = 0; r < EVICTIONS; r++) {
    const agent = agents[(r * 997) % agents.length]!;
    const poll = async () => {
      const start = performance.now();
      const answer = await signedRequest(relay, agent, "GET", `/inbox/${agent.id}/messages?after=0&limit=1`);
      if (answer.status !== 200) throw new Error(`polling ${agent.id} -> ${answer.status}: ${answer.body.slice(0, 300)}`);
      return performance.now() - start;
    };
    await poll(); // warm first, so the eviction is what the next poll pays for
    await run.miniflare!.unsafeEvictDurableObject("clawrelay", "Inbox", { name: agent.id });
    const firstMs = await poll();
    const warmMs: number[] = [];
    for (let i = 0; i < 10; i++) warmMs.push(await poll());
    rounds.push({ firstMs, warmMs });
  }
  return rounds;
}

export interface RestartRound {
  readyMs: number;
  healthzMs: number;
  firstSearchMs: number;
  secondSearchMs: number;
  warmMs: number[];
  firstCorrect: boolean;
}

export interface RestartOptions {
  rounds: number;
  /** Which query each round starts with (a different one per round and per caller). */
  firstQuery: number;
  /** Run on the Directory's SQLite file while workerd is down, before each round's start. */
  beforeStart?: (directoryDb: string) => void;
}

/**
 * `rounds` times: Miniflare disposed and started again on the persisted storage, then GET /healthz, the
 * first search (the Directory object from disk) and AFTER_EVICTION more. Returns the relay left running.
 */
export async function runRestarts(run: BenchRun, bundle: WorkerBundle, persistDir: string, queries: string[], reference: SearchIndex, options: RestartOptions = { rounds: RESTARTS, firstQuery: EVICTIONS }): Promise<{ relay: HttpClient; rounds: RestartRound[] }> {
  const rounds: RestartRound[] = [];
  let relay: HttpClient | null = null;
  for (let round = 0; round < options.rounds; round++) {
    const query = queries[(options.firstQuery + round) % queries.length]!;
    await run.stopMiniflare();
    if (options.beforeStart) options.beforeStart(await directoryDatabase(persistDir));
    const started = await startRelay(run, bundle, persistDir);
    relay = started.relay;
    const healthzMs = await healthz(relay);
    const first = await search(relay, query);
    const after: number[] = [];
    for (let i = 0; i < AFTER_EVICTION; i++) after.push((await search(relay, queries[(round * 31 + i) % queries.length]!)).ms);
    rounds.push({ readyMs: started.readyMs, healthzMs, firstSearchMs: first.ms, secondSearchMs: after[0]!, warmMs: after.slice(2), firstCorrect: sameHits(first.hits, reference, query) });
  }
  if (!relay) throw new Error("a restart needs at least one round");
  return { relay, rounds };
}
