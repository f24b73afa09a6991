// The pull schedule's arithmetic: back off while nothing arrives, start over when something does,
// and what an idle pulling inbox costs a day (docs/operations.md quotes these figures).
import { describe, expect, it } from "vitest";
import { PULL_FLOOR_MS, idleCostPerDay, nextPullDelay } from "../../worker/hub/hub-schedule.ts";

describe("the pull schedule", () => {
  it("doubles from 15 s while pulls find nothing, up to the ceiling, and drops back when one finds something", () => {
    const ceiling = 120_000;
    const waits: number[] = [];
    let delay: number | null = PULL_FLOOR_MS;
    for (let i = 0; i < 5; i++) waits.push((delay = nextPullDelay(delay, 0, ceiling)));
    expect(waits).toEqual([30_000, 60_000, 120_000, 120_000, 120_000]);
    expect(nextPullDelay(120_000, 3, ceiling)).toBe(PULL_FLOOR_MS);
  });

  it("starts at the ceiling when it knows no previous wait (after an eviction), and never goes below a short ceiling", () => {
    expect(nextPullDelay(null, 0, 120_000)).toBe(120_000);
    expect(nextPullDelay(null, 1, 5_000)).toBe(5_000);
    expect(nextPullDelay(5_000, 0, 5_000)).toBe(5_000);
  });

  it("keeps an idle inbox under 1,000 requests and row writes a day at the default ceiling", () => {
    expect(idleCostPerDay(120)).toEqual({ alarms: 720, hub_requests: 721, rows_written: 721 });
    expect(idleCostPerDay(15).rows_written).toBe(5761);
  });
});
