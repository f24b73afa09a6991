// `npm run eval:search -- FILE [--json] [--verbose] [--lexical] [--floor X] [--calibrate] [--workers-ai MODEL]`:
// measures the directory's search on a set (scripts/eval-search/search-set.ts) with the real Worker in
// Miniflare, with the local model and without it (docs/directory.md, "Measuring search"). Only this file
// touches argv, stdout and the exit code: 0 measured, 2 a usage mistake or a bad set, 1 a failed run.
// Covered by test/node/eval-search.e2e.test.ts.
import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { terminalOutput } from "../local-agent/cli/terminal-text.ts";
import { evaluate } from "./eval-search/evaluate.ts";
import type { EvaluateOptions } from "./eval-search/evaluate.ts";
import { calibrationLines, figuresTable, jsonLine, verboseLines } from "./eval-search/report.ts";
import { SearchSetError, readSearchSet } from "./eval-search/search-set.ts";
import { bundleWorker } from "./local-workerd.ts";

export const USAGE = "usage: npm run eval:search -- FILE [--json] [--verbose] [--lexical] [--floor X] [--calibrate] [--workers-ai MODEL]";

export class EvalSearchUsage extends Error {}

export interface CommandLine extends Omit<EvaluateOptions, "log" | "embedTimeoutMs"> {
  file: string;
  json: boolean;
  verbose: boolean;
}

/** The command line read and checked; a mistake is an EvalSearchUsage naming it. */
export function evalSearchArgs(argv: string[], env: Record<string, string | undefined>): CommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: "boolean" }, verbose: { type: "boolean" }, lexical: { type: "boolean" },
        floor: { type: "string" }, calibrate: { type: "boolean" }, "workers-ai": { type: "string" },
      },
    });
  } catch (error) {
    // parseArgs's own refusal (an unknown option, a missing value) says what was wrong.
    throw new EvalSearchUsage(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new EvalSearchUsage(`give one set FILE (${positionals.length} given)`);
  const floor = values.floor ?? null;
  if (floor !== null && !(Number(floor) > 0 && Number(floor) < 1)) throw new EvalSearchUsage(`--floor must be a cosine between 0 and 1 (exclusive), not "${floor}"`);
  const lexical = values.lexical ?? false;
  const calibrate = values.calibrate ?? false;
  const model = values["workers-ai"] ?? null;
  if (lexical && (floor !== null || calibrate || model !== null)) throw new EvalSearchUsage("--lexical runs without a model: leave out --floor, --calibrate and --workers-ai");
  if (calibrate && floor !== null) throw new EvalSearchUsage("--calibrate measures the floor itself: leave out --floor");
  let workersAi: CommandLine["workersAi"] = null;
  if (model !== null) {
    const accountId = env.CLOUDFLARE_ACCOUNT_ID;
    const apiToken = env.CLOUDFLARE_API_TOKEN;
    if (!model.startsWith("@cf/")) throw new EvalSearchUsage(`--workers-ai takes a Workers AI model id such as @cf/baai/bge-m3, not "${model}"`);
    if (!accountId || !apiToken) throw new EvalSearchUsage("--workers-ai needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN (a token allowed Workers AI) in the environment");
    workersAi = { model, account: { accountId, apiToken, ...(env.CLOUDFLARE_API_BASE_URL ? { apiBase: env.CLOUDFLARE_API_BASE_URL } : {}) } };
  }
  return { file: positionals[0]!, json: values.json ?? false, verbose: values.verbose ?? false, lexical, floor, calibrate, workersAi };
}

async function main(line: CommandLine): Promise<void> {
  const set = await readSearchSet(line.file);
  if (line.calibrate && set.negatives.length === 0) {
    throw new SearchSetError(`${line.file}: --calibrate needs "negatives": queries no agent of the set serves, to measure the floor on`);
  }
  const outdir = await mkdtemp(join(tmpdir(), "clawrelay-eval-search-"));
  const cleanUp = () => rmSync(outdir, { recursive: true, force: true });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => { cleanUp(); process.exit(130); });
  try {
    process.stderr.write("bundling the relay Worker…\n");
    const bundle = await bundleWorker("wrangler.toml", outdir);
    const { runs, calibration } = await evaluate(bundle, set, line);
    const out: string[] = [];
    if (calibration) out.push(...calibrationLines(calibration.result, calibration.model), "");
    out.push(`${line.file}: ${set.cards.length} agents, ${set.queries.length} queries, ${set.negatives.length} negatives`, ...figuresTable(runs));
    if (line.verbose) out.push("", ...runs.flatMap(verboseLines));
    const model = runs[0]!.result.figures;
    const lexical = runs.at(-1)!.result.figures;
    if (line.json) out.push(jsonLine(model, lexical));
    process.stdout.write(terminalOutput(`${out.join("\n")}\n`));
  } finally {
    cleanUp();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let line: CommandLine;
  try {
    line = evalSearchArgs(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof EvalSearchUsage)) throw error;
    process.stderr.write(`eval:search: ${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  main(line).then(
    () => process.exit(0),
    (error: unknown) => {
      // A bad set is the user's to fix (2); anything else is a failed run (1), said in one line with its cause.
      process.stderr.write(`eval:search: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(error instanceof SearchSetError ? 2 : 1);
    },
  );
}
