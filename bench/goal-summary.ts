// The summary table each bench ends with: figure, value, baseline (measured in the same run), ratio,
// the goal, and whether it was met.
import { table } from "./stats.ts";

export interface GoalRow {
  figure: string;
  value: string;
  baseline: string;
  /** value ÷ baseline, or null when the figure has no baseline (a size, a count). */
  ratio: number | null;
  goal: string;
  met: boolean;
}

export function printGoalSummary(title: string, rows: readonly GoalRow[]): void {
  console.log(`\n${title}`);
  console.log(
    table([
      ["figure", "value", "baseline (same run)", "ratio", "goal", "met"],
      ...rows.map((r) => [r.figure, r.value, r.baseline, r.ratio === null ? "—" : `${r.ratio.toFixed(2)}×`, r.goal, r.met ? "yes" : "NO"]),
    ]),
  );
}
