// How long the Directory waits on one embeddings call: every deadline of the semantic half in one place.
// Platform-free. Imported by card-embeddings.ts and directory.ts; covered by test/worker/directory/hybrid-failures.test.ts.
import type { Embedder } from "./semantic-index.ts";

/**
 * Deadlines per Workers AI call: a call past its deadline counts as a failure (a search ranks lexically,
 * a publish leaves its card pending), so a hanging call never holds a search or a publish. A search's
 * query is a few words; a publish or an alarm batch is up to 96 texts.
 */
export const EMBED_DEADLINES_MS = { search: 10_000, card: 30_000 } as const;
export type EmbedDeadlines = { readonly [K in keyof typeof EMBED_DEADLINES_MS]: number };

export class EmbedDeadlineError extends Error {
  override name = "EmbedDeadlineError";
}

/** `embed(texts)`, or an EmbedDeadlineError once `ms` pass without an answer (the call itself is left to end on its own). */
export async function embedWithin(embed: Embedder, texts: string[], ms: number): Promise<Float32Array[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EmbedDeadlineError(`the embedding model did not answer ${texts.length} texts within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([embed(texts), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
