// The typo fallback of the directory's search: which query terms may be respelled, and into which
// index term. Imported by term-index.ts, which asks only when a query found nothing; platform-free.
// Covered by test/worker/directory/ranking-typos.test.ts.
//
// Guarded on both sides, because a respelling that is wrong makes an off-topic query match: only a
// term no card contains, of Latin letters, at least MIN_LETTERS long and not a common word
// (common-words.ts: "leaking" must not become "leases"), and only into a term that is not a common
// word either. The search then counts a respelled term as weak (search-scratch.ts), like a common word.
import { isCommonTerm } from "./common-words.ts";

/** Shorter terms have too many neighbours at one edit ("cat": bat, car, cut…). */
export const MIN_LETTERS = 4;
/**
 * Terms up to this length may differ by one edit, longer ones by two. Two edits from a six- or
 * seven-letter word reach unrelated words ("record" → "report"), and most typos are one edit anyway.
 */
export const ONE_EDIT_UP_TO = 7;

/**
 * Words of one query respelled at most (the first ones that may be): each is a pass over every index
 * term, ~80 ms at 200,000 terms, and a 500-character query of unknown words would hold the one Directory
 * object for seconds. A query with more typos than this is rare.
 */
export const MAX_RESPELLED = 4;

const LATIN = /^\p{Script=Latin}+$/u;

/** The edits a query term may be respelled by: 0 when it must be left as it is. */
export function typoBudget(term: string): number {
  const letters = [...term].length;
  if (letters < MIN_LETTERS || !LATIN.test(term) || isCommonTerm(term)) return 0;
  return letters <= ONE_EDIT_UP_TO ? 1 : 2;
}

/**
 * Optimal string alignment distance (insertions, deletions, substitutions and swaps of neighbours, each
 * one edit: "forcast", "wether" and "teh" are one edit off), or max + 1 once it is certainly above max.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > max) return max + 1;
    [before, previous] = [previous, row];
  }
  return Math.min(previous[b.length]!, max + 1);
}

/**
 * The index term `term` is most likely a typo of: the fewest edits within its budget, then the most
 * units containing it (`df`, 0 for a term no live card holds any more), then alphabetical, so every index
 * holding the same cards answers alike. Null when there is none.
 */
export function respelling(term: string, vocabulary: Iterable<string>, df: (candidate: string) => number): string | null {
  const budget = typoBudget(term);
  if (budget === 0) return null;
  const byDistance: string[][] = Array.from({ length: budget + 1 }, () => []);
  for (const candidate of vocabulary) {
    if (Math.abs(candidate.length - term.length) > budget || isCommonTerm(candidate) || !LATIN.test(candidate)) continue;
    const distance = editDistance(term, candidate, budget);
    if (distance <= budget && distance > 0) byDistance[distance]!.push(candidate);
  }
  for (const candidates of byDistance) {
    let best: string | null = null;
    let bestDf = 0;
    for (const candidate of candidates) {
      const count = df(candidate);
      if (count > bestDf || (count === bestDf && count > 0 && best !== null && candidate < best)) [best, bestDf] = [candidate, count];
    }
    if (best !== null) return best;
  }
  return null;
}
