// The table bench/directory-bench.ts ends with: each headline figure, its baseline from the same run,
// the ratio, the goal and whether it was met.
import type { ColdRound, RestartRound } from "./directory-cold-start.ts";
import type { DirectoryReport } from "./directory-report.ts";
import { rowsPerPublish } from "./directory-report.ts";
import type { ScaleFigures } from "./directory-scale.ts";
import { DEFAULT_CACHE_BYTES } from "../worker/directory/postings.ts";
import { fmt, median, p50, table } from "./stats.ts";

/** The brief's goal: an object with 100,000 cards answers its first search in at most this. */
const FIRST_SEARCH_GOAL_MS = 1000;
/** Index rows a publish may add to what the cards table takes. */
const INDEX_ROWS_GOAL = 3;
const DO_MEMORY_BYTES = 128e6;

const firstMs = (rounds: ColdRound[]) => median(rounds.map((e) => e.firstMs));
const restartFirstMs = (rounds: RestartRound[]) => median(rounds.map((x) => x.firstSearchMs));
const coldCost = (rounds: ColdRound[]) => firstMs(rounds) - median(rounds.flatMap((e) => e.warmMs));

type Row = [figure: string, value: number, unit: string, baselineName: string, baseline: number, goal: string, met: boolean | null];

export function printSummary(p: DirectoryReport, x: ScaleFigures | null): void {
  const agents = p.loaded.load.count;
  const rows: Row[] = [
    [`search p50, ${agents} cards`, p50(p.searches.searchMs), "ms", "GET /healthz p50", p50(p.searches.healthzMs), "—", null],
    [`1st search after eviction, ${agents} cards`, firstMs(p.evictions), "ms", "full rebuild, 1st search", p.rebuild.firstSearchMs, "—", null],
    [`1st search after restart, ${agents} cards`, restartFirstMs(p.restarts), "ms", "full rebuild, 1st search", p.rebuild.firstSearchMs, "—", null],
    [`index rows per publish, ${agents} HTTP`, rowsPerPublish(null, p.loadStats, agents).index, "rows", "cards-table rows", rowsPerPublish(null, p.loadStats, agents).cards, `≤ ${INDEX_ROWS_GOAL}`, rowsPerPublish(null, p.loadStats, agents).index <= INDEX_ROWS_GOAL],
  ];
  let same = p.searches.sameAsReference + p.evictions.filter((e) => e.firstCorrect).length + p.restarts.filter((r) => r.firstCorrect).length + (p.rebuild.firstCorrect ? 1 : 0);
  let checked = p.searches.searchMs.length + p.evictions.length + p.restarts.length + 1;
  if (x) {
    const n = x.cards;
    const updateRows = rowsPerPublish(x.beforeUpdates, x.afterUpdates, x.updates.count);
    const pending = x.afterUpdates.pending;
    const memoryBound = x.searchedStats.memoryBytes - x.searchedStats.cache.bytes + DEFAULT_CACHE_BYTES;
    rows.push(
      [`search p50, ${n} cards`, p50(x.searches.searchMs), "ms", `search p50, ${agents} cards`, p50(p.searches.searchMs), "reported", null],
      [`  in-Node index work p50, ${n} cards`, p50(x.searches.nodeIndexMs), "ms", `the same, ${agents} cards`, p50(p.searches.nodeIndexMs), "reported", null],
      [`1st search after eviction, ${n} cards`, firstMs(x.idleEvictions), "ms", "full rebuild, 1st search", x.rebuild.firstSearchMs, `≤ ${FIRST_SEARCH_GOAL_MS} ms`, firstMs(x.idleEvictions) <= FIRST_SEARCH_GOAL_MS],
      [`  the same, ${pending} cards pending`, firstMs(x.evictions), "ms", "full rebuild, 1st search", x.rebuild.firstSearchMs, `≤ ${FIRST_SEARCH_GOAL_MS} ms`, firstMs(x.evictions) <= FIRST_SEARCH_GOAL_MS],
      [`1st search after restart, ${n} cards, ${pending} pending`, restartFirstMs(x.restarts), "ms", "full rebuild, 1st search", x.rebuild.firstSearchMs, `≤ ${FIRST_SEARCH_GOAL_MS} ms`, restartFirstMs(x.restarts) <= FIRST_SEARCH_GOAL_MS],
      [`cold-start cost (1st − warm), ${n} cards`, coldCost(x.idleEvictions), "ms", `the same, ${agents} cards`, coldCost(p.evictions), "reported", null],
      [`index rows per publish, ${n} updates`, updateRows.index, "rows", "cards-table rows", updateRows.cards, `≤ ${INDEX_ROWS_GOAL}`, updateRows.index <= INDEX_ROWS_GOAL],
      [`index memory, ${n} cards, cache full`, memoryBound / 1e6, "MB", "Durable Object limit", DO_MEMORY_BYTES / 1e6, `< ${DO_MEMORY_BYTES / 1e6} MB`, memoryBound < DO_MEMORY_BYTES],
    );
    const evictions = [...x.idleEvictions, ...x.evictions];
    same += x.searches.sameAsReference + evictions.filter((e) => e.firstCorrect).length + x.restarts.filter((r) => r.firstCorrect).length + (x.rebuild.firstCorrect ? 1 : 0);
    checked += x.searches.searchMs.length + evictions.length + x.restarts.length + 1;
  }
  console.log(`\nSummary (baselines measured in this run; medians of the rounds above; "full rebuild": the first search after the`);
  console.log(`persisted index was marked stale, as every start-up was before it was persisted)`);
  console.log(table([
    ["figure", "value", "baseline", "", "ratio", "goal", "met"],
    ...rows.map(([figure, value, unit, baselineName, baseline, goal, met]) => [
      figure, `${fmt(value)} ${unit}`, baselineName, `${fmt(baseline)} ${unit}`, `${fmt(value / baseline)}×`, goal, met === null ? "—" : met ? "yes" : "no",
    ]),
    ["answers identical to the in-Node index", `${same}/${checked}`, "", "", "", "all", same === checked ? "yes" : "no"],
  ]));
}
