// One TermIndex search (term-index.ts rank): the query's postings summed BM25-style per unit, each agent
// scored as its best unit, the best agents kept; and the scratch arrays that makes do with, reused
// between searches. Platform-free; covered by test/worker/directory/ranking.test.ts and persisted-index.test.ts.
import { B, K1, coverageScore, idfOf } from "./bm25-score.ts";
import type { CachedList, Postings } from "./postings.ts";
import type { UnitTable } from "./unit-table.ts";

/** An agent's place in a ranking: `skill` is the position in card.skills, -1 for a skill-less card. */
export interface RankedAgent { name: string; score: number; skill: number }
/**
 * `weak`: agents found only through the off-topic guard's weak terms (see rank), best first, kept only
 * when asked for: hybrid search lets meaning decide whether such a hit is an answer (embeddings/hybrid-rank.ts).
 */
export interface Ranking { hits: RankedAgent[]; total: number; weak: RankedAgent[] }

/**
 * One query term's postings: the persisted ones (with their live count) and the recent ones. `weak`: a
 * common word or a typo's respelling, which alone does not make a unit an answer (see rank).
 */
export interface TermLists { base: CachedList | undefined; recent: Postings | undefined; weak: boolean }

export class SearchScratch {
  // Per unit id, as long as the table's arrays.
  /** Score accumulator, all zeros between searches. */
  private scratch = new Float64Array(1024);
  /** Query terms each unit matched, all zeros between searches. */
  private matched = new Uint16Array(1024);
  /** Query terms each unit matched that are not weak, all zeros between searches. */
  private strong = new Uint16Array(1024);
  /** Units a search touched, in order (a typed array: ~30% faster than pushing to a JS array at 100,000 cards). */
  private touchedIds = new Int32Array(1024);
  // Per agent ordinal: valid while agentMark is the current search.
  private agentMark = new Float64Array(256);
  private agentScore = new Float64Array(256);
  private agentSkill = new Int32Array(256);
  private searches = 0;

  /** As long as `table`'s arrays again after they grew (or were taken over). */
  fit(table: UnitTable): void {
    // Scratch starts afresh: no search is under way.
    const units = table.unitAgent.length;
    if (this.scratch.length !== units) [this.scratch, this.matched, this.strong, this.touchedIds] = [new Float64Array(units), new Uint16Array(units), new Uint16Array(units), new Int32Array(units)];
    const agents = table.agentFirst.length;
    if (this.agentMark.length !== agents) [this.agentMark, this.agentScore, this.agentSkill] = [new Float64Array(agents), new Float64Array(agents), new Int32Array(agents)];
  }

  get byteLength(): number {
    return [this.scratch, this.matched, this.strong, this.touchedIds, this.agentMark, this.agentScore, this.agentSkill].reduce((sum, array) => sum + array.byteLength, 0);
  }

  /**
   * The `max` best agents for a query of `lists` (one per distinct term), over `table`'s live units (some).
   * The off-topic guard: a unit that matched only weak terms is a hit only when it matched at least half
   * of the query's terms. "weather in Paris" (weather, 1 of 2) stays; "book a table for two at a sushi
   * place" (table, 1 of 5) shares a common word with a tide table and is not a question for it.
   */
  rank(table: UnitTable, lists: readonly TermLists[], max: number, keepWeak = false): Ranking {
    const n = table.liveUnits;
    const avgLength = table.totalLength / n || 1;
    const { unitLength, unitAgent } = table;
    const { scratch: acc, matched, strong, touchedIds: touched } = this;
    let touchedCount = 0;
    let idfSum = 0;
    for (const { base, recent: list, weak } of lists) {
      const strength = weak ? 0 : 1;
      const df = (base?.live ?? 0) + (list?.ids.length ?? 0);
      const idf = idfOf(n, df);
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
            strong[id]! += strength;
          }
        }
      }
      if (!list) continue;
      const { ids, tfs } = list;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        const tf = tfs[i]!;
        const k = K1 * (1 - B + (B * unitLength[id]!) / avgLength);
        // tf(k1+1)/(tf+K) divided by its limit (k1+1): saturation in [0, 1).
        if (acc[id] === 0) touched[touchedCount++] = id;
        acc[id]! += (idf * tf) / (tf + k);
        matched[id]!++;
        strong[id]! += strength;
      }
    }
    // An agent scores as its best unit.
    const mark = ++this.searches;
    const { agentMark, agentScore, agentSkill } = this;
    const hits: number[] = [];
    const weak = new Map<number, RankedAgent>();
    for (let t = 0; t < touchedCount; t++) {
      const id = touched[t]!;
      const score = coverageScore(acc[id]! / idfSum, matched[id]!, lists.length);
      const offTopic = strong[id] === 0 && 2 * matched[id]! < lists.length;
      acc[id] = 0;
      matched[id] = 0;
      strong[id] = 0;
      const agent = unitAgent[id]!;
      const skill = table.unitSkill[id]!;
      if (offTopic) {
        if (keepWeak && score > (weak.get(agent)?.score ?? 0)) weak.set(agent, { name: table.names[agent]!, score, skill });
        continue;
      }
      if (agentMark[agent] !== mark) {
        agentMark[agent] = mark;
        hits.push(agent);
      } else if (score < agentScore[agent]! || (score === agentScore[agent] && skill > agentSkill[agent]!)) {
        continue;
      }
      agentScore[agent] = score;
      agentSkill[agent] = skill;
    }
    const top = this.topHits(hits, max, table.names).map((agent) => ({ name: table.names[agent]!, score: agentScore[agent]!, skill: agentSkill[agent]! }));
    const weakOnly = [...weak].filter(([agent]) => agentMark[agent] !== mark).map(([, hit]) => hit);
    weakOnly.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { hits: top, total: hits.filter((agent) => agentScore[agent]! > 0).length, weak: weakOnly.slice(0, max) };
  }

  /**
   * The `max` best agents, sorted. A bounded insertion list instead of sorting every hit: a common
   * word can match thousands of agents, and only ≤ 50 are returned.
   */
  private topHits(candidates: readonly number[], max: number, names: readonly string[]): number[] {
    const { agentScore: score } = this;
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
}
