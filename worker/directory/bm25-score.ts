// The score's constants and pure formulas: BM25's idf and length normalisation, and the coverage factor.
// Imported by search-scratch.ts (which scores) and search-index.ts (for tests); platform-free. Covered
// by test/worker/directory/ranking.test.ts.

export const K1 = 1.2;
export const B = 0.75;
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
 * BM25's idf of a term in `df` of `n` live units, kept positive; a term no card contains gets the
 * highest idf (df = 0), so it still weighs in the denominator: a query with a word nobody offers cannot score 1.
 */
export function idfOf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}
