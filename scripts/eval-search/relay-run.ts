// One run of a search set against the real relay Worker in Miniflare: publish every card over the
// Directory's RPC, wait until the directory has embedded them (or says it will not), then ask every query
// through the real route `POST /directory/search`, as a script on a running relay would. A model failure
// while they are asked fails the run (the relay ranked that query by words alone, silently). Used by
// scripts/eval-search.ts; covered by test/node/eval-search.e2e.test.ts.
import { setTimeout as sleep } from "node:timers/promises";
import type { Miniflare } from "miniflare";
import { terminalSafe } from "../../local-agent/cli/terminal-text.ts";
import { startRelayMiniflare } from "../local-workerd.ts";
import type { RelayMiniflareOptions, WorkerBundle } from "../local-workerd.ts";
import type { DirectoryStats, EmbeddingStats } from "../../worker/directory/index-stats.ts";
import { directoryStats, publishCards } from "./directory-rpc.ts";
import { figuresOf } from "./metrics.ts";
import type { Figures, NegativeOutcome, QueryOutcome, SearchHit } from "./metrics.ts";
import type { SearchSet } from "./search-set.ts";
import { runLocalModel } from "../local-ai/local-model.ts";
import type { NodeEmbeddingsRun } from "../local-ai/local-model.ts";

/** What answers the relay's AI binding: the local model in Node, none (lexical), or a run given here. */
export type RelayEmbeddings = NonNullable<RelayMiniflareOptions["embeddings"]>;

export interface RunOptions {
  embeddings: RelayEmbeddings;
  /** Worker vars: EMBEDDING_FLOOR from --floor, EMBEDDING_MODEL for --workers-ai. */
  vars?: Record<string, string>;
  /** How long the directory may take to embed the set's cards before the run fails. */
  embedTimeoutMs?: number;
  /** Where progress and the Worker's own log lines go (never stdout: its last line is the JSON). */
  log?: (line: string) => void;
}

export interface RunResult {
  figures: Figures;
  queries: QueryOutcome[];
  negatives: NegativeOutcome[];
  /** The directory's embeddings as the queries were asked; null when the relay reports none. */
  embeddings: EmbeddingStats | null;
}

const DEFAULT_EMBED_TIMEOUT_MS = 300_000;
const STATS_POLL_MS = 100;
/** As the issue defines the figures: a query asks for 10 agents, a negative for 3. */
export const QUERY_LIMIT = 10;
export const NEGATIVE_LIMIT = 3;
// The directory never reaches the hub; the relay only needs a URL for the var.
const UNUSED_HUB_URL = "http://127.0.0.1:9";

async function embeddingsStats(mf: Miniflare): Promise<EmbeddingStats | null> {
  // Absent from a relay without embeddings support.
  return ((await directoryStats(mf)) as Partial<DirectoryStats>).embeddings ?? null;
}

/** Waits until no card is left to embed, or the directory says it ranks lexically whatever is stored. */
async function settledEmbeddings(mf: Miniflare, timeoutMs: number): Promise<EmbeddingStats | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await embeddingsStats(mf);
    if (!stats || stats.pending === 0 || stats.state === "off" || stats.state === "uncalibrated") return stats;
    if (Date.now() > deadline) {
      throw new Error(`the directory still had ${stats.pending} of ${stats.cards} cards to embed after ${timeoutMs / 1000} s (state ${stats.state}, last error: ${stats.lastError ?? "none"})`);
    }
    await sleep(STATS_POLL_MS);
  }
}

async function search(origin: URL, query: string, limit: number): Promise<SearchHit[]> {
  const response = await fetch(new URL("/directory/search", origin), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, limit }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`POST /directory/search ${JSON.stringify(query)} -> HTTP ${response.status}: ${text.slice(0, 300)}`);
  const answer = JSON.parse(text) as { agents: SearchHit[] };
  return answer.agents.map(({ name, best_skill_id, score }) => ({ name, best_skill_id, score }));
}

/**
 * The run answering the relay's AI, watched: a failure while the queries are asked makes the directory
 * rank that query by words (never an error to the caller), so the run must not report it as the model's.
 */
function watchedEmbeddings(embeddings: RelayEmbeddings) {
  const watch = { asking: false, calls: 0, failures: [] as string[] };
  if (embeddings === "off") return { embeddings, watch };
  const run = embeddings === "local" ? runLocalModel : embeddings;
  const watched: NodeEmbeddingsRun = async (model, input) => {
    if (watch.asking) watch.calls += 1;
    try {
      return await run(model, input);
    } catch (error) {
      if (watch.asking) watch.failures.push(error instanceof Error ? error.message : String(error));
      throw error;
    }
  };
  return { embeddings: watched, watch };
}

export async function runSearchSet(bundle: WorkerBundle, set: SearchSet, options: RunOptions): Promise<RunResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { embeddings: relayEmbeddings, watch } = watchedEmbeddings(options.embeddings);
  const relayOptions: RelayMiniflareOptions = {
    embeddings: relayEmbeddings,
    vars: options.vars ?? {},
    onLog: ({ level, message }) => log(`  relay ${level}: ${terminalSafe(message)}`),
  };
  const mf = startRelayMiniflare(bundle, UNUSED_HUB_URL, relayOptions);
  try {
    const origin = await mf.ready;
    await publishCards(mf, set.cards, Math.floor(Date.now() / 1000));
    const embeddings = await settledEmbeddings(mf, options.embedTimeoutMs ?? DEFAULT_EMBED_TIMEOUT_MS);
    watch.asking = true;
    // One at a time, in the set's order: the answers do not depend on it, and the figures stay reproducible.
    const queries: QueryOutcome[] = [];
    for (const query of set.queries) queries.push({ query, hits: await search(origin, query.q, QUERY_LIMIT) });
    const negatives: NegativeOutcome[] = [];
    for (const q of set.negatives) negatives.push({ q, hits: await search(origin, q, NEGATIVE_LIMIT) });
    if (watch.failures.length > 0) {
      throw new Error(
        `the model failed on ${watch.failures.length} of ${watch.calls} embedding calls while the queries were asked, so the relay ranked those by words alone and the figures would not be the model's (first: ${terminalSafe(watch.failures[0]!)})`,
      );
    }
    return { figures: figuresOf(queries, negatives), queries, negatives, embeddings };
  } finally {
    await mf.dispose();
  }
}
