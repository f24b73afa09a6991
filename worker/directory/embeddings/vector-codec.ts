// Skill vectors as the directory keeps them: each quantised to 8-bit integers (its largest component
// ±127), in one byte array per card. Cosine does not depend on a vector's length, so no scale is kept: a
// card's bytes are its vectors, one after another. Platform-free. Imported by the in-memory vector set
// (semantic-index.ts) and the SQLite rows (vector-store.ts); covered by test/worker/directory/hybrid-vectors.test.ts.
//
// Why 8 bits: a quarter of float32's memory, so four times the cards per Directory object; on the local
// model's vectors the rankings came out the same as float32 (docs/directory.md, "Scale").

/** A card's skill vectors, quantised: `count` vectors of `dims` bytes in `values`, and each one's 1/‖q‖. */
export interface CardVectors {
  dims: number;
  values: Int8Array;
  inverseNorms: Float32Array;
}

export function quantise(vectors: readonly ArrayLike<number>[]): CardVectors {
  const dims = vectors[0]?.length ?? 0;
  const values = new Int8Array(vectors.length * dims);
  vectors.forEach((vector, i) => {
    if (vector.length !== dims) throw new Error(`vectors of ${vector.length} and ${dims} dimensions in one card`);
    let largest = 0;
    for (let d = 0; d < dims; d++) largest = Math.max(largest, Math.abs(vector[d]!));
    if (!Number.isFinite(largest)) throw new Error("a vector with a component that is not a finite number");
    if (largest === 0) return;
    for (let d = 0; d < dims; d++) values[i * dims + d] = Math.round((vector[d]! * 127) / largest);
  });
  return withNorms(values, dims);
}

/** The vectors of a stored BLOB; null when its bytes are not `count` vectors of `dims` (read as pending, never misread). */
export function fromBytes(values: Int8Array, dims: number, count: number): CardVectors | null {
  if (!Number.isSafeInteger(dims) || dims <= 0 || !Number.isSafeInteger(count) || count <= 0 || values.length !== dims * count) return null;
  return withNorms(values, dims);
}

function withNorms(values: Int8Array, dims: number): CardVectors {
  const count = dims > 0 ? values.length / dims : 0;
  const inverseNorms = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    let sum = 0;
    for (let d = i * dims; d < (i + 1) * dims; d++) sum += values[d]! * values[d]!;
    inverseNorms[i] = sum === 0 ? 0 : 1 / Math.sqrt(sum);
  }
  return { dims, values, inverseNorms };
}

/** `vector` scaled to length 1 (a zero vector stays zero). */
export function unit(vector: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let d = 0; d < vector.length; d++) sum += vector[d]! * vector[d]!;
  const scale = sum === 0 ? 0 : 1 / Math.sqrt(sum);
  return Float32Array.from(vector, (x) => x * scale);
}

/** Cosine of a unit query vector with vector `i` of a card (0 when the lengths differ). */
export function cosineAt(query: Float32Array, card: CardVectors, i: number): number {
  const { dims, values } = card;
  if (query.length !== dims) return 0;
  let dot = 0;
  for (let d = 0, at = i * dims; d < dims; d++, at++) dot += query[d]! * values[at]!;
  return dot * card.inverseNorms[i]!;
}
