// The evaluator's runs composed: calibrate first when asked, then the model run (unless --lexical) and
// the lexical run, each on a fresh relay. Used by scripts/eval-search.ts (which bundles the Worker and
// prints); covered by test/node/eval-search.e2e.test.ts.
import { runLocalModel } from "../local-ai/local-model.ts";
import { LOCAL_EMBEDDING_MODEL } from "../../worker/directory/embeddings/embedding-models.ts";
import type { WorkerBundle } from "../local-workerd.ts";
import { calibrate, embedderFromRun } from "./calibrate.ts";
import type { Calibration, TextEmbedder } from "./calibrate.ts";
import { runSearchSet } from "./relay-run.ts";
import type { RelayEmbeddings } from "./relay-run.ts";
import type { LabelledRun } from "./report.ts";
import type { SearchSet } from "./search-set.ts";
import { workersAiRestRun } from "./workers-ai-rest.ts";
import type { WorkersAiAccount } from "./workers-ai-rest.ts";

export interface EvaluateOptions {
  /** Only the lexical run (the relay binds no AI). */
  lexical: boolean;
  /** EMBEDDING_FLOOR for the model run (a number in 0..1, as text). */
  floor: string | null;
  /** Measure a floor on the set's negatives first, and run the model at it. */
  calibrate: boolean;
  /** Rank with this Workers AI model over the REST API instead of the local model. */
  workersAi: { model: string; account: WorkersAiAccount } | null;
  embedTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface Evaluation {
  /** The model run first (when there is one), the lexical run last. */
  runs: LabelledRun[];
  calibration: { result: Calibration; model: string } | null;
}

/** The relay's embeddings for the model run, and the model id it ranks with. */
function modelEmbeddings(options: EvaluateOptions): { embeddings: RelayEmbeddings; model: string } {
  if (options.workersAi) return { embeddings: workersAiRestRun(options.workersAi.account), model: options.workersAi.model };
  return { embeddings: "local", model: LOCAL_EMBEDDING_MODEL };
}

/** The same model in Node for --calibrate: the local model's loader (scripts/local-ai/) or Workers AI's REST API. */
export function calibrationEmbedder(options: EvaluateOptions): TextEmbedder | null {
  const { embeddings, model } = modelEmbeddings(options);
  if (embeddings === "off") return null;
  return embedderFromRun(typeof embeddings === "function" ? embeddings : runLocalModel, model);
}

export async function evaluate(bundle: WorkerBundle, set: SearchSet, options: EvaluateOptions): Promise<Evaluation> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const runs: LabelledRun[] = [];
  let calibration: Evaluation["calibration"] = null;
  let floor = options.floor;
  if (!options.lexical) {
    const { embeddings, model } = modelEmbeddings(options);
    // One text first (calibrating embeds first anyway): a token or model Workers AI refuses fails here,
    // in its own words, rather than leave the relay retrying the cards until the embedding deadline.
    if (typeof embeddings === "function" && !options.calibrate) await embeddings(model, { text: [set.queries[0]!.q] });
    if (options.calibrate) {
      const embed = calibrationEmbedder(options);
      if (!embed) throw new Error(`--calibrate needs a model to embed with, and ${model} is off`);
      log(`calibrating ${model} on ${set.negatives.length} negatives…`);
      calibration = { result: await calibrate(set, embed), model };
      floor = String(calibration.result.floor);
    }
    const vars: Record<string, string> = {
      ...(floor !== null ? { EMBEDDING_FLOOR: floor } : {}),
      ...(options.workersAi ? { EMBEDDING_MODEL: model } : {}),
    };
    log(`model run (${model}): ${set.cards.length} agents, ${set.queries.length} queries, ${set.negatives.length} negatives…`);
    runs.push({ label: "model", result: await runSearchSet(bundle, set, { embeddings, vars, log, ...(options.embedTimeoutMs ? { embedTimeoutMs: options.embedTimeoutMs } : {}) }) });
  }
  log(`lexical run: ${set.cards.length} agents, ${set.queries.length} queries, ${set.negatives.length} negatives…`);
  runs.push({ label: "lexical", result: await runSearchSet(bundle, set, { embeddings: "off", log }) });
  return { runs, calibration };
}
