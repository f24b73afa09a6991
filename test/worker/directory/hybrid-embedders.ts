// Stand-in embeddings sources for the hybrid tests (hybrid.test.ts, hybrid-embedding.test.ts): a
// deterministic concept embedder (one dimension per concept, so "umbrella" lands near "weather forecast"),
// and ones that fail or answer a rate limit. Each is handed to the Directory by useEmbedder, so a test
// states the model, floor and behaviour it needs whatever env.AI the test project binds. Also statsWhen,
// which runs the Directory's alarm until its embeddings figures get somewhere.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import type { AgentCard } from "../../../worker/directory/card.ts";
import type { EmbeddingStats } from "../../../worker/directory/index-stats.ts";
import type { Embedder, EmbeddingSource } from "../../../worker/directory/embeddings/semantic-index.ts";

export type DirectoryStub = ReturnType<typeof env.DIRECTORY.getByName>;

/**
 * Runs the directory's alarm until its embeddings figures satisfy `done`. The runtime also runs a due
 * alarm by itself: then none is scheduled for a moment, and the next look waits for that run to end.
 */
export async function statsWhen(stub: DirectoryStub, done: (stats: EmbeddingStats) => boolean): Promise<EmbeddingStats> {
  for (let looks = 0; looks < 200; looks++) {
    const { embeddings } = await stub.indexStats();
    if (done(embeddings)) return embeddings;
    if (!(await runDurableObjectAlarm(stub))) await scheduler.wait(10);
  }
  throw new Error("the embeddings never got there after 200 looks: the Directory set no alarm, or its alarm did not do the work");
}

const CONCEPTS = [
  ["weather", "forecast", "rain", "umbrella", "sunny", "storm", "temperature"],
  ["translate", "translation", "language", "french", "spanish"],
  ["recipe", "cook", "dinner", "meal", "vegetarian"],
];

/** Vectors of concept counts, plus a small constant so that no text is the zero vector. */
export const conceptVectors = (texts: string[]): Float32Array[] =>
  texts.map((text) => {
    const words = text.toLowerCase().split(/[^a-z]+/);
    return Float32Array.from([...CONCEPTS.map((concept) => words.filter((w) => concept.includes(w)).length), 0.05]);
  });

/** A source over `embed` that records every call's texts. */
export function standIn(model: string, floor: number | null, embed: Embedder = async (texts) => conceptVectors(texts)) {
  const calls: string[][] = [];
  const source: EmbeddingSource = {
    model,
    dims: 4,
    floor,
    embed: async (texts) => {
      calls.push(texts);
      return embed(texts);
    },
  };
  return { source, calls };
}

/** An embedder that answers only once `open()` was called: cards stay pending while a test looks. */
export function gated(): { embed: Embedder; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { embed: async (texts) => opened.then(() => conceptVectors(texts)), open };
}

export class RateLimitError extends Error {
  override name = "RateLimitError";
}

export const failing: Embedder = async () => {
  throw new Error("InferenceUpstreamError: the model is not available");
};
export const rateLimited: Embedder = async () => {
  throw new RateLimitError("3040: capacity temporarily exceeded, rate limited");
};

let agentNumber = 0;
export const card = (name: string, skill: string, description: string): AgentCard => ({
  name,
  agent_id: `ag_${(++agentNumber).toString(16).padStart(12, "0")}`,
  description,
  skills: [{ id: skill, name: skill, description, tags: [], examples: [] }],
});

/** Three agents, one per concept, and names of agents no query reaches. */
export const CARDS = [
  card("skycast", "forecast", "Weather forecast and rain outlook"),
  card("polyglot", "translate", "Translation between French and Spanish"),
  card("chefbot", "recipes", "Vegetarian dinner recipe ideas"),
];
