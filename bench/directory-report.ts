// What bench/directory-bench.ts prints for part 1 (10,000 cards) and 1b (100,000): the directory's load,
// warm searches, and the Directory object's cold start after an eviction, after a restart, and with a
// full rebuild of its search index.
import { AFTER_EVICTION, DIRECTORY_NAME, EVICTIONS, RESTARTS } from "./directory-cold-start.ts";
import type { ColdRound, InboxColdRound, RestartRound } from "./directory-cold-start.ts";
import { LOAD_CONCURRENCY } from "./directory-load.ts";
import type { DirectoryStats, LoadFigures } from "./directory-load.ts";
import type { ScaleFigures } from "./directory-scale.ts";
import { UPDATE_CONCURRENCY } from "./directory-scale.ts";
import { SEARCH_LIMIT, SEARCH_WARMUP } from "./directory-search-bench.ts";
import type { SearchFigures } from "./directory-search-bench.ts";
import { fmt, median, p50, p99, range, rate, table } from "./stats.ts";

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
export const mib = (bytes: number) => bytes / 1024 / 1024;

export interface DirectoryReport {
  loaded: LoadFigures;
  /** Directory.indexStats() right after the load (counters since the object started, empty). */
  loadStats: DirectoryStats;
  skills: number;
  vocabulary: number;
  referenceBuildMs: number;
  searches: SearchFigures;
  evictions: ColdRound[];
  inboxEvictions: InboxColdRound[];
  restarts: RestartRound[];
  rebuild: RestartRound;
  storage: { files: number; bytes: number };
  directoryDb: { files: number; bytes: number };
}

/** Rows written per publish by the cards table and by the index, between two readings of the stats. */
export function rowsPerPublish(before: Pick<DirectoryStats, "rowsWritten" | "cardRowsWritten"> | null, after: DirectoryStats, publishes: number) {
  return { cards: (after.cardRowsWritten - (before?.cardRowsWritten ?? 0)) / publishes, index: (after.rowsWritten - (before?.rowsWritten ?? 0)) / publishes };
}

function printSearches(s: SearchFigures, agents: number): void {
  console.log(table([
    ["request", "count", "p50 ms", "p99 ms", "max ms"],
    ["GET /healthz (baseline)", String(s.healthzMs.length), fmt(p50(s.healthzMs)), fmt(p99(s.healthzMs)), fmt(Math.max(...s.healthzMs))],
    ["POST /directory/search", String(s.searchMs.length), fmt(p50(s.searchMs)), fmt(p99(s.searchMs)), fmt(Math.max(...s.searchMs))],
    ["  index work alone: same queries, in-Node SearchIndex", String(s.nodeIndexMs.length), fmt(p50(s.nodeIndexMs)), fmt(p99(s.nodeIndexMs)), fmt(Math.max(...s.nodeIndexMs))],
  ]));
  console.log(`   search / healthz: p50 ${fmt(p50(s.searchMs) / p50(s.healthzMs))}×, p99 ${fmt(p99(s.searchMs) / p99(s.healthzMs))}×; search − healthz p50 = ${fmt(p50(s.searchMs) - p50(s.healthzMs))} ms`);
  console.log(`   answers: ${fmt(mean(s.hitCounts), 2)} agents on average, body ${fmt(median(s.bytes) / 1024)} KiB median; ranked names and best skills identical`);
  console.log(`   to an in-Node SearchIndex over the same ${agents} cards (worker/directory/search-index.ts) for ${s.sameAsReference}/${s.searchMs.length} queries.`);
}

function printEvictions(ev: ColdRound[], inbox: InboxColdRound[] | null): void {
  const warmAfter = ev.flatMap((e) => e.warmMs);
  const rows = [
    ["after eviction", "rounds", "median ms", "range ms"],
    ["Directory: 1st search (index load + its terms' blocks + search)", String(ev.length), fmt(median(ev.map((e) => e.firstMs))), range(ev.map((e) => e.firstMs))],
    ["Directory: 2nd search", String(ev.length), fmt(median(ev.map((e) => e.secondMs))), range(ev.map((e) => e.secondMs))],
    [`Directory: searches 4–${AFTER_EVICTION + 1}`, String(warmAfter.length), fmt(median(warmAfter)), range(warmAfter)],
  ];
  const inboxWarm = inbox?.flatMap((e) => e.warmMs) ?? [];
  if (inbox) {
    rows.push(["Inbox (baseline): 1st signed poll", String(inbox.length), fmt(median(inbox.map((e) => e.firstMs))), range(inbox.map((e) => e.firstMs))]);
    rows.push(["Inbox (baseline): next 10 polls", String(inboxWarm.length), fmt(median(inboxWarm)), range(inboxWarm)]);
  }
  console.log(table(rows));
  const byPosition = Array.from({ length: AFTER_EVICTION + 1 }, (_, i) => fmt(median(ev.map((e) => e.allMs[i]!))));
  console.log(`   median by position after eviction (ms), searches 1–${AFTER_EVICTION + 1}: ${byPosition.join(", ")}`);
  console.log(`   Directory first search / warm search: ${fmt(median(ev.map((e) => e.firstMs)) / median(warmAfter))}×; cold-start cost ≈ ${fmt(median(ev.map((e) => e.firstMs)) - median(warmAfter))} ms`);
  if (inbox) console.log(`   (Inbox: ${fmt(median(inbox.map((e) => e.firstMs)) - median(inboxWarm))} ms).`);
  console.log(`   The evict call itself took ${range(ev.map((e) => e.evictMs))} ms (not counted). First searches answered as the in-Node index does: ${ev.filter((e) => e.firstCorrect).length}/${ev.length}.`);
}

function printRestarts(rs: RestartRound[], rebuild: RestartRound): void {
  const restartWarm = rs.flatMap((x) => x.warmMs);
  const row = (what: string, pick: (x: RestartRound) => number): string[] =>
    [what, String(rs.length), fmt(median(rs.map(pick))), range(rs.map(pick)), fmt(pick(rebuild))];
  console.log(table([
    ["after restart", "rounds", "median ms", "range ms", "rebuild ms"],
    row("new Miniflare(...) -> ready (workerd up)", (x) => x.readyMs),
    row("1st GET /healthz", (x) => x.healthzMs),
    row("1st POST /directory/search", (x) => x.firstSearchMs),
    row("2nd search", (x) => x.secondSearchMs),
    [`searches 4–${AFTER_EVICTION + 1}`, String(restartWarm.length), fmt(median(restartWarm)), range(restartWarm), fmt(median(rebuild.warmMs))],
  ]));
  const firstMs = median(rs.map((x) => x.firstSearchMs));
  console.log(`   first search on the persisted index / with the full rebuild: ${fmt(firstMs / rebuild.firstSearchMs)}× (${fmt(firstMs)} vs ${fmt(rebuild.firstSearchMs)} ms)`);
  console.log(`   First searches after restart answered as the in-Node index does: ${rs.filter((x) => x.firstCorrect).length}/${rs.length}, after the rebuild ${rebuild.firstCorrect ? 1 : 0}/1.`);
}

const COLD_START = `   The search index is persisted in the Directory's SQLite (worker/directory/index-store.ts): a start reads its unit arrays
   and agent names (a few rows, no card), replays the cards changed since its last commit (≤ 1,000), and a search reads
   the postings blocks of its own terms, cached from then on.`;

export function printDirectory(r: DirectoryReport, agents: number, queries: number): void {
  const s = r.searches;
  console.log(`\n1. Directory search on ${agents} agents through the relay Worker (Miniflare 5, sqlite DOs, storage persisted to disk)`);
  console.log(`   Directory: ${agents} synthetic cards (bench/directory-cards.ts, fixed seed): ${r.skills} skills (2–4 per agent), names,`);
  console.log(`   descriptions, tags and examples drawn from ${r.vocabulary} real English words in 40 topics, Zipf-skewed, so common words`);
  console.log(`   match thousands of skills. Loaded as a real agent does it: each inbox claimed (signed PUT /inbox/{id} -> 201), then`);
  console.log(`   its card published (signed PUT /directory/agents/{name} -> 201, which requires the claimed inbox); Node-crypto`);
  console.log(`   Ed25519 keys, keep-alive node:http client, ${LOAD_CONCURRENCY} agents in flight:`);
  console.log(table([
    ["load (setup, not a headline figure)", "agents", "wall s", "agents/s", "p50 ms", "p99 ms"],
    ["claim + publish per agent", String(r.loaded.load.count), fmt(r.loaded.load.wallMs / 1000), fmt(rate(r.loaded.load)), fmt(p50(r.loaded.load.latenciesMs)), fmt(p99(r.loaded.load.latenciesMs))],
    ["  of which PUT /inbox/{id}", "", "", "", fmt(p50(r.loaded.claimMs)), fmt(p99(r.loaded.claimMs))],
    ["  of which PUT /directory/agents/{name}", "", "", "", fmt(p50(r.loaded.publishMs)), fmt(p99(r.loaded.publishMs))],
  ]));
  const rows = rowsPerPublish(null, r.loadStats, r.loaded.load.count);
  console.log(`   Rows written per publish (Directory.indexStats, SqlStorageCursor.rowsWritten): cards table ${fmt(rows.cards)} (all a publish`);
  console.log(`   wrote before the index was persisted), index ${fmt(rows.index)} (its pending row, its share of ${r.loadStats.commits} commits and of`);
  console.log(`   emptying search_pending); ${r.loadStats.pending} cards pending after the load.`);
  console.log(`   Persisted storage after the load: ${r.storage.files} files, ${fmt(mib(r.storage.bytes))} MiB; the Directory's own: ${r.directoryDb.files} file(s), ${fmt(mib(r.directoryDb.bytes))} MiB.`);
  console.log(`\n   Search: ${queries} queries of 1–4 terms (mostly one topic's words, one term in twenty a word no card has),`);
  console.log(`   POST /directory/search {"query", "limit": ${SEARCH_LIMIT}} at concurrency 1, each right after a GET /healthz (the baseline:`);
  console.log(`   the Worker's edge alone, no Durable Object), same keep-alive connection; ${SEARCH_WARMUP} warm-up pairs first, not counted.`);
  console.log(`   Latency = performance.now() around the request until the whole body was read.`);
  printSearches(s, agents);
  console.log(`   The in-Node row runs the Worker's index code in this process's V8 after a warm-up pass: what the Directory object itself`);
  console.log(`   spends per query; the rest of a search is HTTP, the edge Worker, the DO call and JSON of the ${SEARCH_LIMIT} cards.`);

  console.log(`\n   Cold start of the Directory object (${agents} cards). Evicted ${EVICTIONS}× with Miniflare's`);
  console.log(`   unsafeEvictDurableObject("clawrelay", "Directory", {name: "${DIRECTORY_NAME}"}) (workerd:unsafe evict: the object goes, its`);
  console.log(`   storage stays), then ${AFTER_EVICTION} searches at concurrency 1, different queries. Baseline: the same for one agent's Inbox object`);
  console.log(`   (a signed GET /inbox/{id}/messages?after=0&limit=1 -> 200: config and an empty queue), evicted ${EVICTIONS}×, 5 different inboxes.`);
  console.log(`   workerd also evicts an idle object by itself after 10 s without requests (Cloudflare after ~70–140 s): a directory`);
  console.log(`   nobody searched for a while pays this on the next search.`);
  console.log(COLD_START);
  printEvictions(r.evictions, r.inboxEvictions);

  console.log(`\n   Restart: Miniflare disposed and started again on the persisted storage (${RESTARTS}×), then GET /healthz (the Worker's`);
  console.log(`   isolate), the first search (the Directory object from disk), ${AFTER_EVICTION} more searches. Rebuild column (the baseline,`);
  console.log(`   once): the same after marking the persisted index stale (format 0, bench/directory-storage.ts) while workerd was down, so`);
  console.log(`   the first search rebuilds it from every card, as every start did before it was persisted (JSON.parse and index each`);
  console.log(`   card; now also writing the index). The same index work in this process: in-Node SearchIndex build ${fmt(r.referenceBuildMs)} ms.`);
  printRestarts(r.restarts, r.rebuild);
}

export function printScale(x: ScaleFigures, part1: DirectoryReport, db: { files: number; bytes: number }, queries: number): void {
  console.log(`\n1b. The same directory grown to ${x.cards} cards (${x.skills} skills): part 1's ${part1.loaded.load.count} and ${x.cards - part1.loaded.load.count} more`);
  console.log(`   inserted into the Directory's SQLite while workerd was down (bench/directory-storage.ts: the cards table as a`);
  console.log(`   publish writes it, without ${x.cards - part1.loaded.load.count} inboxes), the persisted index marked stale, then the relay started: its first`);
  console.log(`   search rebuilt the index ("rebuild" columns below). The Directory's storage at the end: ${db.files} file(s), ${fmt(mib(db.bytes))} MiB.`);
  console.log(`\n   Cold start at ${x.cards} cards right after that rebuild (no card pending), evicted ${EVICTIONS}× as in part 1:`);
  printEvictions(x.idleEvictions, null);
  console.log(`\n   Search, the same ${queries} queries as part 1 (baseline: part 1's figures at ${part1.loaded.load.count} cards):`);
  printSearches(x.searches, x.cards);
  const s1 = part1.searches;
  console.log(`   search p50 ${x.cards} / ${part1.loaded.load.count} cards: ${fmt(p50(x.searches.searchMs) / p50(s1.searchMs))}× over HTTP, ${fmt(p50(x.searches.nodeIndexMs) / p50(s1.nodeIndexMs))}× for the in-Node index work`);
  console.log(`   (${fmt(p50(x.searches.searchMs))} vs ${fmt(p50(s1.searchMs))} ms; ${fmt(p50(x.searches.nodeIndexMs))} vs ${fmt(p50(s1.nodeIndexMs))} ms): every posting of the query's terms is scored, to count total.`);
  const st = x.searchedStats;
  console.log(`   Memory after these searches (TermIndex.memoryBytes, an estimate: typed arrays, names, cached postings): ${fmt(mib(st.memoryBytes))} MiB,`);
  console.log(`   of which cached postings ${fmt(mib(st.cache.bytes))} MiB for ${st.cache.terms} terms (the cache stops at 32 MiB); Durable Object limit 128 MB.`);
  console.log(`   Each of those terms was read from its blocks in SQLite by the first search using it, most of them in the measured ones.`);

  const rows = rowsPerPublish(x.beforeUpdates, x.afterUpdates, x.updates.count);
  console.log(`\n   Updates: ${x.updates.count} cards of part 1b re-published with another card's content through Directory.publish over`);
  console.log(`   Miniflare's RPC proxy (no HTTP, no signature), ${UPDATE_CONCURRENCY} in flight: ${fmt(rate(x.updates))}/s, p50 ${fmt(p50(x.updates.latenciesMs))} ms, p99 ${fmt(p99(x.updates.latenciesMs))} ms,`);
  console.log(`   max ${fmt(Math.max(...x.updates.latenciesMs))} ms (a commit rewrites the last chunk's blocks). Rows written per publish: cards table ${fmt(rows.cards)},`);
  console.log(`   index ${fmt(rows.index)} (${x.afterUpdates.commits - x.beforeUpdates.commits} commit(s)); ${x.afterUpdates.pending} cards pending, replayed by every start below.`);

  console.log(`\n   Restart at ${x.cards} cards (${RESTARTS}×) as in part 1, ${x.afterUpdates.pending} cards pending; rebuild column: the first start of part 1b:`);
  printRestarts(x.restarts, x.rebuild);
  console.log(`\n   Cold start at ${x.cards} cards with ${x.afterUpdates.pending} cards pending (replayed from the cards table), evicted ${EVICTIONS}×:`);
  printEvictions(x.evictions, null);
  console.log(`   In-Node SearchIndex build of all ${x.cards} cards (index work of a rebuild, without SQLite): ${fmt(x.referenceBuildMs / 1000)} s.`);
}
