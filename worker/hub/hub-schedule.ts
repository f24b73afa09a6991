// When a pulling inbox asks its hub next, and what that costs. Each pull is an alarm run (a Durable
// Object request), a GET to the hub and a setAlarm (a row written): at a fixed 15 s that was 5,760 of
// each a day per inbox, and 17 idle inboxes used up the free plan's 100,000 rows. So the wait backs
// off while nothing arrives — 15, 30, 60 … up to the link's pull_interval_sec (default 120 s) — and
// starts over at 15 s when something does. While the agent is connected it holds the hub's WebSocket
// and asks for a pull the moment the hub says there is mail, so latency does not depend on this.
// Pure; used by hub-pull.ts and hub-link.ts (the hub view), covered by test/worker/hub-schedule.test.ts.

export const PULL_FLOOR_MS = 15_000;
const DAY_MS = 86_400_000;

/** The wait before the next pull, given the last wait (null: none known, e.g. after an eviction). */
export function nextPullDelay(previousMs: number | null, found: number, ceilingMs: number): number {
  const floor = Math.min(PULL_FLOOR_MS, ceilingMs);
  if (found > 0) return floor;
  if (previousMs === null) return ceilingMs;
  return Math.min(ceilingMs, Math.max(floor, previousMs * 2));
}

/** What an inbox with nothing arriving costs a day at the ceiling: alarm runs, hub requests, rows written. */
export function idleCostPerDay(ceilingSec: number): { alarms: number; hub_requests: number; rows_written: number } {
  const pulls = Math.ceil(DAY_MS / (ceilingSec * 1000));
  // Plus one token refresh a day (a hub request, and the sealed token written once).
  return { alarms: pulls, hub_requests: pulls + 1, rows_written: pulls + 1 };
}
