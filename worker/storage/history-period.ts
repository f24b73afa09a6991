// How long one history table covers (history-store.ts): a UTC day, h_<yyyymmdd>, unless the Worker var
// HISTORY_PERIOD_MS says otherwise — for tests only, so an end-to-end test sees the alarm let a period go
// (test/node/mcp-server.e2e.test.ts); production never sets it. A shorter period's tables are named by
// the UTC time it starts at, h_<yyyymmddHHMMSSmmm>, so keys of one width sort by time. A key is made only
// from a number (a time in ms), and checked again before it names a table. Dedup's day tables
// (dedup-days.ts) never use it: the dedup window stays what it is. Read once per isolate from the
// Worker's env (cloudflare:workers). Covered by test/worker/history.test.ts.
import { env } from "cloudflare:workers";
import { DAY_MS, dayOf, dayStartMs } from "./utc-day.ts";

export interface HistoryPeriod {
  ms: number;
  /** The key of the period holding this time: the suffix of its table's name. */
  keyOf(timeMs: number): string;
  /** When the period of this key starts (ms). */
  startMs(key: string): number;
}

/** The Worker var that shortens the period (a string, as vars are); unset in production. */
export interface HistoryPeriodVars {
  HISTORY_PERIOD_MS?: string;
}

export const UTC_DAYS: HistoryPeriod = { ms: DAY_MS, keyOf: dayOf, startMs: dayStartMs };

function periodOf(ms: number): HistoryPeriod {
  return {
    ms,
    keyOf: (timeMs) => new Date(Math.floor(timeMs / ms) * ms).toISOString().replace(/[^0-9]/g, "").padEnd(17, "0").slice(0, 17),
    startMs: (key) =>
      Date.UTC(Number(key.slice(0, 4)), Number(key.slice(4, 6)) - 1, Number(key.slice(6, 8)), Number(key.slice(8, 10)), Number(key.slice(10, 12)), Number(key.slice(12, 14)), Number(key.slice(14, 17))),
  };
}

/** The var's period (1 ms up to a day), or UTC days when unset; a value that is no such number is refused loudly. */
export function historyPeriodFrom(vars: HistoryPeriodVars): HistoryPeriod {
  const raw = vars.HISTORY_PERIOD_MS;
  if (raw === undefined || raw === "") return UTC_DAYS;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > DAY_MS) {
    throw new Error(`Worker var HISTORY_PERIOD_MS must be a whole number of milliseconds from 1 to ${DAY_MS}, not ${JSON.stringify(raw)}`);
  }
  return ms === DAY_MS ? UTC_DAYS : periodOf(ms);
}

/** A history table's name, from a checked key only (never a request's text). */
export function periodTableName(key: string): string {
  if (!/^[0-9]{8}(?:[0-9]{9})?$/.test(key)) throw new Error(`"${key}" is not a history period`);
  return `h_${key}`;
}

let period: HistoryPeriod | null = null;

export function historyPeriod(): HistoryPeriod {
  period ??= historyPeriodFrom(env as HistoryPeriodVars);
  return period;
}
