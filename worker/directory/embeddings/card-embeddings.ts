// The Directory's semantic half: the embeddings source, the vectors in SQLite (vector-store.ts) and in
// memory (semantic-index.ts), the query vectors asked before (query-vector-cache.ts) and the cards still to
// embed (embed-queue.ts; the alarm's work is embed-alarm.ts). It answers a search's closest skills only
// when every card not set aside has vectors of the current model, the model has a floor and the vectors
// fit the memory cap; otherwise, and whenever the model fails, the search ranks lexically. Imported by directory.ts; covered by
// test/worker/directory/hybrid.test.ts, hybrid-embedding.test.ts and hybrid-failures.test.ts.
import type { AgentCard } from "../card.ts";
import { EMBED_DEADLINES_MS, embedWithin } from "./embed-calls.ts";
import type { EmbedDeadlines } from "./embed-calls.ts";
import { EmbedAlarm } from "./embed-alarm.ts";
import type { AlarmOutcome } from "./embed-alarm.ts";
import { EmbedFailureLog } from "./embed-failure-log.ts";
import { EMBED_BATCH } from "./embed-queue.ts";
import { rerankBase } from "./hybrid-rank.ts";
import type { Closest } from "./hybrid-rank.ts";
import type { EmbeddingStats, EmbeddingsState } from "../index-stats.ts";
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
  private readonly log = new EmbedFailureLog();
  private readonly alarmWork: EmbedAlarm;
  private deadlines: EmbedDeadlines = EMBED_DEADLINES_MS;
  /** Until then a search does not ask the model for a query vector (SEARCH_RETRY_MS after a failure). */
  private searchPausedUntil = 0;

  private readonly maxVectorBytes: number;

  constructor(storage: DurableObjectStorage, source: EmbeddingSource | null, maxVectorBytes = MAX_VECTOR_BYTES) {
    this.maxVectorBytes = maxVectorBytes;
    this.store = new VectorStore(storage);
    this.alarmWork = new EmbedAlarm({
      store: this.store,
      log: this.log,
      current: () => this.source,
      keep: (from, card, vectors) => {
        // A card published or released while it was embedded keeps what that publish did.
        if (this.source === from && this.store.stillStored(card)) this.keep(card.name, { model: from.model, vectors });
      },
      deadlineMs: () => this.deadlines.card,
    });
    this.use(source);
  }

  /**
   * Embeds with `source` from now on (null: no embeddings); vectors of another model become pending, and
   * cards set aside under another model are tried again. `deadlines`: shorter in tests.
   */
  use(source: EmbeddingSource | null, deadlines: EmbedDeadlines = EMBED_DEADLINES_MS): void {
    this.source = source;
    this.deadlines = deadlines;
    this.memory = null;
    this.searchPausedUntil = 0;
    this.log.reset();
    this.alarmWork.reset();
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

  /** Cards still to embed for the current model (not those set aside). */
  get pendingCards(): number {
    return this.store.counts.pending;
  }

  /** When the alarm should next run for the cards to embed or set aside; null: no need. */
  nextAlarmAt(now: number): number | null {
    return this.source ? this.alarmWork.nextAt(now) : null;
  }

  /** The alarm's pause after an outage: 60 s doubling per outage in a row, at most an hour. */
  get retryDelayMs(): number {
    return this.alarmWork.retryDelayMs;
  }

  /** A publish's vectors, or null (no source, the stored card already has them or is set aside, or the model failed: the card is then pending). */
  async embedCard(card: AgentCard): Promise<Embedded | null> {
    const source = this.source;
    // A card set aside is tried again by the alarm, not by each unchanged republish (every agent start).
    if (!source || this.store.hasCurrent(card) || this.store.isSetAside(card)) return null;
    try {
      const vectors = quantise(await embedWithin(source.embed, cardTexts(card), this.deadlines.card));
      this.log.succeeded("publish");
      return { model: source.model, vectors };
    } catch (err) {
      this.log.failed("publish", source.model, `${card.name} is embedded later by the alarm`, err);
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
        this.log.failed("search", source.model, `searches rank lexically for ${SEARCH_RETRY_MS / 1000} s`, err);
        this.searchPausedUntil = Date.now() + SEARCH_RETRY_MS;
        return null;
      }
      this.log.succeeded("search");
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
   * The alarm's work (embed-alarm.ts): one batch of pending cards, or the set-aside cards due again. "more"
   * when the alarm should run again at once, "failed" on an outage (the alarm waits retryDelayMs), "done" otherwise.
   */
  async embedPendingBatch(maxCards: number = EMBED_BATCH.cards): Promise<AlarmOutcome> {
    return this.source ? this.alarmWork.run(this.source, maxCards) : "done";
  }

  stats(): EmbeddingStats {
    const { cards, embedded, setAside, pending } = this.store.counts;
    return {
      model: this.source?.model ?? null,
      floor: this.source?.floor ?? null,
      state: this.state(),
      cards,
      embedded,
      pending,
      failed: setAside,
      lastFailure: this.store.lastSetAsideReason(),
      vectorBytes: this.memoryBytes(),
      lastError: this.log.lastError,
    };
  }
}
