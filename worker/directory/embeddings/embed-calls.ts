// How long the Directory waits on one embeddings call, and how the alarm paces its retries: every deadline
// and delay of the semantic half in one place. Platform-free. Imported by card-embeddings.ts and
// embed-alarm.ts; covered by test/worker/directory/hybrid-failures.test.ts.
import type { Embedder } from "./semantic-index.ts";

/**
 * Deadlines per Workers AI call: a call past its deadline counts as a failure (a search ranks lexically,
 * a publish leaves its card pending), so a hanging call never holds a search or a publish. A search's
 * query is a few words; a publish or an alarm batch is up to 96 texts.
 */
export const EMBED_DEADLINES_MS = { search: 10_000, card: 30_000 } as const;
export type EmbedDeadlines = { readonly [K in keyof typeof EMBED_DEADLINES_MS]: number };

export const EMBED_RETRY = {
  /** The alarm's first pause after an outage (every call failing), doubled per outage in a row. */
  firstMs: 60_000,
  /** The longest pause between tries while the outage lasts; a success starts over at firstMs. */
  maxMs: 3_600_000,
  /**
   * A card the model refused alone is tried again after this long (also when republished with changes,
   * or when the model changes): a refusal may have been the model's passing state, and once a day costs
   * one call per such card.
   */
  setAsideMs: 86_400_000,
  /** Cards tried one by one per alarm run (each alone, then a probe if it failed): bounds a run's calls. */
  alonePerRun: 8,
} as const;

/** A short text any working model embeds: a card that fails while this answers failed for its own content. */
export const PROBE_TEXT = "agent directory";

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

/** The alarm's pause after `outages` failed runs in a row (1 or more): 60 s doubling, at most an hour. */
export function outageDelayMs(outages: number): number {
  return Math.min(EMBED_RETRY.maxMs, EMBED_RETRY.firstMs * 2 ** Math.max(0, Math.min(outages - 1, 20)));
}
