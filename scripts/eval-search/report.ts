// What `eval:search` prints: the figures of each run side by side, one line per query with --verbose
// (others' text made safe for the terminal), and the JSON line scripts read (always the last line).
// Pure; used by scripts/eval-search.ts; covered by test/node/eval-search-metrics.test.ts.
import { terminalCut, terminalSafe } from "../../local-agent/cli/terminal-text.ts";
import { isSkillTop1, isTop1, rankOf } from "./metrics.ts";
import type { Figures, SearchHit } from "./metrics.ts";
import type { Calibration } from "./calibrate.ts";
import type { RunResult } from "./relay-run.ts";

export interface LabelledRun {
  /** "model" or "lexical". */
  label: string;
  result: RunResult;
}

const QUERY_WIDTH = 60;
const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

/** How the run ranked, in the directory's own words: the model and floor, or why it was lexical. */
export function rankingOf({ label, result }: LabelledRun): string {
  const e = result.embeddings;
  // The lexical run binds no AI, so it is lexical whatever the relay reports.
  if (label === "lexical" || e?.state === "off" || e?.model === null) return "ranked lexically (no embeddings model bound)";
  if (!e) return "the directory reports no embeddings state (an older relay: its ranking is not shown)";
  const floor = e.floor === null ? "no floor" : `floor ${e.floor}`;
  const lexicalWhy = e.state === "uncalibrated" ? ": lexical until the model has a floor (--floor or --calibrate)" : e.state === "ready" ? "" : `: lexical (${e.state})`;
  return `${terminalSafe(e.model)}, ${floor}, ${e.embedded} of ${e.cards} cards embedded${lexicalWhy}`;
}

export function figuresTable(runs: readonly LabelledRun[]): string[] {
  const rows: [string, (f: Figures, n: number) => string][] = [
    ["top-1", (f, n) => `${percent(f.top1)} (${Math.round(f.top1 * n)}/${n})`],
    ["skill top-1", (f, n) => `${percent(f.skill)} (${Math.round(f.skill * n)}/${n})`],
    ["MRR@10", (f) => f.mrr.toFixed(3)],
    ["negatives empty", (f) => `${f.negatives_empty} of ${f.negatives}`],
  ];
  const cell = (text: string) => text.padEnd(20);
  return [
    `${"".padEnd(17)}${runs.map((run) => cell(run.label)).join("")}`.trimEnd(),
    ...rows.map(([name, show]) => `${name.padEnd(17)}${runs.map((run) => cell(show(run.result.figures, run.result.queries.length))).join("")}`.trimEnd()),
    ...runs.map((run) => `${run.label}: ${rankingOf(run)}`),
  ];
}

const hitText = (hit: SearchHit | undefined) => (hit ? `${terminalSafe(hit.name)}/${terminalSafe(hit.best_skill_id ?? "-")} ${hit.score.toFixed(4)}` : "nothing");

/** One line per query and negative: verdict, rank of the expected agent, what came first. */
export function verboseLines(run: LabelledRun): string[] {
  const lines = run.result.queries.map((outcome) => {
    const verdict = isSkillTop1(outcome) ? "ok   " : isTop1(outcome) ? "skill" : "miss ";
    const rank = rankOf(outcome.hits, outcome.query.agent);
    const expected = `${terminalSafe(outcome.query.agent)}/${terminalSafe(outcome.query.skill ?? "-")}`;
    return `[${run.label}] ${verdict} rank ${rank ?? "-"}  ${terminalCut(outcome.query.q, QUERY_WIDTH)}  expected ${expected}, got ${hitText(outcome.hits[0])}`;
  });
  for (const outcome of run.result.negatives) {
    const verdict = outcome.hits.length === 0 ? "ok   " : "leak ";
    lines.push(`[${run.label}] ${verdict} negative  ${terminalCut(outcome.q, QUERY_WIDTH)}  expected nothing, got ${outcome.hits.length === 0 ? "nothing" : outcome.hits.map(hitText).join(", ")}`);
  }
  return lines;
}

export function calibrationLines(calibration: Calibration, model: string): string[] {
  const { highest } = calibration;
  return [
    `calibrating ${terminalSafe(model)}: the highest cosine a negative reaches is ${highest.cosine.toFixed(4)}`,
    `  ${terminalCut(highest.negative, QUERY_WIDTH)} vs ${terminalSafe(highest.agent)}/${terminalSafe(highest.skill ?? "-")}`,
    `suggested floor: EMBEDDING_FLOOR=${calibration.floor} (the figures below are at it)`,
    `queries whose expected skill is below it (found by their words, or not at all): ${calibration.queriesBelowFloor} of ${calibration.queries}`,
  ];
}

/** The last line: the model run's figures, and the lexical run's under "lexical" (the same run with --lexical). */
export function jsonLine(model: Figures, lexical: Figures): string {
  const pick = (f: Figures) => ({ top1: f.top1, skill: f.skill, mrr: f.mrr, negatives_empty: f.negatives_empty, negatives: f.negatives });
  return JSON.stringify({ ...pick(model), lexical: pick(lexical) });
}
