// What bench/directory-bench.ts prints for part 1: the directory's load, warm searches, and the
// Directory object's cold start after an eviction and after a restart.
import { AFTER_EVICTION, DIRECTORY_NAME, EVICTIONS, RESTARTS } from "./directory-cold-start.ts";
import type { ColdRound, InboxColdRound, RestartRound } from "./directory-cold-start.ts";
import { LOAD_CONCURRENCY } from "./directory-load.ts";
import type { LoadFigures } from "./directory-load.ts";
import { SEARCH_LIMIT, SEARCH_WARMUP } from "./directory-search-bench.ts";
import type { SearchFigures } from "./directory-search-bench.ts";
import { fmt, median, p50, p99, range, rate, table } from "./stats.ts";

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const mib = (bytes: number) => bytes / 1024 / 1024;

export interface DirectoryReport {
  loaded: LoadFigures;
  skills: number;
  vocabulary: number;
  searches: SearchFigures;
  evictions: ColdRound[];
  inboxEvictions: InboxColdRound[];
  restarts: RestartRound[];
  storage: { files: number; bytes: number };
  directoryDb: { files: number; bytes: number };
}

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
  console.log(`   Persisted storage after the load: ${r.storage.files} files, ${fmt(mib(r.storage.bytes))} MiB; the Directory's own: ${r.directoryDb.files} file(s), ${fmt(mib(r.directoryDb.bytes))} MiB.`);
  console.log(`\n   Search: ${queries} queries of 1–4 terms (mostly one topic's words, one term in twenty a word no card has),`);
  console.log(`   POST /directory/search {"query", "limit": ${SEARCH_LIMIT}} at concurrency 1, each right after a GET /healthz (the baseline:`);
  console.log(`   the Worker's edge alone, no Durable Object), same keep-alive connection; ${SEARCH_WARMUP} warm-up pairs first, not counted.`);
  console.log(`   Latency = performance.now() around the request until the whole body was read.`);
  console.log(table([
    ["request", "count", "p50 ms", "p99 ms", "max ms"],
    ["GET /healthz (baseline)", String(s.healthzMs.length), fmt(p50(s.healthzMs)), fmt(p99(s.healthzMs)), fmt(Math.max(...s.healthzMs))],
    ["POST /directory/search", String(s.searchMs.length), fmt(p50(s.searchMs)), fmt(p99(s.searchMs)), fmt(Math.max(...s.searchMs))],
    ["  index work alone: same queries, in-Node SearchIndex", String(s.nodeIndexMs.length), fmt(p50(s.nodeIndexMs)), fmt(p99(s.nodeIndexMs)), fmt(Math.max(...s.nodeIndexMs))],
  ]));
  console.log(`   search / healthz: p50 ${fmt(p50(s.searchMs) / p50(s.healthzMs))}×, p99 ${fmt(p99(s.searchMs) / p99(s.healthzMs))}×; search − healthz p50 = ${fmt(p50(s.searchMs) - p50(s.healthzMs))} ms`);
  console.log(`   answers: ${fmt(mean(s.hitCounts), 2)} agents on average, body ${fmt(median(s.bytes) / 1024)} KiB median; ranked names and best skills identical`);
  console.log(`   to an in-Node SearchIndex over the same ${agents} cards (worker/directory/search-index.ts) for ${s.sameAsReference}/${s.searchMs.length} queries.`);
  console.log(`   The in-Node row runs the Worker's index code in this process's V8 after a warm-up pass: what the Directory object itself`);
  console.log(`   spends per query; the rest of a search is HTTP, the edge Worker, the DO call and JSON of the ${SEARCH_LIMIT} cards.`);

  const ev = r.evictions;
  const warmAfter = ev.flatMap((e) => e.warmMs);
  const inboxWarm = r.inboxEvictions.flatMap((e) => e.warmMs);
  console.log(`\n   Cold start of the Directory object (${agents} cards): the index lives in memory and is rebuilt from SQLite in the`);
  console.log(`   constructor (SELECT card FROM cards, JSON.parse, SearchIndex.upsert each). Evicted ${EVICTIONS}× with Miniflare's`);
  console.log(`   unsafeEvictDurableObject("clawrelay", "Directory", {name: "${DIRECTORY_NAME}"}) (workerd:unsafe evict: the object goes, its`);
  console.log(`   storage stays), then ${AFTER_EVICTION} searches at concurrency 1, different queries. Baseline: the same for one agent's Inbox object`);
  console.log(`   (a signed GET /inbox/{id}/messages?after=0&limit=1 -> 200: config and an empty queue), evicted ${EVICTIONS}×, 5 different inboxes.`);
  console.log(`   workerd also evicts an idle object by itself after 10 s without requests (Cloudflare after ~70–140 s): a directory`);
  console.log(`   nobody searched for a while pays this on the next search.`);
  console.log(table([
    ["after eviction", "rounds", "median ms", "range ms"],
    ["Directory: 1st search (constructor + index rebuild + search)", String(ev.length), fmt(median(ev.map((e) => e.firstMs))), range(ev.map((e) => e.firstMs))],
    ["Directory: 2nd search", String(ev.length), fmt(median(ev.map((e) => e.secondMs))), range(ev.map((e) => e.secondMs))],
    [`Directory: searches 4–${AFTER_EVICTION + 1}`, String(warmAfter.length), fmt(median(warmAfter)), range(warmAfter)],
    ["Inbox (baseline): 1st signed poll", String(r.inboxEvictions.length), fmt(median(r.inboxEvictions.map((e) => e.firstMs))), range(r.inboxEvictions.map((e) => e.firstMs))],
    ["Inbox (baseline): next 10 polls", String(inboxWarm.length), fmt(median(inboxWarm)), range(inboxWarm)],
  ]));
  const byPosition = Array.from({ length: AFTER_EVICTION + 1 }, (_, i) => fmt(median(ev.map((e) => e.allMs[i]!))));
  console.log(`   median by position after eviction (ms), searches 1–${AFTER_EVICTION + 1}: ${byPosition.join(", ")}`);
  console.log(`   Directory first search / warm search: ${fmt(median(ev.map((e) => e.firstMs)) / median(warmAfter))}×; cold-start cost ≈ ${fmt(median(ev.map((e) => e.firstMs)) - median(warmAfter))} ms`);
  console.log(`   (Inbox: ${fmt(median(r.inboxEvictions.map((e) => e.firstMs)) - median(inboxWarm))} ms). The evict call itself took ${range(ev.map((e) => e.evictMs))} ms (not counted).`);
  console.log(`   First searches answered as the in-Node index does: ${ev.filter((e) => e.firstCorrect).length}/${ev.length}.`);

  const rs = r.restarts;
  const restartWarm = rs.flatMap((x) => x.warmMs);
  console.log(`\n   Restart: Miniflare disposed and started again on the persisted storage (${RESTARTS}×), then GET /healthz (the Worker's`);
  console.log(`   isolate), the first search (the Directory object from disk), ${AFTER_EVICTION} more searches.`);
  console.log(table([
    ["after restart", "rounds", "median ms", "range ms"],
    ["new Miniflare(...) -> ready (workerd up)", String(rs.length), fmt(median(rs.map((x) => x.readyMs))), range(rs.map((x) => x.readyMs))],
    ["1st GET /healthz", String(rs.length), fmt(median(rs.map((x) => x.healthzMs))), range(rs.map((x) => x.healthzMs))],
    ["1st POST /directory/search", String(rs.length), fmt(median(rs.map((x) => x.firstSearchMs))), range(rs.map((x) => x.firstSearchMs))],
    ["2nd search", String(rs.length), fmt(median(rs.map((x) => x.secondSearchMs))), range(rs.map((x) => x.secondSearchMs))],
    [`searches 4–${AFTER_EVICTION + 1}`, String(restartWarm.length), fmt(median(restartWarm)), range(restartWarm)],
  ]));
  console.log(`   First searches after restart answered as the in-Node index does: ${rs.filter((x) => x.firstCorrect).length}/${rs.length}.`);
}
