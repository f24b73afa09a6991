// Part 1 of bench/directory-bench.ts, warm: POST /directory/search vs GET /healthz at concurrency 1,
// interleaved, each answer checked against an in-Node SearchIndex over the same cards.
import type { SearchIndex } from "../worker/directory/search-index.ts";
import type { HttpClient } from "./http-client.ts";

export const SEARCH_LIMIT = 10;
/** Warm-up pairs (healthz + search) before the measured ones. */
export const SEARCH_WARMUP = 20;

interface SearchAnswer {
  agents: { name: string; best_skill_id: string | null; score: number }[];
  total: number;
}

/** One search: its latency, body size, and the names it returned (ranked). */
export async function search(relay: HttpClient, query: string): Promise<{ ms: number; bytes: number; hits: string[] }> {
  const body = JSON.stringify({ query, limit: SEARCH_LIMIT });
  const start = performance.now();
  const answer = await relay.request("POST", "/directory/search", { "content-type": "application/json" }, body);
  const ms = performance.now() - start;
  if (answer.status !== 200) throw new Error(`search "${query}" -> ${answer.status}: ${answer.body.slice(0, 300)}`);
  const parsed = JSON.parse(answer.body) as SearchAnswer;
  return { ms, bytes: Buffer.byteLength(answer.body), hits: parsed.agents.map((a) => `${a.name}/${a.best_skill_id}`) };
}

export const healthz = (relay: HttpClient) => relay.timed("GET", "/healthz", 200);

/** Whether a search returned the reference index's ranked names and best skills. */
export function sameHits(hits: string[], reference: SearchIndex, query: string): boolean {
  const expected = reference.search(query, SEARCH_LIMIT).map((h) => `${h.card.name}/${h.best_skill_id}`);
  return expected.length === hits.length && expected.every((e, i) => e === hits[i]);
}

export interface SearchFigures {
  searchMs: number[];
  healthzMs: number[];
  bytes: number[];
  hitCounts: number[];
  /** Queries whose ranked names and best skills equal the in-Node SearchIndex's. */
  sameAsReference: number;
  /** The same queries on an in-Node SearchIndex over the same cards (index work alone, V8 in Node). */
  nodeIndexMs: number[];
}

export async function runSearches(relay: HttpClient, queries: string[], warmup: string[], reference: SearchIndex): Promise<SearchFigures> {
  for (const query of warmup) {
    await healthz(relay);
    await search(relay, query);
  }
  const figures: SearchFigures = { searchMs: [], healthzMs: [], bytes: [], hitCounts: [], sameAsReference: 0, nodeIndexMs: [] };
  // Interleaved, so both see the same moment of the machine.
  for (const query of queries) {
    figures.healthzMs.push(await healthz(relay));
    const answer = await search(relay, query);
    figures.searchMs.push(answer.ms);
    figures.bytes.push(answer.bytes);
    figures.hitCounts.push(answer.hits.length);
    if (sameHits(answer.hits, reference, query)) figures.sameAsReference++;
  }
  for (const query of [...warmup, ...queries]) reference.search(query, SEARCH_LIMIT);
  for (const query of queries) {
    const start = performance.now();
    reference.search(query, SEARCH_LIMIT);
    figures.nodeIndexMs.push(performance.now() - start);
  }
  return figures;
}
