// Query vectors already asked for, by model and query text (least recently used dropped first): scripts
// repeat the same few queries, and Workers AI allows 3,000 requests a minute by default. Platform-free.
// Imported by card-embeddings.ts; covered by test/worker/directory/hybrid-embedding.test.ts.

export const QUERY_CACHE_ENTRIES = 1000;

export class QueryVectorCache {
  private readonly entries = new Map<string, Float32Array>();
  hits = 0;
  misses = 0;

  private readonly maxEntries: number;

  constructor(maxEntries = QUERY_CACHE_ENTRIES) {
    this.maxEntries = maxEntries;
  }

  get(model: string, query: string): Float32Array | undefined {
    const key = `${model}\n${query}`;
    const vector = this.entries.get(key);
    if (!vector) {
      this.misses++;
      return undefined;
    }
    // Map keeps insertion order: re-inserting marks the entry most recently used.
    this.entries.delete(key);
    this.entries.set(key, vector);
    this.hits++;
    return vector;
  }

  set(model: string, query: string, vector: Float32Array): void {
    const key = `${model}\n${query}`;
    this.entries.delete(key);
    this.entries.set(key, vector);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
