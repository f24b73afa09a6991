// Part 1b of bench/directory-bench.ts: the same directory grown to 100,000 cards. The cards beyond
// part 1's are inserted into the Directory's SQLite while workerd is down (bench/directory-storage.ts)
// and the persisted index marked stale, so the first search after that start rebuilds it from every
// card (the baseline: every start-up did this before the index was persisted). Then evictions with no
// card pending, the warm searches of part 1, card updates through the object's RPC publish (one commit
// of the index, the rest left pending so the next start replays them), restarts and evictions again.
import type { CardFile } from "../local-agent/society/card-file.ts";
import { parseCard } from "../worker/directory/card.ts";
import type { AgentCard, SearchIndex } from "../worker/directory/search-index.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import type { BenchRun } from "./bench-run.ts";
import { EVICTIONS, RESTARTS, runDirectoryEvictions, runRestarts } from "./directory-cold-start.ts";
import type { ColdRound, RestartRound } from "./directory-cold-start.ts";
import { directoryStats, publishThroughRpc } from "./directory-load.ts";
import type { DirectoryStats } from "./directory-load.ts";
import { runSearches } from "./directory-search-bench.ts";
import type { SearchFigures } from "./directory-search-bench.ts";
import { insertCards, invalidateIndex, syntheticAgentId } from "./directory-storage.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";

/** Card updates published over RPC at full size: past one commit (1,000 changed cards), the rest pending. */
export const UPDATE_CONCURRENCY = 16;

export interface ScaleFigures {
  cards: number;
  skills: number;
  /** In-Node SearchIndex over all cards, built from nothing (the index work of a rebuild, without SQLite). */
  referenceBuildMs: number;
  rebuild: RestartRound;
  /** Evictions right after the rebuild, nothing pending; `evictions`: after the updates, cards pending. */
  idleEvictions: ColdRound[];
  searches: SearchFigures;
  /** After the searches: the cache holds their terms. */
  searchedStats: DirectoryStats;
  updates: LoadResult;
  beforeUpdates: DirectoryStats;
  afterUpdates: DirectoryStats;
  evictions: ColdRound[];
  restarts: RestartRound[];
  relay: HttpClient;
}

export interface ScaleInput {
  run: BenchRun;
  bundle: WorkerBundle;
  persistDir: string;
  /** Every card; the first `loaded` are in the directory already (part 1), with their agents' ids. */
  cards: readonly CardFile[];
  loaded: number;
  queries: string[];
  warmup: string[];
  /** Part 1's reference (its `loaded` cards), extended here to all of them. */
  reference: SearchIndex;
  referenceBuildMs: number;
  updates: number;
  log: (line: string) => void;
}

export async function runScale(input: ScaleInput): Promise<ScaleFigures> {
  const { run, bundle, persistDir, cards, loaded, queries, warmup, reference, log } = input;
  const added = cards.slice(loaded);
  log(`part 1b: ${cards.length} cards: extending the in-Node reference index…`);
  const start = performance.now();
  added.forEach((card, i) => reference.upsert(parseCard({ ...card, agent_id: syntheticAgentId(loaded + i) }, card.name)));
  const referenceBuildMs = input.referenceBuildMs + performance.now() - start;

  log(`  inserting ${added.length} cards into the Directory's SQLite, marking its index stale, restarting: the first search rebuilds…`);
  const rebuilt = await runRestarts(run, bundle, persistDir, queries, reference, {
    rounds: 1,
    firstQuery: 2 * EVICTIONS + RESTARTS + 1,
    beforeStart: (db) => {
      insertCards(db, added, loaded);
      invalidateIndex(db);
    },
  });
  // Evictions before any RPC call: Miniflare's RPC proxy holds the object until a restart.
  log("  evicting the Directory object (no card pending)…");
  const idleEvictions = await runDirectoryEvictions(run, rebuilt.relay, queries, reference);
  log("  searching…");
  const searches = await runSearches(rebuilt.relay, queries, warmup, reference);
  const searchedStats = await directoryStats(run.miniflare!);

  log(`  publishing ${input.updates} card updates over the Directory's RPC…`);
  // Cards of part 1b take other cards' content under their own name and agent id.
  const updated = Array.from({ length: Math.min(input.updates, added.length) }, (_, j): AgentCard => {
    const into = loaded + j;
    const from = cards[(into + Math.floor(added.length / 2)) % cards.length]!;
    return parseCard({ ...from, name: cards[into]!.name, agent_id: syntheticAgentId(into) }, cards[into]!.name);
  });
  const beforeUpdates = await directoryStats(run.miniflare!);
  const updates = await publishThroughRpc(run.miniflare!, updated, 1, UPDATE_CONCURRENCY);
  const afterUpdates = await directoryStats(run.miniflare!);
  for (const card of updated) reference.upsert(card);

  // Restarts first: they also let go of the RPC proxy's hold on the object, which an eviction waits for.
  log("  restarting the relay on its persisted storage…");
  const restarted = await runRestarts(run, bundle, persistDir, queries, reference, { rounds: RESTARTS, firstQuery: 2 * EVICTIONS + RESTARTS + 2 });
  log("  evicting the Directory object (cards pending)…");
  const evictions = await runDirectoryEvictions(run, restarted.relay, queries, reference);
  return {
    cards: cards.length,
    skills: cards.reduce((n, card) => n + card.skills.length, 0),
    referenceBuildMs,
    rebuild: rebuilt.rounds[0]!,
    idleEvictions,
    searches,
    searchedStats,
    updates,
    beforeUpdates,
    afterUpdates,
    evictions,
    restarts: restarted.rounds,
    relay: restarted.relay,
  };
}
