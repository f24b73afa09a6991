// Cards still to embed (published before any embedder, while the model failed, or under another model),
// taken in bounded batches by the Directory's alarm: one embeddings call per alarm, rescheduled at once
// while cards remain, one by one when the batch failed (embed-alarm.ts). Platform-free. Imported by
// card-embeddings.ts and embed-alarm.ts; covered by test/worker/directory/hybrid-embedding.test.ts.
import type { AgentCard } from "../card.ts";
import { cardTexts } from "./semantic-index.ts";

export const EMBED_BATCH = {
  /** Cards per alarm run at most. */
  cards: 32,
  /**
   * Texts per embeddings call at most (a card has one per skill, up to 32): Workers AI's embedding models
   * take about a hundred texts per call.
   */
  texts: 96,
} as const;

export interface Batch { cards: AgentCard[]; texts: string[]; firstText: number[] }

/** The leading cards of `pending` that fit in one call (always at least one: a card of 32 skills fits). */
export function takeBatch(pending: readonly AgentCard[], maxCards: number = EMBED_BATCH.cards, maxTexts: number = EMBED_BATCH.texts): Batch {
  const batch: Batch = { cards: [], texts: [], firstText: [] };
  for (const card of pending) {
    const texts = cardTexts(card);
    if (batch.cards.length >= maxCards || (batch.cards.length > 0 && batch.texts.length + texts.length > maxTexts)) break;
    batch.firstText.push(batch.texts.length);
    batch.cards.push(card);
    batch.texts.push(...texts);
  }
  return batch;
}

/** Each card of `batch` with its vectors, cut from one call's answer. */
export function vectorsByCard(batch: Batch, vectors: readonly Float32Array[]): { card: AgentCard; vectors: Float32Array[] }[] {
  return batch.cards.map((card, i) => ({ card, vectors: vectors.slice(batch.firstText[i], batch.firstText[i + 1] ?? batch.texts.length) }));
}
