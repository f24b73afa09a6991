// The hybrid rule (worker/directory/embeddings/hybrid-rank.ts) as a pure function: the semantic score from the
// re-rank base, semantic-only admission at the floor, the weights, best_skill_id, total and the limit.
import { describe, expect, it } from "vitest";
import type { AgentCard } from "../../../worker/directory/card.ts";
import { HYBRID, agreeingWeakHits, combineHybrid, rerankBase, semanticScore } from "../../../worker/directory/embeddings/hybrid-rank.ts";
import type { Closest } from "../../../worker/directory/embeddings/hybrid-rank.ts";
import type { SearchResult } from "../../../worker/directory/search-index.ts";

const FLOOR = 0.55;
const card = (name: string, skills: string[]): AgentCard => ({
  name,
  agent_id: "ag_000000000000",
  description: name,
  skills: skills.map((id) => ({ id, name: id, description: "", tags: [], examples: [] })),
});
const CARDS = new Map([card("alpha", ["a1", "a2"]), card("beta", ["b1", "b2"]), card("gamma", ["g1"]), card("plain", [])].map((c) => [c.name, c]));
const lexical = (...hits: [string, number, string][]): SearchResult => ({ hits: hits.map(([name, score, skill]) => ({ card: CARDS.get(name)!, score, best_skill_id: skill })), total: hits.length });
const closest = (...entries: [string, number, number][]) => new Map<string, Closest>(entries.map(([name, cos, skill]) => [name, { cos, skill }]));
const read: string[][] = [];
const cardsOf = (names: string[]) => {
  read.push(names);
  return new Map(names.flatMap((name) => (CARDS.has(name) ? [[name, CARDS.get(name)!] as const] : [])));
};

describe("the hybrid rule", () => {
  it("scores a cosine 0 at the re-rank base (floor − 0.10), 1 at 1, linearly between", () => {
    expect(rerankBase(FLOOR)).toBeCloseTo(0.45);
    expect(semanticScore(0.45, FLOOR)).toBe(0);
    expect(semanticScore(0.2, FLOOR)).toBe(0);
    expect(semanticScore(1, FLOOR)).toBe(1);
    expect(semanticScore(0.725, FLOOR)).toBeCloseTo(0.5);
  });

  it("admits an agent found only by meaning at the floor, not below it", () => {
    const { hits, total } = combineHybrid(lexical(), closest(["alpha", FLOOR, 1], ["beta", FLOOR - 0.01, 0]), FLOOR, 10, cardsOf);
    expect(hits.map((hit) => [hit.card.name, hit.best_skill_id])).toEqual([["alpha", "a2"]]);
    expect(hits[0]!.score).toBeCloseTo(HYBRID.semanticWeight * semanticScore(FLOOR, FLOOR));
    expect(total).toBe(1);
  });

  it("re-ranks a word match by meaning from below the floor, keeping its lexical best_skill_id", () => {
    const { hits } = combineHybrid(lexical(["beta", 0.5, "b1"], ["alpha", 0.5, "a1"]), closest(["beta", 0.5, 1]), FLOOR, 10, cardsOf);
    expect(hits.map((hit) => [hit.card.name, hit.best_skill_id])).toEqual([["beta", "b1"], ["alpha", "a1"]]);
    expect(hits[0]!.score).toBeCloseTo(0.5 + 0.5 * HYBRID.semanticWeight * semanticScore(0.5, FLOOR));
    // No semantic agreement leaves a word match its lexical score: the model never lowers it.
    expect(hits[1]!.score).toBeCloseTo(0.5);
  });

  it("ranks a strong word match above an agent found only by meaning, and keeps every score in 0..1", () => {
    const { hits } = combineHybrid(lexical(["gamma", 1, "g1"]), closest(["gamma", 1, 0], ["alpha", 1, 0], ["plain", 0.9, 0]), FLOOR, 10, cardsOf);
    expect(hits.map((hit) => hit.card.name)).toEqual(["gamma", "alpha", "plain"]);
    expect(hits[0]!.score).toBeCloseTo(1);
    // A skill-less card found by meaning has no best skill.
    expect(hits[2]!.best_skill_id).toBeNull();
    for (const hit of hits) expect(hit.score).toBeLessThanOrEqual(1);
  });

  it("counts every agent matched either way in total, reads only the cards on the page, and breaks ties by name", () => {
    read.length = 0;
    const pool: SearchResult = { ...lexical(["gamma", 0.2, "g1"]), total: 7 };
    const { hits, total } = combineHybrid(pool, closest(["beta", 0.8, 0], ["alpha", 0.8, 0], ["plain", 0.6, 0]), FLOOR, 2, cardsOf);
    expect(hits.map((hit) => hit.card.name)).toEqual(["alpha", "beta"]);
    // Four in the mix, and six lexical matches beyond the pool of one.
    expect(total).toBe(4 + 6);
    expect(read).toEqual([["alpha", "beta"]]);
  });

  it("leaves out an agent found by meaning whose card is gone", () => {
    expect(combineHybrid(lexical(), closest(["ghost", 0.9, 0], ["alpha", 0.9, 0]), FLOOR, 10, cardsOf).hits.map((hit) => hit.card.name)).toEqual(["alpha"]);
  });

  it("admits a hit the off-topic guard set aside only when meaning names the same agent first, at the re-rank base", () => {
    const pool = (weakName: string): SearchResult => ({ hits: [], total: 0, weak: [{ card: CARDS.get(weakName)!, score: 0.2, best_skill_id: CARDS.get(weakName)!.skills[0]?.id ?? null }] });
    const base = rerankBase(FLOOR);
    // Meaning agrees (beta is the closest agent, above the base, below the floor): beta is an answer, scored as a word match.
    const agreed = combineHybrid(pool("beta"), closest(["beta", base + 0.02, 1], ["alpha", base + 0.01, 0]), FLOOR, 10, cardsOf);
    expect(agreed.hits.map((hit) => [hit.card.name, hit.best_skill_id])).toEqual([["beta", "b1"]]);
    expect(agreed.hits[0]!.score).toBeCloseTo(0.2 + 0.8 * HYBRID.semanticWeight * semanticScore(base + 0.02, FLOOR));
    // Another agent is closer by meaning: the weak hit stays out.
    expect(combineHybrid(pool("beta"), closest(["alpha", base + 0.05, 0], ["beta", base + 0.02, 1]), FLOOR, 10, cardsOf).hits).toEqual([]);
    // The closest agent is below the base: nothing agrees.
    expect(agreeingWeakHits(pool("beta"), closest(["beta", base - 0.001, 0]), FLOOR)).toEqual([]);
    expect(agreeingWeakHits(pool("beta"), closest(), FLOOR)).toEqual([]);
  });
});
