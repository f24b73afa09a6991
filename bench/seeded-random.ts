// A seeded pseudo-random generator for the synthetic directories of bench/search-bench.ts and
// bench/directory-cards.ts: a fixed seed gives the same cards and queries on every run.

/** mulberry32: uniform numbers in [0, 1). */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
