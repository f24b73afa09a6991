// The semantic half of hybrid search, used only when the deployment has an embeddings binding
// (Workers AI): one vector per skill, compared with the query's by cosine. Platform-free; covered by
// test/worker/directory/hybrid.test.ts.
import type { AgentCard, SkillCard } from "./card.ts";
import type { SearchHit, SearchResult } from "./search-index.ts";

/** Turns texts into vectors (Workers AI's text-embedding models, or a stand-in in tests). */
export type Embedder = (texts: string[]) => Promise<Float32Array[]>;

/**
 * Cosine similarity of unrelated texts under small sentence-embedding models sits around 0.3–0.5;
 * rescaling from this floor makes "unrelated" 0 and "same meaning" 1 before mixing with lexical scores.
 */
export const COSINE_FLOOR = 0.45;
/** Share of the lexical score in the hybrid: words the user typed still count most. */
export const LEXICAL_WEIGHT = 0.6;

/** The text a skill is embedded from: what it is called, does and is asked. */
export function skillText(card: AgentCard, skill: SkillCard | null): string {
  if (!skill) return `${card.name}. ${card.description}`;
  return [skill.name, skill.description, skill.tags.join(", "), ...skill.examples, card.description].filter(Boolean).join(". ");
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export function calibrated(cos: number): number {
  return Math.min(1, Math.max(0, (cos - COSINE_FLOOR) / (1 - COSINE_FLOOR)));
}

interface Vectors {
  card: AgentCard;
  /** Parallel to card.skills, or one vector for a skill-less card. */
  vectors: Float32Array[];
}

export class SemanticIndex {
  private readonly byName = new Map<string, Vectors>();

  get size(): number {
    return this.byName.size;
  }

  upsert(card: AgentCard, vectors: Float32Array[]): void {
    this.byName.set(card.name, { card, vectors });
  }

  remove(name: string): void {
    this.byName.delete(name);
  }

  /** The card of an agent with vectors. */
  card(name: string): AgentCard | undefined {
    return this.byName.get(name)?.card;
  }

  /** Every agent's best skill by calibrated cosine (a linear scan: ~30,000 dot products for 10,000 agents). */
  scores(query: Float32Array): Map<string, { score: number; skill: number }> {
    const out = new Map<string, { score: number; skill: number }>();
    for (const [name, { vectors }] of this.byName) {
      let best = { score: 0, skill: -1 };
      vectors.forEach((v, i) => {
        const score = calibrated(cosine(query, v));
        if (score > best.score) best = { score, skill: i };
      });
      if (best.score > 0) out.set(name, best);
    }
    return out;
  }
}

/**
 * Mixes lexical hits (computed with a generous limit) and semantic scores: an agent found either way
 * is a candidate; its score is LEXICAL_WEIGHT·lexical + (1 − LEXICAL_WEIGHT)·semantic, still in 0..1.
 * best_skill_id stays the lexical one when words matched, else the semantically closest skill.
 */
/** `total`: agents matched by either ranking (exact while the lexical pool held every lexical match). */
export function combineHybrid(
  lexical: SearchResult,
  semantic: Map<string, { score: number; skill: number }>,
  cards: (name: string) => AgentCard | undefined,
  limit: number,
): SearchResult {
  const merged = new Map<string, SearchHit>();
  for (const hit of lexical.hits) merged.set(hit.card.name, { ...hit, score: LEXICAL_WEIGHT * hit.score });
  for (const [name, { score, skill }] of semantic) {
    const existing = merged.get(name);
    if (existing) existing.score += (1 - LEXICAL_WEIGHT) * score;
    else {
      const card = cards(name);
      if (card) merged.set(name, { card, score: (1 - LEXICAL_WEIGHT) * score, best_skill_id: card.skills[skill]?.id ?? null });
    }
  }
  const all = [...merged.values()]
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || (a.card.name < b.card.name ? -1 : a.card.name > b.card.name ? 1 : 0));
  const beyondPool = Math.max(0, lexical.total - lexical.hits.length);
  return { hits: all.slice(0, Math.min(50, Math.max(1, limit))), total: all.length + beyondPool };
}

/** Workers AI: `run(model, {text})` answers `{shape, data: number[][]}`. */
export interface EmbeddingsBinding {
  run(model: string, input: { text: string[] }): Promise<unknown>;
}

export function workersAiEmbedder(ai: EmbeddingsBinding, model: string): Embedder {
  return async (texts) => {
    const answer = (await ai.run(model, { text: texts })) as { data?: number[][] };
    if (!Array.isArray(answer.data) || answer.data.length !== texts.length) throw new Error(`embedding model ${model} answered without one vector per text`);
    return answer.data.map((v) => Float32Array.from(v));
  };
}
