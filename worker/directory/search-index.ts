// The directory's search with every card in memory: the ranking core (term-index.ts) plus the cards
// its hits return. Imported by the directory bench (bench/directory-rounds.ts) as the in-Node reference, and by tests as
// the full rebuild the persisted index (index-store.ts, what the Directory object runs) must equal.
// Platform-free. Covered by test/worker/directory/ranking.test.ts.
//
// The unit of ranking is a skill, because a search answers "which agent, and which of its skills"
// (best_skill_id, as the local API answers).
import type { AgentCard } from "./card.ts";
import { TermIndex } from "./term-index.ts";
import type { RankedAgent } from "./search-scratch.ts";

export { COVERAGE_FLOOR, coverageScore } from "./bm25-score.ts";

export interface SearchHit { card: AgentCard; score: number; best_skill_id: string | null }
/**
 * The best hits, and how many agents matched in all (before the limit). `weak`, when asked for: agents
 * found only through common or respelled words (TermIndex.rank), which hybrid search may still admit.
 */
export interface SearchResult { hits: SearchHit[]; total: number; weak?: SearchHit[] }

/** Ids handed out beyond twice the live units (plus this) and the index renumbers, so churn cannot grow it. */
const SPARE_IDS = 4096;

export class SearchIndex {
  private terms = new TermIndex();
  private readonly cards = new Map<string, AgentCard>();

  /** Number of agents indexed. */
  get size(): number {
    return this.cards.size;
  }

  /**
   * Adds `card`, or replaces the card of the same name (its old skills stop matching). The card is
   * kept by reference and returned in hits: replace it with another upsert, never mutate it.
   */
  upsert(card: AgentCard): void {
    this.cards.set(card.name, card);
    this.terms.upsert(card);
    const { live, ids } = this.terms.unitCounts;
    if (ids > 2 * live + SPARE_IDS) {
      // Replaced cards leave dead ids behind; a fresh index over the same cards ranks identically.
      this.terms = new TermIndex();
      for (const kept of this.cards.values()) this.terms.upsert(kept);
    }
  }

  /** Removes the card named `name`; false when there was none. */
  remove(name: string): boolean {
    if (!this.cards.delete(name)) return false;
    this.terms.remove(name);
    return true;
  }

  /** Agents matching `query`, best first (score, then name), at most `limit`: see TermIndex.rank. */
  search(query: string, limit: number): SearchHit[] {
    return this.find(query, limit).hits;
  }

  /** `search`, with the number of agents that matched at all (`total`, before `limit`). */
  find(query: string, limit: number, keepWeak = false): SearchResult {
    const { hits, total, weak } = this.terms.rank(query, limit, keepWeak);
    const withCard = ({ name, score, skill }: RankedAgent): SearchHit => {
      const card = this.cards.get(name)!;
      return { card, score, best_skill_id: skill < 0 ? null : card.skills[skill]!.id };
    };
    return { hits: hits.map(withCard), total, ...(keepWeak ? { weak: weak.map(withCard) } : {}) };
  }
}
