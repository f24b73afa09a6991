// The directory's ranking core: units (a card's skills) in an inverted index, ranked BM25-style with a
// coverage factor. Imported by search-index.ts (every card in memory) and index-store.ts (persisted in
// the Directory object's SQLite: postings read term by term, recent changes in memory). Platform-free;
// covered by test/worker/directory/ranking.test.ts and persisted-index.test.ts.
//
// Units have ids, agents ordinals (unit-table.ts); a search runs in search-scratch.ts, scored as in
// bm25-score.ts. This class keeps the postings: recent units' in memory, persisted units' read from the
// base, and which persisted units died since.
import { cardUnits } from "./card-units.ts";
import { MemoryPostings, PostingsCache } from "./postings.ts";
import type { BasePostings, CachedList, Postings } from "./postings.ts";
import type { BaseUnits } from "./base-units.ts";
import type { AgentCard } from "./card.ts";
import { isCommonTerm } from "./common-words.ts";
import { SearchScratch } from "./search-scratch.ts";
import type { Ranking, TermLists } from "./search-scratch.ts";
import { tokenize } from "./tokenize.ts";
import { MAX_RESPELLED, respelling, typoBudget } from "./typo-fallback.ts";
import { UnitTable } from "./unit-table.ts";

const MAX_LIMIT = 50;

export { IndexFormatError } from "./base-units.ts";
export type { BaseUnits } from "./base-units.ts";

export type { BaseList, BasePostings, Postings } from "./postings.ts";

export class TermIndex {
  private readonly table = new UnitTable();
  private readonly scratch = new SearchScratch();

  // Units from baseUnits on have their postings here (all units, without a base).
  private baseUnits = 0;
  private readonly recent = new MemoryPostings();
  // Units below baseUnits: postings from `base`, decoded lists cached by term.
  private base: BasePostings | null = null;
  private readonly cache: PostingsCache;
  /** Base units killed so far: a cached list recounts its live entries when this moved. */
  private deaths = 0;
  private readonly killedBase = new Set<number>();
  /** Every term with persisted entries (some perhaps dead), read from the base on the first typo fallback. */
  private baseTerms: Set<string> | null = null;

  constructor(options: { cacheBytes?: number | undefined } = {}) {
    this.cache = new PostingsCache(options.cacheBytes);
  }

  /** Agents indexed. */
  get size(): number {
    return this.table.liveAgents;
  }

  /** Live units, and all ids handed out (dead ones included): the id space the arrays span. */
  get unitCounts(): { live: number; ids: number; base: number } {
    return { live: this.table.liveUnits, ids: this.table.nextUnit, base: this.baseUnits };
  }

  /**
   * Starts an empty index from persisted units whose postings `base` holds; takes the arrays over. Throws
   * IndexFormatError when they do not hold together (base-units.ts agentRanges, or a name stored twice).
   */
  loadBase(base: BasePostings, units: BaseUnits): void {
    this.table.load(units);
    this.scratch.fit(this.table);
    this.base = base;
    this.baseUnits = units.count;
    this.baseTerms = null;
  }

  /**
   * Adds `card`, or replaces the card of the same name (its old units die, the new ones get new ids).
   * The card itself is not kept.
   */
  upsert(card: AgentCard): void {
    const units = cardUnits(card);
    let agent = this.table.ordinalOf(card.name);
    if (agent === undefined) agent = this.table.addAgent(card.name);
    else this.kill(agent);
    const first = this.table.append(agent, units);
    units.forEach(({ tfs }, i) => this.recent.add(first + i, tfs));
    this.scratch.fit(this.table);
  }

  /** Removes the card named `name`; false when there was none. */
  remove(name: string): boolean {
    const agent = this.table.ordinalOf(name);
    if (agent === undefined || this.table.agentUnits[agent] === 0) return false;
    this.kill(agent);
    return true;
  }

  private kill(agent: number): void {
    const { first, count } = this.table.kill(agent);
    for (let id = first; id < first + count; id++) {
      if (id < this.baseUnits) {
        this.killedBase.add(id);
        this.deaths++;
      } else {
        this.recent.remove(id);
      }
    }
  }

  /**
   * Agents matching `query`, best first (score, then name, so ties are stable), at most `limit`, and
   * how many matched in all. The score is the idf-weighted share of the query the agent's best unit
   * covers, times the coverage factor, in [0, 1): each query term contributes idf·sat, sat being BM25's
   * saturated term frequency scaled into [0, 1), and the sum is divided by the total idf of the query.
   * So 0.9 means "nearly every term, strongly" — comparable across queries, unlike a raw BM25 sum.
   *
   * Common words count, but a hit resting on them alone must cover half the query (search-scratch.ts).
   * A query that finds nothing is tried once more with each term no card contains respelled into the
   * nearest index term (typo-fallback.ts; the first MAX_RESPELLED that may be), those terms counting as
   * weak as common words do.
   * `keepWeak`: also return the hits the guard set aside (Ranking.weak), for hybrid search to weigh.
   */
  rank(query: string, limit: number, keepWeak = false): Ranking {
    const max = Math.min(MAX_LIMIT, Math.max(1, Math.trunc(limit) || 1));
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0 || this.table.liveUnits === 0) return { hits: [], total: 0, weak: [] };
    const lists = this.termLists(terms, new Set());
    const ranking = this.scratch.rank(this.table, lists, max, keepWeak);
    if (ranking.hits.length > 0) return ranking;
    const respelled = new Set<string>();
    let tries = 0;
    const fixed = terms.map((term, t) => {
      // Each try is a pass over the vocabulary: a bounded number per query (typo-fallback.ts MAX_RESPELLED).
      if (documentFrequency(lists[t]!) > 0 || typoBudget(term) === 0 || tries++ >= MAX_RESPELLED) return term;
      const candidate = respelling(term, this.vocabulary(), (other) => documentFrequency(this.termLists([other], respelled)[0]!));
      if (candidate === null) return term;
      respelled.add(candidate);
      return candidate;
    });
    if (respelled.size === 0) return ranking;
    const again = this.scratch.rank(this.table, this.termLists([...new Set(fixed)], respelled), max, keepWeak);
    return again.hits.length > 0 || again.weak.length > 0 ? again : ranking;
  }

  /** Each term's postings, read before any scoring: reading a persisted list may throw, and must not leave the scratch half-filled. */
  private termLists(terms: readonly string[], respelled: ReadonlySet<string>): TermLists[] {
    return terms.map((term) => ({ base: this.baseList(term), recent: this.recent.get(term), weak: respelled.has(term) || isCommonTerm(term) }));
  }

  /** The terms the typo fallback may respell into: the persisted ones (read once) and the recent ones. */
  private *vocabulary(): Iterable<string> {
    if (this.base && this.baseUnits > 0) yield* (this.baseTerms ??= new Set(this.base.terms()));
    yield* this.recent.all().keys();
  }

  /** The persisted postings of `term`, with the number of live units among them. */
  private baseList(term: string): CachedList | undefined {
    if (!this.base || this.baseUnits === 0) return undefined;
    return this.cache.get(term, this.base, this.table.unitAgent, this.deaths);
  }

  // What index-store.ts persists, and its acknowledgement.

  /** Unit arrays (views, valid until the next change) and agent names by ordinal. */
  units(): BaseUnits {
    return this.table.units();
  }

  /** Postings of the units not yet persisted (ids from unitCounts.base on). */
  recentPostings(): ReadonlyMap<string, Postings> {
    return this.recent.all();
  }

  /** Recent units (not yet persisted) in memory: how much a commit would write. */
  get recentUnits(): number {
    return this.recent.units;
  }

  /** Persisted units that died since the last commit. */
  killedBaseUnits(): ReadonlySet<number> {
    return this.killedBase;
  }

  /** The caller persisted units() and recentPostings() under `base`: every unit now reads from it. */
  commit(base: BasePostings): void {
    // The persisted terms only grow by the recent ones (dead terms stay until a rebuild; the fallback skips them).
    if (this.baseTerms) for (const term of this.recent.all().keys()) this.baseTerms.add(term);
    this.base = base;
    this.baseUnits = this.table.nextUnit;
    this.recent.clear();
    this.killedBase.clear();
    this.cache.clear();
  }

  /** Rough bytes held: the arrays, names, recent postings, the cache and the typo fallback's terms (V8 overheads estimated). */
  memoryBytes(): number {
    let terms = 0;
    for (const term of this.baseTerms ?? []) terms += 2 * term.length + 48;
    return this.table.memoryBytes() + this.scratch.byteLength + this.recent.memoryBytes() + this.cache.use.bytes + terms;
  }

  /** Cached persisted postings: terms and bytes. */
  get cacheUse(): { terms: number; bytes: number } {
    return this.cache.use;
  }
}

/** Live units containing a term. */
function documentFrequency({ base, recent }: TermLists): number {
  return (base?.live ?? 0) + (recent?.ids.length ?? 0);
}
