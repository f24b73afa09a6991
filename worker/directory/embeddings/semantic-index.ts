// The semantic half of search: the text each skill is embedded from, the embeddings source (Workers AI's
// binding, or the local model behind the same interface), and the skill vectors of the current model held
// in memory for a search's linear scan. Platform-free: imported by the Directory's parts
// (card-embeddings.ts, vector-store.ts) and by the search evaluator (skillText, cosine). Covered by
// test/worker/directory/hybrid.test.ts and hybrid-vectors.test.ts.
import type { AgentCard, SkillCard } from "../card.ts";
import type { Closest } from "./hybrid-rank.ts";
import { cosineAt } from "./vector-codec.ts";
import type { CardVectors } from "./vector-codec.ts";

/** Turns texts into vectors, one per text, in order; throws when the model fails or refuses. */
export type Embedder = (texts: string[]) => Promise<Float32Array[]>;

/** What the directory embeds with: the model's id (stored beside each vector), its vector length if known, its floor. */
export interface EmbeddingSource {
  model: string;
  /** Expected vector length (embedding-models.ts); null for a model the table does not know. */
  dims: number | null;
  /** Calibrated floor; null ranks lexically (vectors are still stored, ready for a floor). */
  floor: number | null;
  embed: Embedder;
}

/** Workers AI's binding (and the local model behind the same interface): `run(model, {text})` answers `{shape, data}`. */
export interface EmbeddingsBinding {
  run(model: string, input: { text: string[] }): Promise<unknown>;
}

/** The binding as an Embedder; an answer without one vector of `dims` numbers per text is refused (a model change, or a broken answer). */
export function workersAiEmbedder(ai: EmbeddingsBinding, model: string, dims: number | null): Embedder {
  return async (texts) => {
    const answer = (await ai.run(model, { text: texts })) as { data?: unknown };
    const data = answer?.data;
    if (!Array.isArray(data) || data.length !== texts.length) throw new Error(`embedding model ${model} answered without one vector per text`);
    return data.map((vector: unknown) => {
      if (!Array.isArray(vector) || (dims !== null && vector.length !== dims)) throw new Error(`embedding model ${model} answered a vector that is not ${dims ?? "a list"} numbers long`);
      return Float32Array.from(vector as number[]);
    });
  };
}

/** The text a skill is embedded from: what it is called, does and is asked. */
export function skillText(card: AgentCard, skill: SkillCard | null): string {
  if (!skill) return `${card.name}. ${card.description}`;
  return [skill.name, skill.description, skill.tags.join(", "), ...skill.examples, card.description].filter(Boolean).join(". ");
}

/** A card's texts, parallel to card.skills (one for a skill-less card). */
export function cardTexts(card: AgentCard): string[] {
  return card.skills.length > 0 ? card.skills.map((skill) => skillText(card, skill)) : [skillText(card, null)];
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
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

/**
 * Memory the vectors may take in one Directory object (of its 128 MB, beside the lexical index's ~55 MB
 * at 100,000 cards): ~24,000 cards of three skills at 512 dimensions, ~13,800 at 1,024 (docs/directory.md, "Scale"; npm run bench:vectors).
 */
export const MAX_VECTOR_BYTES = 48 * 1024 * 1024;
/**
 * Memory a card's vectors take beyond their bytes and norms (its name, the map entry, two typed arrays):
 * measured in Node 22 with 20,000 cards of 1 and 3 skills at 512 and 1,024 dimensions, 540 ± 5 bytes.
 */
export const CARD_OVERHEAD_BYTES = 540;

/** Every card's vectors of one model, by card name. */
export class SemanticIndex {
  private readonly byName = new Map<string, CardVectors>();
  private bytesHeld = 0;

  get size(): number {
    return this.byName.size;
  }

  /** Bytes of the vectors held (the quantised values and their norms). */
  get bytes(): number {
    return this.bytesHeld;
  }

  upsert(name: string, vectors: CardVectors): void {
    this.remove(name);
    this.byName.set(name, vectors);
    this.bytesHeld += vectors.values.byteLength + vectors.inverseNorms.byteLength;
  }

  remove(name: string): void {
    const old = this.byName.get(name);
    if (!old) return;
    this.byName.delete(name);
    this.bytesHeld -= old.values.byteLength + old.inverseNorms.byteLength;
  }

  /**
   * Each card's closest skill to the unit vector `query`, for cards whose closest reaches `minCos`: a
   * linear scan (3 skills × 16,000 cards × 1,024 dimensions is ~50 M multiply-adds, tens of ms).
   */
  closest(query: Float32Array, minCos: number): Map<string, Closest> {
    const out = new Map<string, Closest>();
    for (const [name, vectors] of this.byName) {
      let best: Closest = { cos: -Infinity, skill: -1 };
      for (let i = 0; i < vectors.inverseNorms.length; i++) {
        const cos = cosineAt(query, vectors, i);
        if (cos > best.cos) best = { cos, skill: i };
      }
      if (best.cos >= minCos) out.set(name, best);
    }
    return out;
  }
}
