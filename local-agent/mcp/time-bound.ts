// A time a tool is given (`since`, `until`): an ISO 8601 time with its zone, such as
// 2026-12-07T05:00:00Z, or a duration back from now such as 90m, 2h or 7d. Pure; used by
// mcp-tools-inbox.ts and mcp-tools-actions.ts; covered by test/node/mcp-time-bound.test.ts.
import { AgentError } from "../errors.ts";

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
// A time of day needs its zone: "05:00" alone would mean the relay's zone or the caller's, never both.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Unix milliseconds of `text` (a duration counts back from `nowMs`); an AgentError naming `name` when it is neither form. */
export function timeBoundMs(name: string, text: string, nowMs: number): number {
  const trimmed = text.trim();
  const duration = /^(\d{1,9})([smhd])$/.exec(trimmed);
  if (duration) return nowMs - Number(duration[1]) * UNIT_MS[duration[2]!]!;
  const ms = ISO_TIME.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new AgentError("invalid_time", `${name} must be an ISO 8601 time with its zone, such as 2026-12-07T05:00:00Z, or a duration back from now, such as 90m, 2h or 7d; not "${text.slice(0, 60)}"`);
  }
  return ms;
}
