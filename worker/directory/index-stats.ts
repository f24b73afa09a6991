// What the Directory object reports of its search index (Directory.indexStats()). Types only, with no
// Workers types, so the benchmark (bench/directory-storage.ts, built for Node) reads the same shape.

export interface IndexStats {
  cards: number;
  units: { live: number; ids: number; base: number };
  pending: number;
  cache: { terms: number; bytes: number };
  memoryBytes: number;
  /** Rows the index wrote since the object started. */
  rowsWritten: number;
  commits: number;
  rebuilds: number;
  /** How the index came up: "loaded", or why it was rebuilt. */
  opened: string;
}

/**
 * Why search ranks as it does: "off" (no embeddings binding), "uncalibrated" (the model has no floor:
 * vectors are stored, search is lexical), "embedding" (cards still to embed: lexical meanwhile),
 * "over_capacity" (vectors past the memory cap: lexical), "ready" (hybrid).
 */
export type EmbeddingsState = "off" | "uncalibrated" | "embedding" | "ready" | "over_capacity";

/** The directory's semantic half (embeddings/card-embeddings.ts). The search evaluator waits for `pending === 0`. */
export interface EmbeddingStats {
  /** The model cards are embedded with; null without an embeddings binding. */
  model: string | null;
  floor: number | null;
  state: EmbeddingsState;
  cards: number;
  /** Cards whose stored vectors are for the current model. */
  embedded: number;
  /** Cards still to embed (0 without a binding); not those set aside. */
  pending: number;
  /**
   * Cards the model refused alone (set aside: found by their words only, holding up no one), tried again
   * daily, when republished with changes, or under another model (embeddings/embed-alarm.ts).
   */
  failed: number;
  /** The model's reason for the card most recently set aside ("name: reason"); null when none is. */
  lastFailure: string | null;
  /**
   * Memory the current model's vectors take held for search (8 bits per dimension, a norm per vector, the
   * measured per-card overhead), what the memory cap (embeddings/semantic-index.ts MAX_VECTOR_BYTES) is measured against.
   */
  vectorBytes: number;
  /** The last embeddings failure since the object started or the model changed ("where: message"). */
  lastError: string | null;
}

/** IndexStats, the rows the cards and vectors tables wrote since the object started, and the embeddings. */
export type DirectoryStats = IndexStats & { cardRowsWritten: number; embeddings: EmbeddingStats };
