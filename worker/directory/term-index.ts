// The directory's ranking core: units (a card's skills) in an inverted index, ranked BM25-style with a
// coverage factor. Imported by search-index.ts (every card in memory) and index-store.ts (persisted in
// the Directory object's SQLite: postings read term by term, recent changes in memory). Platform-free;
// covered by test/worker/directory/ranking.test.ts and persisted-index.test.ts.
//
// Units have ids, agents ordinals: flat typed arrays, so the scoring loop reads flat memory and an
// index of 100,000 cards needs no object per card. An agent's live units have consecutive ids; ids are
// never reused (a replaced card's units die and the new ones are appended), so postings persisted
// before a change stay valid and only need their dead entries skipped.
import { cardUnits } from "./card-units.ts";
import { IndexFormatError, agentRanges } from "./base-units.ts";
import { MemoryPostings, PostingsCache } from "./postings.ts";
import type { BasePostings, CachedList, Postings } from "./postings.ts";
import type { BaseUnits } from "./base-units.ts";
import type { AgentCard } from "./card.ts";
import { tokenize } from "./tokenize.ts";

const K1 = 1.2;
const B = 0.75;
const MAX_LIMIT = 50;
/** The share of the score a hit keeps whatever its coverage; the rest grows with the terms it matches. */
export const COVERAGE_FLOOR = 0.5;

/**
 * Coverage counts: the idf-weighted share is scaled by how many of the query's distinct terms the
 * skill matches, from COVERAGE_FLOOR (none… one of many) to 1 (all). Scripts take the first result,
 * and a skill answering two of three words is usually the one meant over a skill sharing only the
 * rarest word. A hit matching fewer terms still wins when its share is higher by more than the ratio
 * of the factors — ×1.25 for one term against two of three — that is, when its term is far more specific.
 */
export function coverageScore(share: number, matched: number, terms: number): number {
  return share * (COVERAGE_FLOOR + ((1 - COVERAGE_FLOOR) * matched) / Math.max(1, terms));
}

/** An agent's place in a ranking: `skill` is the position in card.skills, -1 for a skill-less card. */
export interface RankedAgent { name: string; score: number; skill: number }
export interface Ranking { hits: RankedAgent[]; total: number }

export { IndexFormatError } from "./base-units.ts";
export type { BaseUnits } from "./base-units.ts";

export type { BaseList, BasePostings, Postings } from "./postings.ts";

export class TermIndex {
  // Per unit id. agent -1: a dead unit (its card replaced or removed).
  private unitAgent: Int32Array = new Int32Array(1024);
  /** Position in card.skills (ties between an agent's skills go to the first), -1 for a skill-less agent. */
  private unitSkill: Int16Array = new Int16Array(1024);
  /** Field-weighted token count: BM25's document length. */
  private unitLength: Float64Array = new Float64Array(1024);
  /** Score accumulator, all zeros between searches. */
  private scratch = new Float64Array(1024);
  /** Query terms each unit matched, all zeros between searches. */
  private matched = new Uint16Array(1024);
  /** Units a search touched, in order (a typed array: ~30% faster than pushing to a JS array at 100,000 cards). */
  private touchedIds = new Int32Array(1024);
  private nextUnit = 0;
  private liveUnits = 0;
  private totalLength = 0;

  // Per agent ordinal; a removed agent keeps its ordinal with no units (a re-publish takes it again).
  private names: string[] = [];
  private readonly ordinals = new Map<string, number>();
  private agentFirst: Int32Array = new Int32Array(256);
  private agentUnits: Int32Array = new Int32Array(256);
  // Search scratch: valid while agentMark is the current search.
  private agentMark = new Float64Array(256);
  private agentScore = new Float64Array(256);
  private agentSkill = new Int32Array(256);
  private liveAgents = 0;
  private searches = 0;

  // Units from baseUnits on have their postings here (all units, without a base).
  private baseUnits = 0;
  private readonly recent = new MemoryPostings();
  // Units below baseUnits: postings from `base`, decoded lists cached by term.
  private base: BasePostings | null = null;
  private readonly cache: PostingsCache;
  /** Base units killed so far: a cached list recounts its live entries when this moved. */
  private deaths = 0;
  private readonly killedBase = new Set<number>();

  constructor(options: { cacheBytes?: number | undefined } = {}) {
    this.cache = new PostingsCache(options.cacheBytes);
  }

  /** Agents indexed. */
  get size(): number {
    return this.liveAgents;
  }

  /** Live units, and all ids handed out (dead ones included): the id space the arrays span. */
  get unitCounts(): { live: number; ids: number; base: number } {
    return { live: this.liveUnits, ids: this.nextUnit, base: this.baseUnits };
  }

  /**
   * Starts an empty index from persisted units whose postings `base` holds; takes the arrays over. Throws
   * IndexFormatError when they do not hold together (base-units.ts agentRanges, or a name stored twice).
   */
  loadBase(base: BasePostings, units: BaseUnits): void {
    if (this.nextUnit !== 0 || this.names.length !== 0) throw new Error("TermIndex.loadBase: the index is not empty");
    const { first, count } = agentRanges(units);
    units.names.forEach((name, agent) => this.ordinals.set(name, agent));
    if (this.ordinals.size !== units.names.length) throw new IndexFormatError("an agent name is stored twice");
    this.base = base;
    this.names = units.names;
    [this.agentFirst, this.agentUnits] = [first, count];
    this.growAgents(Math.max(256, first.length), true);
    for (const n of count) if (n > 0) this.liveAgents++;
    const { agent, skill, length } = units;
    if (agent.length !== units.count || skill.length !== units.count || length.length !== units.count) throw new Error("TermIndex.loadBase: arrays of another length");
    [this.unitAgent, this.unitSkill, this.unitLength] = [agent, skill, length];
    this.growUnits(Math.max(1024, units.count), true);
    for (let id = 0; id < units.count; id++) {
      if (agent[id]! < 0) continue;
      this.liveUnits++;
      this.totalLength += length[id]!;
    }
    this.nextUnit = this.baseUnits = units.count;
  }

  /**
   * Adds `card`, or replaces the card of the same name (its old units die, the new ones get new ids).
   * The card itself is not kept.
   */
  upsert(card: AgentCard): void {
    const units = cardUnits(card);
    let agent = this.ordinals.get(card.name);
    if (agent === undefined) {
      agent = this.names.length;
      this.growAgents(agent + 1);
      this.names.push(card.name);
      this.ordinals.set(card.name, agent);
    } else {
      this.kill(agent);
    }
    this.growUnits(this.nextUnit + units.length);
    this.agentFirst[agent] = this.nextUnit;
    this.agentUnits[agent] = units.length;
    this.liveAgents++;
    for (const { skill, length, tfs } of units) {
      const id = this.nextUnit++;
      this.unitAgent[id] = agent;
      this.unitSkill[id] = skill;
      this.unitLength[id] = length;
      this.recent.add(id, tfs);
      this.liveUnits++;
      this.totalLength += length;
    }
  }

  /** Removes the card named `name`; false when there was none. */
  remove(name: string): boolean {
    const agent = this.ordinals.get(name);
    if (agent === undefined || this.agentUnits[agent] === 0) return false;
    this.kill(agent);
    return true;
  }

  private kill(agent: number): void {
    const first = this.agentFirst[agent]!;
    const count = this.agentUnits[agent]!;
    if (count === 0) return;
    for (let id = first; id < first + count; id++) {
      this.unitAgent[id] = -1;
      this.liveUnits--;
      this.totalLength -= this.unitLength[id]!;
      if (id < this.baseUnits) {
        this.killedBase.add(id);
        this.deaths++;
      } else {
        this.recent.remove(id);
      }
    }
    this.agentUnits[agent] = 0;
    this.liveAgents--;
  }

  /**
   * Agents matching `query`, best first (score, then name, so ties are stable), at most `limit`, and
   * how many matched in all. The score is the idf-weighted share of the query the agent's best unit
   * covers, times the coverage factor, in [0, 1): each query term contributes idf·sat, sat being BM25's
   * saturated term frequency scaled into [0, 1), and the sum is divided by the total idf of the query.
   * So 0.9 means "nearly every term, strongly" — comparable across queries, unlike a raw BM25 sum.
   */
  rank(query: string, limit: number): Ranking {
    const max = Math.min(MAX_LIMIT, Math.max(1, Math.trunc(limit) || 1));
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0 || this.liveUnits === 0) return { hits: [], total: 0 };
    // Every list first: reading a persisted one may throw, and must not leave the scratch half-filled.
    const baseLists = terms.map((term) => this.baseList(term));
    const n = this.liveUnits;
    const avgLength = this.totalLength / n || 1;
    const { scratch: acc, matched, unitLength, unitAgent, touchedIds: touched } = this;
    let touchedCount = 0;
    let idfSum = 0;
    terms.forEach((term, t) => {
      const base = baseLists[t];
      const list = this.recent.get(term);
      // BM25's idf, kept positive; a term no card contains gets the highest idf (df = 0), so it still
      // weighs in the denominator: a query with a word nobody offers cannot score 1.
      const df = (base?.live ?? 0) + (list?.ids.length ?? 0);
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      idfSum += idf;
      if (base && base.live > 0) {
        const { bases, ends, offsets, tfs } = base;
        for (let s = 0, i = 0; s < bases.length; s++) {
          const at = bases[s]!;
          for (const end = ends[s]!; i < end; i++) {
            const id = at + offsets[i]!;
            if (unitAgent[id]! < 0) continue;
            const tf = tfs[i]!;
            const k = K1 * (1 - B + (B * unitLength[id]!) / avgLength);
            if (acc[id] === 0) touched[touchedCount++] = id;
            acc[id]! += (idf * tf) / (tf + k);
            matched[id]!++;
          }
        }
      }
      if (!list) return;
      const { ids, tfs } = list;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        const tf = tfs[i]!;
        const k = K1 * (1 - B + (B * unitLength[id]!) / avgLength);
        // tf(k1+1)/(tf+K) divided by its limit (k1+1): saturation in [0, 1).
        if (acc[id] === 0) touched[touchedCount++] = id;
        acc[id]! += (idf * tf) / (tf + k);
        matched[id]!++;
      }
    });
    // An agent scores as its best unit.
    const mark = ++this.searches;
    const { agentMark, agentScore, agentSkill } = this;
    const hits: number[] = [];
    for (let t = 0; t < touchedCount; t++) {
      const id = touched[t]!;
      const score = coverageScore(acc[id]! / idfSum, matched[id]!, terms.length);
      acc[id] = 0;
      matched[id] = 0;
      const agent = unitAgent[id]!;
      const skill = this.unitSkill[id]!;
      if (agentMark[agent] !== mark) {
        agentMark[agent] = mark;
        hits.push(agent);
      } else if (score < agentScore[agent]! || (score === agentScore[agent] && skill > agentSkill[agent]!)) {
        continue;
      }
      agentScore[agent] = score;
      agentSkill[agent] = skill;
    }
    const top = this.topHits(hits, max).map((agent) => ({ name: this.names[agent]!, score: agentScore[agent]!, skill: agentSkill[agent]! }));
    return { hits: top, total: hits.filter((agent) => agentScore[agent]! > 0).length };
  }

  /**
   * The `max` best agents, sorted. A bounded insertion list instead of sorting every hit: a common
   * word can match thousands of agents, and only ≤ 50 are returned.
   */
  private topHits(candidates: readonly number[], max: number): number[] {
    const { agentScore: score, names } = this;
    const before = (a: number, b: number) => score[a]! > score[b]! || (score[a] === score[b] && names[a]! < names[b]!);
    const top: number[] = [];
    for (const candidate of candidates) {
      if (score[candidate]! <= 0) continue;
      if (top.length === max && !before(candidate, top[max - 1]!)) continue;
      let i = top.length;
      while (i > 0 && before(candidate, top[i - 1]!)) i--;
      top.splice(i, 0, candidate);
      if (top.length > max) top.pop();
    }
    return top;
  }

  /** The persisted postings of `term`, with the number of live units among them. */
  private baseList(term: string): CachedList | undefined {
    if (!this.base || this.baseUnits === 0) return undefined;
    return this.cache.get(term, this.base, this.unitAgent, this.deaths);
  }

  // What index-store.ts persists, and its acknowledgement.

  /** Unit arrays (views, valid until the next change) and agent names by ordinal. */
  units(): BaseUnits {
    const count = this.nextUnit;
    return { count, agent: this.unitAgent.subarray(0, count), skill: this.unitSkill.subarray(0, count), length: this.unitLength.subarray(0, count), names: this.names };
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
    this.base = base;
    this.baseUnits = this.nextUnit;
    this.recent.clear();
    this.killedBase.clear();
    this.cache.clear();
  }

  /** Rough bytes held: the arrays, names, recent postings and the cache (V8 overheads estimated). */
  memoryBytes(): number {
    const arrays = [this.unitAgent, this.unitSkill, this.unitLength, this.scratch, this.matched, this.touchedIds, this.agentFirst, this.agentUnits, this.agentMark, this.agentScore, this.agentSkill];
    let bytes = arrays.reduce((sum, array) => sum + array.byteLength, 0);
    for (const name of this.names) bytes += 2 * name.length + 64;
    return bytes + this.recent.memoryBytes() + this.cache.use.bytes;
  }

  /** Cached persisted postings: terms and bytes. */
  get cacheUse(): { terms: number; bytes: number } {
    return this.cache.use;
  }

  /** Room for `needed` units (`scratch`: the scratch arrays too, whatever the size). */
  private growUnits(needed: number, scratch = false): void {
    if (needed > this.unitAgent.length) {
      const size = capacity(this.unitAgent.length, needed);
      [this.unitAgent, this.unitSkill, this.unitLength] = [grown(this.unitAgent, size), grown(this.unitSkill, size), grown(this.unitLength, size)];
    } else if (!scratch) {
      return;
    }
    // Scratch starts afresh: no search is under way.
    const size = this.unitAgent.length;
    [this.scratch, this.matched, this.touchedIds] = [new Float64Array(size), new Uint16Array(size), new Int32Array(size)];
  }

  private growAgents(needed: number, scratch = false): void {
    if (needed > this.agentFirst.length) {
      const size = capacity(this.agentFirst.length, needed);
      [this.agentFirst, this.agentUnits] = [grown(this.agentFirst, size), grown(this.agentUnits, size)];
    } else if (!scratch) {
      return;
    }
    const size = this.agentFirst.length;
    [this.agentMark, this.agentScore, this.agentSkill] = [new Float64Array(size), new Float64Array(size), new Int32Array(size)];
  }
}

const capacity = (size: number, needed: number): number => (size >= needed ? size : capacity(Math.max(1, 2 * size), needed));

function grown<T extends Int32Array | Int16Array | Float64Array>(old: T, size: number): T {
  const array = new (old.constructor as new (length: number) => T)(size);
  array.set(old);
  return array;
}
