// The summary table bench:agent and bench end with: figure, value, baseline (measured in the same run),
// ratio, the goal, and whether it was met. (bench:directory's, in directory-summary.ts, also checks answers.)
import { fmt, table } from "./stats.ts";

export interface GoalRow {
  figure: string;
  value: string;
  baseline: string;
  /** value ÷ baseline, or null when the figure has no baseline (a size, a count). */
  ratio: number | null;
  goal: string;
  /** null: the figure has no goal (reported only). */
  met: boolean | null;
}

export function printGoalSummary(title: string, rows: readonly GoalRow[]): void {
  console.log(`\n${title}`);
  console.log(
    table([
      ["figure", "value", "baseline (same run)", "ratio", "goal", "met"],
      ...rows.map((r) => [r.figure, r.value, r.baseline, r.ratio === null ? "—" : `${fmt(r.ratio)}×`, r.goal, r.met === null ? "—" : r.met ? "yes" : "NO"]),
    ]),
  );
}
