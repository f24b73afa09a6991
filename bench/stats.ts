// Percentiles and number formatting for the figures the benches print.
import type { LoadResult } from "./http-client.ts";

/** Nearest-rank percentile (p in 0..100) of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** p50 and p99 of the operations that succeeded: a tolerated failure is recorded as NaN. */
export const p50 = (values: readonly number[]) => percentile(values.filter(Number.isFinite), 50);
export const p99 = (values: readonly number[]) => percentile(values.filter(Number.isFinite), 99);

/** Operations per second over a run's wall time. */
export const rate = (r: LoadResult) => (r.count * 1000) / r.wallMs;

/** "min–max" of the values. */
export const range = (values: readonly number[]) => `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;

/** A number with `digits` significant-ish decimals: 1234 -> "1234", 12.345 -> "12.3", 0.01234 -> "0.0123". */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return "n/a";
  const magnitude = Math.abs(value) < 1e-9 ? 0 : Math.floor(Math.log10(Math.abs(value)));
  const decimals = Math.max(0, digits - 1 - magnitude);
  return value.toFixed(decimals);
}

/** Left-aligned first column, right-aligned numbers, two spaces between columns. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  "))
    .map((line) => "  " + line.trimEnd())
    .join("\n");
}
