// The hybrid rule: how a search's lexical hits and its closest skills by meaning make one ranking. Pure;
// every constant of the mix is here. Imported by the Directory object (directory.ts); covered by
// test/worker/directory/hybrid-rank.test.ts.
//
// A skill found only by meaning is an answer when its cosine reaches the model's floor (embedding-models.ts):
// below it, an off-topic query would be answered. A skill the words already found is re-ranked by meaning
// from a lower base (floor − HYBRID.rerankBelowFloor): a lexical hit is evidence of its own, so a weaker
// semantic agreement may still order it, and a hit the off-topic guard set aside counts when meaning
// names the same agent. Measured with `npm run eval:search` on the dev set and the local model (floor
// 0.596): 85.7 % top-1 with every off-topic query empty; 83.3 % without that agreement (docs/directory.md).
import type { AgentCard } from "../card.ts";
import type { SearchHit, SearchResult } from "../search-index.ts";

export const HYBRID = {
  /**
   * How far meaning lifts a score: an agent the words found scores lexical + (1 − lexical)·w·semantic,
   * so turning the model on never lowers a word match's score; one found by meaning alone scores
   * w·semantic (at most w), so a query's own words keep their weight against it.
   */
  semanticWeight: 0.4,
  /** Semantic scores count from this far below the floor (re-ranking lexical hits only). */
  rerankBelowFloor: 0.1,
  /** Lexical hits taken into the mix before the final limit (the route's largest limit). */
  lexicalPool: 50,
} as const;

/** An agent's closest skill to the query: its cosine, and the skill's index in card.skills (−1 for a skill-less card). */
export interface Closest { cos: number; skill: number }

/** The cosine from which a skill counts at all in the mix. */
export function rerankBase(floor: number): number {
  return floor - HYBRID.rerankBelowFloor;
}

/** A cosine as a 0..1 semantic score: 0 at the re-rank base, 1 at identical meaning. */
export function semanticScore(cos: number, floor: number): number {
  const base = rerankBase(floor);
  return Math.min(1, Math.max(0, (cos - base) / (1 - base)));
}

/**
 * The guard's weak hits (an agent found only through common or respelled words) that meaning agrees with:
 * the agent is also the closest by meaning of all, at or above the re-rank base. Two weak signals naming
 * the same agent make an answer ("my eyes itch every spring, is it bad outside today" finds the pollen
 * agent by "today" and by meaning); either alone does not ("knit a scarf pattern" shares "pattern" with a
 * regex agent, but the cosine stays under the base).
 */
export function agreeingWeakHits(lexical: SearchResult, closest: ReadonlyMap<string, Closest>, floor: number): SearchHit[] {
  let nearest: { name: string; cos: number } | null = null;
  for (const [name, { cos }] of closest) if (!nearest || cos > nearest.cos) nearest = { name, cos };
  if (!nearest || nearest.cos < rerankBase(floor)) return [];
  return (lexical.weak ?? []).filter((hit) => hit.card.name === nearest.name);
}

/**
 * One ranking from the lexical pool and the agents' closest skills (only those at or above the re-rank
 * base need be given). An agent the words found (or a weak hit meaning agrees with) scores
 * lexical + (1 − lexical)·semanticWeight·semantic
 * and keeps its lexical best_skill_id; any other agent enters only at cos ≥ floor, scores
 * semanticWeight·semantic, and its best_skill_id is the closest skill. Scores stay in 0..1; ties go by
 * name. `cardsOf` reads the cards of the agents found only by meaning that make the page (one whose card
 * is gone is left out). `total`: agents matched either way, plus lexical matches beyond the pool.
 */
export function combineHybrid(
  lexical: SearchResult,
  closest: ReadonlyMap<string, Closest>,
  floor: number,
  limit: number,
  cardsOf: (names: string[]) => ReadonlyMap<string, AgentCard>,
): SearchResult {
  const { semanticWeight } = HYBRID;
  const ranked: { name: string; score: number; hit?: SearchHit; skill: number }[] = [...lexical.hits, ...agreeingWeakHits(lexical, closest, floor)].map((hit) => {
    const near = closest.get(hit.card.name);
    const sem = near ? semanticScore(near.cos, floor) : 0;
    const score = hit.score + (1 - hit.score) * semanticWeight * sem;
    return { name: hit.card.name, score, hit, skill: -1 };
  });
  const found = new Set(ranked.map((entry) => entry.name));
  for (const [name, near] of closest) {
    if (!found.has(name) && near.cos >= floor) ranked.push({ name, score: semanticWeight * semanticScore(near.cos, floor), skill: near.skill });
  }
  const matched = ranked.filter((entry) => entry.score > 0).sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const page = matched.slice(0, Math.min(50, Math.max(1, limit)));
  const unread = page.filter((entry) => !entry.hit).map((entry) => entry.name);
  const cards = unread.length > 0 ? cardsOf(unread) : new Map<string, AgentCard>();
  const hits = page.flatMap((entry): SearchHit[] => {
    if (entry.hit) return [{ ...entry.hit, score: entry.score }];
    const card = cards.get(entry.name);
    return card ? [{ card, score: entry.score, best_skill_id: card.skills[entry.skill]?.id ?? null }] : [];
  });
  const beyondPool = Math.max(0, lexical.total - lexical.hits.length);
  return { hits, total: matched.length + beyondPool };
}
