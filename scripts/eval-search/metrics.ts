// The evaluator's figures, as pure functions of what the relay answered: top-1 (the right agent first),
// skill top-1 (and its best_skill_id right), MRR@10, and how many negatives came back empty. Used by
// scripts/eval-search/; covered by test/node/eval-search-metrics.test.ts.
import type { SearchQuery } from "./search-set.ts";

/** Only the first this many hits count for the reciprocal rank (the queries ask for this many). */
export const MRR_DEPTH = 10;

/** One agent of a `POST /directory/search` answer, as far as the figures need it. */
export interface SearchHit {
  name: string;
  best_skill_id: string | null;
  score: number;
}

export interface QueryOutcome {
  query: SearchQuery;
  hits: SearchHit[];
}

export interface NegativeOutcome {
  q: string;
  hits: SearchHit[];
}

export interface Figures {
  /** Share of queries whose first hit is the expected agent (0..1). */
  top1: number;
  /** Share whose first hit is the expected agent with the expected best_skill_id (0..1). */
  skill: number;
  /** Mean of 1/rank of the expected agent within the first MRR_DEPTH hits, 0 where absent (0..1). */
  mrr: number;
  /** Negatives that came back with no agent (a count). */
  negatives_empty: number;
  /** Negatives asked (a count). */
  negatives: number;
}

/** The expected agent's 1-based rank within the first MRR_DEPTH hits, or null. */
export function rankOf(hits: readonly SearchHit[], agent: string): number | null {
  const index = hits.slice(0, MRR_DEPTH).findIndex((hit) => hit.name === agent);
  return index < 0 ? null : index + 1;
}

export const isTop1 = (outcome: QueryOutcome): boolean => outcome.hits[0]?.name === outcome.query.agent;
export const isSkillTop1 = (outcome: QueryOutcome): boolean => isTop1(outcome) && outcome.hits[0]?.best_skill_id === outcome.query.skill;

export function figuresOf(queries: readonly QueryOutcome[], negatives: readonly NegativeOutcome[]): Figures {
  const share = (count: number) => (queries.length === 0 ? 0 : count / queries.length);
  const reciprocal = queries.reduce((sum, outcome) => {
    const rank = rankOf(outcome.hits, outcome.query.agent);
    return sum + (rank === null ? 0 : 1 / rank);
  }, 0);
  return {
    top1: share(queries.filter(isTop1).length),
    skill: share(queries.filter(isSkillTop1).length),
    mrr: share(reciprocal),
    negatives_empty: negatives.filter((outcome) => outcome.hits.length === 0).length,
    negatives: negatives.length,
  };
}
