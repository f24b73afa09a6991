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

/** IndexStats and the rows the cards and vectors tables wrote since the object started. */
export type DirectoryStats = IndexStats & { cardRowsWritten: number };
