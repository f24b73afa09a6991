// Which text-embedding models the directory knows how to rank with, and each one's calibrated floor.
// Platform-free: imported by the Directory object (directory.ts), the local model server beside
// workerd (scripts/local-ai/) and the search evaluator (scripts/eval-search.ts). Covered by
// test/worker/directory/embedding-models.test.ts.
//
// A floor is the cosine below which a query and a skill are taken to be unrelated: a skill found only by
// meaning must reach it to be an answer. It is a property of the model (each model spreads unrelated
// texts over its own range), so it is measured per model with `npm run eval:search -- FILE --calibrate`
// on off-topic queries (docs/directory.md, "Calibrating a model"). A model without one ranks lexically:
// a guessed floor either answers off-topic queries or hides real answers, and neither is visible.

/** The model Workers AI runs on deploy: multilingual (100+ languages), 1024 dimensions. */
export const PRODUCTION_EMBEDDING_MODEL = "@cf/baai/bge-m3";

/**
 * The model `npm start`, `npm run dev:relay`, the evaluator and every test run in Node beside workerd,
 * reached through the same `run(model, {text})` interface as Workers AI: Universal Sentence Encoder lite
 * (English, 512 dimensions), shipped inside an npm package so nothing is downloaded at run time.
 */
export const LOCAL_EMBEDDING_MODEL = "local/universal-sentence-encoder-lite";

export interface EmbeddingModel {
  /** Vector length the model answers with (a vector of another length is refused as a model change). */
  dimensions: number;
  /** Calibrated floor (cosine), or null: the model is known but not calibrated yet, so search stays lexical. */
  floor: number | null;
}

export const EMBEDDING_MODELS: Readonly<Record<string, EmbeddingModel>> = {
  [LOCAL_EMBEDDING_MODEL]: { dimensions: 512, floor: 0.596 },
  [PRODUCTION_EMBEDDING_MODEL]: { dimensions: 1024, floor: null },
};

/**
 * The floor to rank `model` with: the operator's `EMBEDDING_FLOOR` var (a number in 0..1, set after
 * calibrating with an account) wins over the table; null means rank lexically.
 */
export function floorFor(model: string, override: string | undefined): number | null {
  if (override !== undefined && override.trim() !== "") {
    const value = Number(override);
    if (Number.isFinite(value) && value > 0 && value < 1) return value;
    return null;
  }
  return EMBEDDING_MODELS[model]?.floor ?? null;
}
