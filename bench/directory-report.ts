// What the directory scenario prints: part 1 (10,000 cards), 1b (100,000), 2 (delegation) and the summary,
// each figure next to its same-run baseline.
import type { DirectoryStats } from "../worker/directory/index-stats.ts";
import { DEFAULT_CACHE_BYTES } from "../worker/directory/postings.ts";
import { AFTER_EVICTION, EVICTIONS, LOAD_CONCURRENCY, RESTARTS, SEARCH_LIMIT, SEARCH_WARMUP, UPDATE_CONCURRENCY } from "./directory-rounds.ts";
import type { ColdRound, Part1, RestartRound, Scale, SearchFigures } from "./directory-rounds.ts";
import { CONCURRENCY, RATE_PER_MINUTE, SKILL, TARGET_NAME, WARMUP } from "./delegation-run.ts";
import type { Delegation } from "./delegation-run.ts";
import { fmt, latencyRow, loadRow, mean, median, mib, p50, p99, printGoalSummary, range, rate, table, unitRow } from "./report.ts";

/** The brief's goal: an object with 100,000 cards answers its first search in at most this. */
const FIRST_SEARCH_GOAL_MS = 1000;
/** Index rows a publish may add to what the cards table takes. */
const INDEX_ROWS_GOAL = 3;
const DO_MEMORY_BYTES = 128e6;

const rowsPerPublish = (before: DirectoryStats | null, after: DirectoryStats, publishes: number) =>
  ({ cards: (after.cardRowsWritten - (before?.cardRowsWritten ?? 0)) / publishes, index: (after.rowsWritten - (before?.rowsWritten ?? 0)) / publishes });
const firstMs = (rounds: readonly { firstMs: number }[]) => median(rounds.map((e) => e.firstMs));
const warmMs = (rounds: readonly { warmMs: number[] }[]) => median(rounds.flatMap((e) => e.warmMs));
const correct = (rounds: readonly { firstCorrect: boolean }[]) => rounds.filter((r) => r.firstCorrect).length;
const medianRow = (label: string, ms: number[], extra: string[] = []) => [label, String(ms.length), fmt(median(ms)), range(ms), ...extra];

function printSearches(s: SearchFigures, agents: number): void {
  const row = (label: string, ms: number[]) => [label, String(ms.length), fmt(p50(ms)), fmt(p99(ms)), fmt(Math.max(...ms))];
  console.log(table([
    ["request", "count", "p50 ms", "p99 ms", "max ms"], row("GET /healthz (baseline)", s.healthzMs), row("POST /directory/search", s.searchMs),
    row("  index work alone: same queries, in-Node SearchIndex", s.nodeIndexMs),
  ]));
  console.log(`   search / healthz: p50 ${fmt(p50(s.searchMs) / p50(s.healthzMs))}×, p99 ${fmt(p99(s.searchMs) / p99(s.healthzMs))}×; search − healthz p50 = ${fmt(p50(s.searchMs) - p50(s.healthzMs))} ms`);
  console.log(`   answers: ${fmt(mean(s.hitCounts), 2)} agents on average, body ${fmt(median(s.bytes) / 1024)} KiB median; as an in-Node index over the ${agents} cards ranks: ${s.sameAsReference}/${s.searchMs.length}`);
}

function printEvictions(ev: ColdRound[], inbox?: { firstMs: number; warmMs: number[] }[]): void {
  console.log(table([
    ["after eviction", "rounds", "median ms", "range ms"],
    medianRow("Directory: 1st search (index load + its terms' blocks + search)", ev.map((e) => e.firstMs)), medianRow("Directory: 2nd search", ev.map((e) => e.secondMs)),
    medianRow(`Directory: searches 4–${AFTER_EVICTION + 1}`, ev.flatMap((e) => e.warmMs)),
    ...(inbox ? [medianRow("Inbox (baseline): 1st signed poll", inbox.map((e) => e.firstMs)), medianRow("Inbox (baseline): next 10 polls", inbox.flatMap((e) => e.warmMs))] : []),
  ]));
  const byPosition = Array.from({ length: AFTER_EVICTION + 1 }, (_, i) => fmt(median(ev.map((e) => e.allMs[i]!))));
  console.log(`   median by position after eviction (ms), searches 1–${AFTER_EVICTION + 1}: ${byPosition.join(", ")}`);
  console.log(`   Directory first search / warm search: ${fmt(firstMs(ev) / warmMs(ev))}×; cold-start cost ≈ ${fmt(firstMs(ev) - warmMs(ev))} ms${inbox ? ` (Inbox: ${fmt(firstMs(inbox) - warmMs(inbox))} ms)` : ""}`);
  console.log(`   The evict call itself took ${range(ev.map((e) => e.evictMs))} ms (not counted). First searches answered as the in-Node index does: ${correct(ev)}/${ev.length}.`);
}

function printRestarts(rs: RestartRound[], rebuild: RestartRound): void {
  const row = (label: string, pick: (x: RestartRound) => number) => medianRow(label, rs.map(pick), [fmt(pick(rebuild))]);
  console.log(table([
    ["after restart", "rounds", "median ms", "range ms", "rebuild ms"], row("new Miniflare(...) -> ready (workerd up)", (x) => x.readyMs), row("1st GET /healthz", (x) => x.healthzMs),
    row("1st POST /directory/search", (x) => x.firstMs), row("2nd search", (x) => x.secondMs), medianRow(`searches 4–${AFTER_EVICTION + 1}`, rs.flatMap((x) => x.warmMs), [fmt(median(rebuild.warmMs))]),
  ]));
  console.log(`   first search on the persisted index / with the full rebuild: ${fmt(firstMs(rs) / rebuild.firstMs)}× (${fmt(firstMs(rs))} vs ${fmt(rebuild.firstMs)} ms)`);
  console.log(`   First searches after restart answered as the in-Node index does: ${correct(rs)}/${rs.length}, after the rebuild ${correct([rebuild])}/1.`);
}

export function printPart1(r: Part1, queries: number): void {
  const [load, agents] = [r.loaded.load, r.loaded.load.count];
  const rows = rowsPerPublish(null, r.loadStats, agents);
  console.log(`\n1. Directory search on ${agents} agents (${r.skills} skills from ${r.vocabulary} words), each claimed and published as an agent does it, ${LOAD_CONCURRENCY} in flight:`);
  console.log(table([
    ["load (setup, not a headline figure)", "agents", "wall s", "agents/s", "p50 ms", "p99 ms"],
    ["claim + publish per agent", String(agents), fmt(load.wallMs / 1000), fmt(rate(load)), fmt(p50(load.latenciesMs)), fmt(p99(load.latenciesMs))],
    ["  of which PUT /inbox/{id}", "", "", "", fmt(p50(r.loaded.claimMs)), fmt(p99(r.loaded.claimMs))], ["  of which PUT /directory/agents/{name}", "", "", "", fmt(p50(r.loaded.publishMs)), fmt(p99(r.loaded.publishMs))],
  ]));
  console.log(`   Rows written per publish: cards table ${fmt(rows.cards)}, index ${fmt(rows.index)} (pending row, share of ${r.loadStats.commits} commits); ${r.loadStats.pending} cards pending after the load.`);
  console.log(`   Persisted storage after the load: ${r.storage.files} files, ${fmt(mib(r.storage.bytes))} MiB; the Directory's own: ${r.directoryDb.files} file(s), ${fmt(mib(r.directoryDb.bytes))} MiB.`);
  console.log(`\n   Search: ${queries} queries of 1–4 terms (limit ${SEARCH_LIMIT}), each right after a GET /healthz (the edge alone), ${SEARCH_WARMUP} warm-up pairs:`);
  printSearches(r.searches, agents);
  console.log(`\n   Cold start of the Directory object (${agents} cards), evicted ${EVICTIONS}× as an idle one is, then ${AFTER_EVICTION} searches; baseline: an Inbox object's:`);
  printEvictions(r.evictions, r.inboxEvictions);
  console.log(`\n   Restart (${RESTARTS}×) on the persisted storage; rebuild column (baseline): the index marked stale (in-Node build: ${fmt(r.referenceBuildMs)} ms).`);
  printRestarts(r.restarts, r.rebuild);
}

export function printScale(x: Scale, part1: Part1, queries: number): void {
  const small = part1.loaded.load.count;
  console.log(`\n1b. Grown to ${x.cards} cards (${x.skills} skills) in SQLite, the index rebuilt by the first search; the Directory's storage: ${x.db.files} file(s), ${fmt(mib(x.db.bytes))} MiB.`);
  console.log(`\n   Cold start at ${x.cards} cards right after that rebuild (no card pending), evicted ${EVICTIONS}× as in part 1:`);
  printEvictions(x.idleEvictions);
  console.log(`\n   Search, the same ${queries} queries as part 1 (baseline: part 1's figures at ${small} cards):`);
  printSearches(x.searches, x.cards);
  const [s1, s2, st] = [part1.searches, x.searches, x.searchedStats];
  console.log(`   search p50 ${x.cards} / ${small} cards: ${fmt(p50(s2.searchMs) / p50(s1.searchMs))}× over HTTP (${fmt(p50(s2.searchMs))} vs ${fmt(p50(s1.searchMs))} ms), ${fmt(p50(s2.nodeIndexMs) / p50(s1.nodeIndexMs))}× for the in-Node index work (${fmt(p50(s2.nodeIndexMs))} vs ${fmt(p50(s1.nodeIndexMs))} ms)`);
  console.log(`   Memory after these searches (TermIndex.memoryBytes): ${fmt(mib(st.memoryBytes))} MiB, of which cached postings ${fmt(mib(st.cache.bytes))} MiB for ${st.cache.terms} terms (cap 32 MiB).`);
  const [rows, u] = [rowsPerPublish(x.beforeUpdates, x.afterUpdates, x.updates.count), x.updates.latenciesMs];
  console.log(`\n   Updates: ${x.updates.count} cards re-published over the Directory's RPC, ${UPDATE_CONCURRENCY} in flight: ${fmt(rate(x.updates))}/s, p50 ${fmt(p50(u))} ms, p99 ${fmt(p99(u))} ms, max ${fmt(Math.max(...u))} ms;`);
  console.log(`   rows written per publish: cards table ${fmt(rows.cards)}, index ${fmt(rows.index)} (${x.afterUpdates.commits - x.beforeUpdates.commits} commit(s)); ${x.afterUpdates.pending} cards pending, replayed by every start below.`);
  console.log(`\n   Restart at ${x.cards} cards (${RESTARTS}×), ${x.afterUpdates.pending} cards pending; rebuild column: the first start of part 1b:`);
  printRestarts(x.restarts, x.rebuild);
  console.log(`\n   Cold start at ${x.cards} cards with ${x.afterUpdates.pending} cards pending (replayed from the cards table), evicted ${EVICTIONS}×:`);
  printEvictions(x.evictions);
  console.log(`   In-Node SearchIndex build of all ${x.cards} cards (index work of a rebuild, without SQLite): ${fmt(x.referenceBuildMs / 1000)} s.`);
}

export function printSummary(p: Part1, x: Scale | null): void {
  const agents = p.loaded.load.count;
  const row = unitRow;
  const rowsRow = (figure: string, r: { index: number; cards: number }) => row(figure, r.index, "rows", "cards-table rows", r.cards, `≤ ${INDEX_ROWS_GOAL}`, r.index <= INDEX_ROWS_GOAL);
  const firstRow = (figure: string, ms: number, rebuild: number) => row(figure, ms, "ms", "full rebuild, 1st search", rebuild, `≤ ${FIRST_SEARCH_GOAL_MS} ms`, ms <= FIRST_SEARCH_GOAL_MS);
  const rows = [
    row(`search p50, ${agents} cards`, p50(p.searches.searchMs), "ms", "GET /healthz p50", p50(p.searches.healthzMs)),
    row(`1st search after eviction, ${agents} cards`, firstMs(p.evictions), "ms", "full rebuild, 1st search", p.rebuild.firstMs),
    row(`1st search after restart, ${agents} cards`, firstMs(p.restarts), "ms", "full rebuild, 1st search", p.rebuild.firstMs),
    rowsRow(`index rows per publish, ${agents} HTTP`, rowsPerPublish(null, p.loadStats, agents)),
  ];
  const [searched, firsts] = [[p.searches], [...p.evictions, ...p.restarts, p.rebuild]];
  if (x) {
    const [n, pending, coldCost] = [x.cards, x.afterUpdates.pending, (rounds: ColdRound[]) => firstMs(rounds) - warmMs(rounds)];
    const memoryBound = x.searchedStats.memoryBytes - x.searchedStats.cache.bytes + DEFAULT_CACHE_BYTES;
    rows.push(
      row(`search p50, ${n} cards`, p50(x.searches.searchMs), "ms", `search p50, ${agents} cards`, p50(p.searches.searchMs), "reported"),
      row(`  in-Node index work p50, ${n} cards`, p50(x.searches.nodeIndexMs), "ms", `the same, ${agents} cards`, p50(p.searches.nodeIndexMs), "reported"),
      firstRow(`1st search after eviction, ${n} cards`, firstMs(x.idleEvictions), x.rebuild.firstMs), firstRow(`  the same, ${pending} cards pending`, firstMs(x.evictions), x.rebuild.firstMs),
      firstRow(`1st search after restart, ${n} cards, ${pending} pending`, firstMs(x.restarts), x.rebuild.firstMs),
      row(`cold-start cost (1st − warm), ${n} cards`, coldCost(x.idleEvictions), "ms", `the same, ${agents} cards`, coldCost(p.evictions), "reported"),
      rowsRow(`index rows per publish, ${x.updates.count} updates`, rowsPerPublish(x.beforeUpdates, x.afterUpdates, x.updates.count)),
      row(`index memory, ${n} cards, cache full`, memoryBound / 1e6, "MB", "Durable Object limit", DO_MEMORY_BYTES / 1e6, `< ${DO_MEMORY_BYTES / 1e6} MB`, memoryBound < DO_MEMORY_BYTES),
    );
    searched.push(x.searches), firsts.push(...x.idleEvictions, ...x.evictions, ...x.restarts, x.rebuild);
  }
  const same = searched.reduce((n, s) => n + s.sameAsReference, 0) + correct(firsts);
  const total = searched.reduce((n, s) => n + s.searchMs.length, 0) + firsts.length;
  printGoalSummary(`Summary (medians of the rounds above; "full rebuild": the first search after the persisted index was marked stale,\nas every start-up was before it was persisted)`, [
    ...rows, { figure: "answers identical to the in-Node index", value: `${same}/${total}`, baseline: "", ratio: null, goal: "all", met: same === total },
  ]);
}

export function printDelegation(d: Delegation, agents: number, delegations: number): void {
  console.log(`\n2. Delegation to "${TARGET_NAME}" (skill "${SKILL}", ${agents} cards, rate_per_minute ${RATE_PER_MINUTE}) vs its chat completion POSTed straight; conc 1: pairs in turn.`);
  const rows = [["measure", "conc", "count", "wall s", "per s", "p50 ms", "p99 ms"]];
  for (const [c, r] of d.rows) {
    const direct = loadRow("direct POST /v1/chat/completions (baseline)", r.chat);
    rows.push(c === 1 ? [...direct.slice(0, 3), "", "", ...direct.slice(5)] : direct, loadRow("POST /api/delegate-task -> 200 completed", r.delegate));
    rows.push(latencyRow(`  API in -> requester logged "task sent"`, c, r.sentMs), latencyRow(`  "task sent" -> API answer read`, c, r.restMs));
    rows.push(latencyRow(`  ("task sent" -> target logged "task answered")`, c, r.answeredMs));
  }
  console.log(table(rows));
  for (const [c, { delegate, chat, failures }] of d.rows) {
    const [dl, ch] = [delegate.latenciesMs, chat.latenciesMs];
    console.log(
      `   concurrency ${c}: clawrelay's overhead (delegation − direct) p50 ${fmt(p50(dl) - p50(ch))} ms, p99 ${fmt(p99(dl) - p99(ch))} ms;` +
        ` delegation / direct p50 ${fmt(p50(dl) / p50(ch))}×, p99 ${fmt(p99(dl) / p99(ch))}×; failures ${failures.length}${failures.length ? ` (first: ${failures[0]})` : ""}`,
    );
  }
  const problems = (list: string[]) => (list.length ? list.slice(0, 3).join("; ") : "none");
  console.log(`   checks: agents' warnings/errors: requester ${problems(d.requesterProblems)}, target ${problems(d.targetProblems)};`);
  console.log(`           late results dropped ${d.lateDropped}; non-200 answers from the target's gateway ${d.gatewayRefused}`);
  console.log(`   hooks at the gateways in ${CONCURRENCY.length * (WARMUP + delegations)} delegations: requester's ${d.requesterHooks.total} (${d.requesterHooks.acks} the relay's ack of a task), target's ${d.targetHooks.total}`);
}
