// The Directory's semantic half: the embeddings source, the vectors in SQLite (vector-store.ts) and in
// memory (semantic-index.ts), the query vectors asked before (query-vector-cache.ts) and the cards still to
// embed (embed-queue.ts). It answers a search's closest skills only when every card has vectors of the
// current model, the model has a floor and the vectors fit the memory cap; otherwise, and whenever the
// model fails, the search ranks lexically. Imported by directory.ts; covered by
// test/worker/directory/hybrid.test.ts and hybrid-embedding.test.ts.
import type { AgentCard } from "./card.ts";
import { EMBED_DEADLINES_MS, embedWithin } from "./embed-calls.ts";
import type { EmbedDeadlines } from "./embed-calls.ts";
import { EMBED_BATCH, takeBatch, vectorsByCard } from "./embed-queue.ts";
import { rerankBase } from "./hybrid-rank.ts";
import type { Closest } from "./hybrid-rank.ts";
import type { EmbeddingStats, EmbeddingsState } from "./index-stats.ts";
import { QueryVectorCache } from "./query-vector-cache.ts";
import { CARD_OVERHEAD_BYTES, MAX_VECTOR_BYTES, SemanticIndex, cardTexts } from "./semantic-index.ts";
import type { EmbeddingSource } from "./semantic-index.ts";
import { quantise, unit } from "./vector-codec.ts";
import type { CardVectors } from "./vector-codec.ts";
import { VectorStore } from "./vector-store.ts";


/**
 * After the model failed at search time (an outage, a rate limit), searches rank lexically without asking
 * it for this long: none waits on a failing call, and a rate limit is not pressed further.
 */
export const SEARCH_RETRY_MS = 10_000;

/** A query with no letter or digit ("", "?!") means nothing to embed: it costs no Workers AI request. */
const MEANINGFUL = /[\p{L}\p{N}]/u;

/** Vectors made for one card, with the model that made them. */
export interface Embedded { model: string; vectors: CardVectors }

export class CardEmbeddings {
  private readonly store: VectorStore;
  private source: EmbeddingSource | null = null;
  private memory: SemanticIndex | null = null;
  private readonly cache = new QueryVectorCache();
  /** Failure kinds logged since the last success of their kind (so an outage logs once, not per search). */
  private readonly logged = new Set<string>();
  private lastError: string | null = null;
  private deadlines: EmbedDeadlines = EMBED_DEADLINES_MS;
  /** Until then a search does not ask the model for a query vector (SEARCH_RETRY_MS after a failure). */
  private searchPausedUntil = 0;

  private readonly maxVectorBytes: number;

  constructor(storage: DurableObjectStorage, source: EmbeddingSource | null, maxVectorBytes = MAX_VECTOR_BYTES) {
    this.maxVectorBytes = maxVectorBytes;
    this.store = new VectorStore(storage);
    this.use(source);
  }

  /** Embeds with `source` from now on (null: no embeddings); vectors of another model become pending. `deadlines`: shorter in tests. */
  use(source: EmbeddingSource | null, deadlines: EmbedDeadlines = EMBED_DEADLINES_MS): void {
    this.source = source;
    this.deadlines = deadlines;
    this.memory = null;
    this.lastError = null;
    this.searchPausedUntil = 0;
    this.logged.clear();
    this.store.useModel(source && { model: source.model, dims: source.dims });
  }

  get rowsWritten(): number {
    return this.store.rowsWritten;
  }

  get cacheUse(): { hits: number; misses: number } {
    return { hits: this.cache.hits, misses: this.cache.misses };
  }

  state(): EmbeddingsState {
    if (!this.source) return "off";
    if (this.source.floor === null) return "uncalibrated";
    if (this.memoryBytes() > this.maxVectorBytes) return "over_capacity";
    return this.store.counts.pending > 0 ? "embedding" : "ready";
  }

  /** Memory the current model's vectors take held for search (held or not): bytes, 4-byte norms, per-card overhead. */
  private memoryBytes(): number {
    const { embedded, vectors, bytes } = this.store.counts;
    return bytes + 4 * vectors + CARD_OVERHEAD_BYTES * embedded;
  }

  get hasPending(): boolean {
    return this.source !== null && this.store.counts.pending > 0;
  }

  /** A publish's vectors, or null (no source, the stored card already has them, or the model failed: the card is then pending). */
  async embedCard(card: AgentCard): Promise<Embedded | null> {
    const source = this.source;
    if (!source || this.store.hasCurrent(card)) return null;
    try {
      const vectors = quantise(await embedWithin(source.embed, cardTexts(card), this.deadlines.card));
      this.succeeded("publish");
      return { model: source.model, vectors };
    } catch (err) {
      this.failed("publish", `${card.name} is embedded later by the alarm`, err);
      return null;
    }
  }

  /** A card row was written: `created` when its name is new, `changed` when its content differs from the stored one. */
  cardStored(name: string, created: boolean, changed: boolean, embedded: Embedded | null): void {
    if (created) this.store.cardAdded();
    if (changed) this.drop(name, false);
    if (embedded) this.keep(name, embedded);
  }

  cardForgotten(name: string): void {
    this.drop(name, true);
  }

  private keep(name: string, { model, vectors }: Embedded): void {
    this.store.put(name, model, vectors);
    if (model === this.source?.model) this.memory?.upsert(name, vectors);
    // Past the cap the vectors leave memory; they stay stored, ready for a larger cap or fewer cards.
    if (this.memoryBytes() > this.maxVectorBytes) this.memory = null;
  }

  private drop(name: string, cardGone: boolean): void {
    this.store.delete(name, cardGone);
    this.memory?.remove(name);
  }

  /**
   * Each agent's closest skill to `query` at or above the re-rank base, and the floor to rank with; null
   * when the search must rank lexically (not ready, or the model failed: logged, never the caller's error).
   */
  async closest(query: string): Promise<{ closest: Map<string, Closest>; floor: number } | null> {
    const source = this.source;
    if (!source || source.floor === null || !MEANINGFUL.test(query) || this.state() !== "ready") return null;
    let vector = this.cache.get(source.model, query);
    if (!vector) {
      if (Date.now() < this.searchPausedUntil) return null;
      try {
        const [answer] = await embedWithin(source.embed, [query], this.deadlines.search);
        if (!answer) throw new Error(`embedding model ${source.model} answered no vector for the query`);
        vector = unit(answer);
      } catch (err) {
        this.failed("search", `searches rank lexically for ${SEARCH_RETRY_MS / 1000} s`, err);
        this.searchPausedUntil = Date.now() + SEARCH_RETRY_MS;
        return null;
      }
      this.succeeded("search");
      this.cache.set(source.model, query, vector);
    }
    // The source, or whether every card has vectors, may have changed while the query was embedded.
    if (this.source !== source || this.state() !== "ready") return null;
    const memory = this.loaded();
    if (this.state() !== "ready") return null;
    return { closest: memory.closest(vector, rerankBase(source.floor)), floor: source.floor };
  }

  private loaded(): SemanticIndex {
    if (!this.memory) {
      const memory = new SemanticIndex();
      this.store.load((name, vectors) => memory.upsert(name, vectors));
      this.memory = memory;
    }
    return this.memory;
  }

  /**
   * The alarm's work: embeds one batch of pending cards. "more" when cards remain, "failed" when the
   * model failed (the alarm waits EMBED_BATCH.retryAfterMs), "done" otherwise.
   */
  async embedPendingBatch(maxCards: number = EMBED_BATCH.cards): Promise<"done" | "more" | "failed"> {
    const source = this.source;
    if (!source) return "done";
    const batch = takeBatch(this.store.pending(maxCards), maxCards);
    if (batch.cards.length === 0) return "done";
    let answer: Float32Array[];
    try {
      answer = await embedWithin(source.embed, batch.texts, this.deadlines.card);
      if (answer.length !== batch.texts.length) throw new Error(`embedding model ${source.model} answered ${answer.length} vectors for ${batch.texts.length} texts`);
      for (const { card, vectors } of vectorsByCard(batch, answer)) {
        // A card published or released while the batch was embedded keeps what that publish did.
        if (this.source === source && this.store.stillStored(card)) this.keep(card.name, { model: source.model, vectors: quantise(vectors) });
      }
    } catch (err) {
      this.failed("alarm", `${batch.cards.length} pending cards tried again in ${EMBED_BATCH.retryAfterMs / 1000} s`, err);
      return "failed";
    }
    this.succeeded("alarm");
    // The counts follow every write; a recount after each batch also mends any drift (~ms at 100,000 cards).
    this.store.recount();
    return this.hasPending ? "more" : "done";
  }

  private failed(where: "publish" | "search" | "alarm", consequence: string, err: unknown): void {
    const name = err instanceof Error ? err.name : typeof err;
    const message = err instanceof Error ? err.message : String(err);
    this.lastError = `${where}: ${message}`;
    const kind = `${where}/${name}`;
    if (this.logged.has(kind)) return;
    this.logged.add(kind);
    console.error(`Directory ${where}: embeddings model ${this.source?.model ?? "(none)"} failed (${consequence}); further ${name}s here are not logged until it works again:`, err);
  }

  private succeeded(where: "publish" | "search" | "alarm"): void {
    for (const kind of this.logged) if (kind.startsWith(`${where}/`)) this.logged.delete(kind);
  }

  stats(): EmbeddingStats {
    const { cards, embedded, pending } = this.store.counts;
    return {
      model: this.source?.model ?? null,
      floor: this.source?.floor ?? null,
      state: this.state(),
      cards,
      embedded,
      pending,
      vectorBytes: this.memoryBytes(),
      lastError: this.lastError,
    };
  }
}
