// The directory's in-memory search: agent cards in an inverted index, ranked BM25-style. Imported by
// worker/directory/directory.ts (which rebuilds it from SQLite at start-up) and bench/search-bench.ts;
// platform-free. Covered by test/worker/directory/ranking.test.ts.
//
// The unit of ranking is a skill, because a search answers "which agent, and which of its skills"
// (best_skill_id, as the local API answers). A skill's text is its own fields plus its agent's name and
// description, weighted so the skill's name and tags count most.
import { tokenize } from "./tokenize.ts";

export interface SkillCard { id: string; name: string; description: string; tags: string[]; examples: string[] }
export interface AgentCard { name: string; agent_id: string; description: string; skills: SkillCard[] }
export interface SearchHit { card: AgentCard; score: number; best_skill_id: string | null }
/** The best hits, and how many agents matched in all (before the limit). */
export interface SearchResult { hits: SearchHit[]; total: number }

const K1 = 1.2;
const B = 0.75;
const MAX_LIMIT = 50;
const WEIGHT = { skillName: 3, tags: 2, skillDescription: 1, examples: 1, agentDescription: 0.5, agentName: 1 };
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

/**
 * The units containing one term, with the term's field-weighted frequency in each. Parallel arrays
 * rather than a Map: with the flat per-unit arrays below, they took bench/search-bench.ts's median
 * search from ~2 ms to ~0.2 ms.
 */
interface Postings { ids: number[]; tfs: number[] }

/** An indexed card. `mark`, `score` and `skill` are search scratch, valid while mark is the current search. */
interface Entry { card: AgentCard; units: { id: number; terms: string[] }[]; mark: number; score: number; skill: number }

/** A field's terms and its weight. */
type Field = [terms: string[], weight: number];

export class SearchIndex {
  private readonly entries = new Map<string, Entry>();
  /** term → units containing it; document frequency is ids.length. */
  private readonly postings = new Map<string, Postings>();
  // Per unit id, struct-of-arrays so the scoring loop reads flat memory. A unit is a skill, or the
  // whole card of a skill-less agent.
  private unitEntry: (Entry | undefined)[] = [];
  /** Position in card.skills (ties between an agent's skills go to the first), -1 for a skill-less agent. */
  private unitSkill = new Int32Array(1024);
  /** Field-weighted token count: BM25's document length. */
  private unitLength = new Float64Array(1024);
  /** Score accumulator, all zeros between searches. */
  private scratch = new Float64Array(1024);
  /** Query terms each unit matched, all zeros between searches. */
  private matched = new Uint16Array(1024);
  /** Ids of removed units, reused so the arrays stay as large as the live index. */
  private readonly freeIds: number[] = [];
  private unitCount = 0;
  private totalLength = 0;
  private searches = 0;

  /** Number of agents indexed. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Adds `card`, or replaces the card of the same name (its old skills stop matching). The card is
   * kept by reference and returned in hits: replace it with another upsert, never mutate it.
   */
  upsert(card: AgentCard): void {
    this.remove(card.name);
    const entry: Entry = { card, units: [], mark: 0, score: 0, skill: 0 };
    this.entries.set(card.name, entry);
    // The agent's name and description are in every one of its units: tokenised once per card.
    const name = tokenize(card.name);
    const description = tokenize(card.description);
    if (card.skills.length === 0) {
      // A skill-less agent's description is all it offers; weighting it as a skill's keeps it findable.
      this.addUnit(entry, -1, [[name, WEIGHT.agentName], [description, WEIGHT.skillDescription]]);
    }
    card.skills.forEach((skill, i) => {
      this.addUnit(entry, i, [
        [name, WEIGHT.agentName],
        [description, WEIGHT.agentDescription],
        [tokenize(skill.name), WEIGHT.skillName],
        [tokenize(skill.description), WEIGHT.skillDescription],
        // Cards come through parseCard, but stored JSON from older versions may lack the optional lists.
        ...(skill.tags ?? []).map((tag): Field => [tokenize(tag), WEIGHT.tags]),
        ...(skill.examples ?? []).map((example): Field => [tokenize(example), WEIGHT.examples]),
      ]);
    });
  }

  /** Removes the card named `name`; false when there was none. */
  remove(name: string): boolean {
    const entry = this.entries.get(name);
    if (!entry) return false;
    for (const { id, terms } of entry.units) {
      for (const term of terms) {
        // Swap-remove: order within a postings list does not affect scores. indexOf over a few
        // thousand numbers costs microseconds, and cards change far less often than they are searched.
        const list = this.postings.get(term)!;
        const at = list.ids.indexOf(id);
        const lastId = list.ids.pop()!;
        const lastTf = list.tfs.pop()!;
        if (at < list.ids.length) {
          list.ids[at] = lastId;
          list.tfs[at] = lastTf;
        }
        if (list.ids.length === 0) this.postings.delete(term);
      }
      this.totalLength -= this.unitLength[id]!;
      this.unitCount--;
      this.unitEntry[id] = undefined;
      this.freeIds.push(id);
    }
    this.entries.delete(name);
    return true;
  }

  /**
   * Agents matching `query`, best first (score, then name, so ties are stable), at most `limit`.
   * The score is the idf-weighted share of the query the agent's best skill covers, in [0, 1): each
   * query term contributes idf·sat, sat being BM25's saturated term frequency scaled into [0, 1), and
   * the sum is divided by the total idf of the query. So 0.9 means "nearly every term, strongly",
   * 0.45 "about half the query's weight" — comparable across queries, unlike a raw BM25 sum.
   */
  search(query: string, limit: number): SearchHit[] {
    return this.find(query, limit).hits;
  }

  /** `search`, with the number of agents that matched at all (`total`, before `limit`). */
  find(query: string, limit: number): SearchResult {
    const max = Math.min(MAX_LIMIT, Math.max(1, Math.trunc(limit) || 1));
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0 || this.unitCount === 0) return { hits: [], total: 0 };
    const n = this.unitCount;
    const avgLength = this.totalLength / n || 1;
    const { scratch: acc, matched, unitLength } = this;
    const touched: number[] = [];
    let idfSum = 0;
    for (const term of terms) {
      const list = this.postings.get(term);
      // BM25's idf, kept positive; a term no card contains gets the highest idf (df = 0), so it still
      // weighs in the denominator: a query with a word nobody offers cannot score 1.
      const df = list?.ids.length ?? 0;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      idfSum += idf;
      if (!list) continue;
      const { ids, tfs } = list;
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        const tf = tfs[i]!;
        const k = K1 * (1 - B + (B * unitLength[id]!) / avgLength);
        // tf(k1+1)/(tf+K) divided by its limit (k1+1): saturation in [0, 1).
        if (acc[id] === 0) touched.push(id);
        acc[id]! += (idf * tf) / (tf + k);
        matched[id]!++;
      }
    }
    // An agent scores as its best unit.
    const mark = ++this.searches;
    const hits: Entry[] = [];
    for (const id of touched) {
      const score = coverageScore(acc[id]! / idfSum, matched[id]!, terms.length);
      acc[id] = 0;
      matched[id] = 0;
      const entry = this.unitEntry[id]!;
      const skill = this.unitSkill[id]!;
      if (entry.mark !== mark) {
        entry.mark = mark;
        hits.push(entry);
      } else if (score < entry.score || (score === entry.score && skill > entry.skill)) {
        continue;
      }
      entry.score = score;
      entry.skill = skill;
    }
    const top = topHits(hits, max).map(({ card, score, skill }) => ({
      card,
      score,
      best_skill_id: skill < 0 ? null : card.skills[skill]!.id,
    }));
    return { hits: top, total: hits.filter((entry) => entry.score > 0).length };
  }

  private addUnit(entry: Entry, skill: number, fields: readonly Field[]): void {
    const tf = new Map<string, number>();
    let length = 0;
    for (const [terms, weight] of fields) {
      for (const term of terms) {
        tf.set(term, (tf.get(term) ?? 0) + weight);
        length += weight;
      }
    }
    const id = this.freeIds.pop() ?? this.unitEntry.length;
    if (id >= this.unitLength.length) this.grow();
    this.unitEntry[id] = entry;
    this.unitSkill[id] = skill;
    this.unitLength[id] = length;
    for (const [term, weighted] of tf) {
      let list = this.postings.get(term);
      if (!list) this.postings.set(term, (list = { ids: [], tfs: [] }));
      list.ids.push(id);
      list.tfs.push(weighted);
    }
    entry.units.push({ id, terms: [...tf.keys()] });
    this.unitCount++;
    this.totalLength += length;
  }

  private grow(): void {
    const size = this.unitLength.length * 2;
    const skills = new Int32Array(size);
    const lengths = new Float64Array(size);
    skills.set(this.unitSkill);
    lengths.set(this.unitLength);
    [this.unitSkill, this.unitLength, this.scratch, this.matched] = [skills, lengths, new Float64Array(size), new Uint16Array(size)];
  }
}

const ranksBefore = (a: Entry, b: Entry): boolean =>
  a.score > b.score || (a.score === b.score && a.card.name < b.card.name);

/**
 * The `max` best of `candidates`, sorted. A bounded insertion list instead of sorting every hit: a
 * common word can match thousands of agents, and only ≤ 50 are returned.
 */
function topHits(candidates: readonly Entry[], max: number): Entry[] {
  const top: Entry[] = [];
  for (const candidate of candidates) {
    if (candidate.score <= 0) continue;
    if (top.length === max && !ranksBefore(candidate, top[max - 1]!)) continue;
    let i = top.length;
    while (i > 0 && ranksBefore(candidate, top[i - 1]!)) i--;
    top.splice(i, 0, candidate);
    if (top.length > max) top.pop();
  }
  return top;
}
