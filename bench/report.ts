// The numbers every scenario prints and how: percentiles, rates and formatting, the header (what ran,
// where, with which software), rows of a timed run, and the closing summary against same-run baselines.
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "../scripts/local-workerd.ts";
import type { LoadResult } from "./http-client.ts";

/** Nearest-rank percentile (p in 0..100) of the finite values: a tolerated failure is recorded as NaN. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
}
export const median = (values: readonly number[]) => percentile(values, 50);
export const p50 = median;
export const p99 = (values: readonly number[]) => percentile(values, 99);
export const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
export const mib = (bytes: number) => bytes / 1024 / 1024;
export const rate = (r: LoadResult) => (r.count * 1000) / r.wallMs;
export const range = (values: readonly number[]) => `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;

/** About three significant digits: 1234 -> "1234", 12.345 -> "12.3", 0.01234 -> "0.0123". */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return "n/a";
  const magnitude = Math.abs(value) < 1e-9 ? 0 : Math.floor(Math.log10(Math.abs(value)));
  return value.toFixed(Math.max(0, digits - 1 - magnitude));
}

export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => "  " + row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd()).join("\n");
}

export const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");

export async function printHeader(title: string, nodeNote = ""): Promise<void> {
  const version = async (pkg: string) => (JSON.parse(await readFile(path.join(REPO_ROOT, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
  console.log(`${title}, ${new Date().toISOString()}`);
  console.log(`machine: nproc ${os.availableParallelism()} (${os.cpus()[0]?.model.trim() ?? "unknown CPU"}), ${os.platform()} ${os.release()}, load avg ${loadAverage()}`);
  console.log(`software: Node ${process.version}${nodeNote}, workerd ${await version("workerd")}, miniflare ${await version("miniflare")}, wrangler ${await version("wrangler")}`);
}

export const loadRow = (label: string, r: LoadResult, extra: readonly string[] = []) =>
  [label, String(r.concurrency), String(r.latenciesMs.filter(Number.isFinite).length), fmt(r.wallMs / 1000), fmt(rate(r)), fmt(p50(r.latenciesMs)), fmt(p99(r.latenciesMs)), ...extra];
export const latencyRow = (label: string, concurrency: number, ms: readonly number[]) => [label, String(concurrency), String(ms.length), "", "", fmt(p50(ms)), fmt(p99(ms))];

/** A summary row: `ratio` is value ÷ baseline (null: no baseline); `met` is absent where the figure has no goal. */
export type GoalRow = { figure: string; value: string; baseline: string; ratio: number | null; goal?: string; met?: boolean };
/** A row whose value and baseline share `unit`, e.g. "2.71 ms" against "GET /healthz p50 1.25 ms". */
export const unitRow = (figure: string, value: number, unit: string, baselineName: string, baseline: number, goal?: string, met?: boolean): GoalRow =>
  ({ figure, value: `${fmt(value)} ${unit}`, baseline: `${baselineName} ${fmt(baseline)} ${unit}`, ratio: value / baseline, ...(goal ? { goal } : {}), ...(met === undefined ? {} : { met }) });

export function printGoalSummary(title: string, rows: readonly GoalRow[]): void {
  console.log(`\n${title}`);
  console.log(table([
    ["figure", "value", "baseline (same run)", "ratio", "goal", "met"],
    ...rows.map((r) => [r.figure, r.value, r.baseline, r.ratio === null ? "—" : `${fmt(r.ratio)}×`, r.goal ?? "—", r.met === undefined ? "—" : r.met ? "yes" : "NO"]),
  ]));
}
