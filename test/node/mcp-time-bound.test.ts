// The times `clawrelay mcp`'s tools take (local-agent/mcp/time-bound.ts): ISO 8601 with a zone, or a
// duration back from now; anything else refused with both forms named.
import { describe, expect, it } from "vitest";
import { timeBoundMs } from "../../local-agent/mcp/time-bound.ts";

const NOW = Date.parse("2026-12-07T12:00:00Z");

describe("time bounds of the MCP tools", () => {
  it("reads durations back from now in seconds, minutes, hours and days", () => {
    expect(timeBoundMs("since", "45s", NOW)).toBe(NOW - 45_000);
    expect(timeBoundMs("since", "90m", NOW)).toBe(NOW - 90 * 60_000);
    expect(timeBoundMs("since", " 2h ", NOW)).toBe(NOW - 2 * 3_600_000);
    expect(timeBoundMs("since", "7d", NOW)).toBe(NOW - 7 * 86_400_000);
  });

  it("reads ISO 8601 times with their zone, and a bare date as its UTC midnight", () => {
    expect(timeBoundMs("since", "2026-12-07T05:00:00Z", NOW)).toBe(Date.parse("2026-12-07T05:00:00Z"));
    expect(timeBoundMs("since", "2026-12-07T06:00:00.250+01:00", NOW)).toBe(Date.parse("2026-12-07T05:00:00.250Z"));
    expect(timeBoundMs("until", "2026-12-07", NOW)).toBe(Date.parse("2026-12-07T00:00:00Z"));
  });

  it("refuses a time of day without its zone, a unit it does not know and free text, naming both forms", () => {
    for (const text of ["2026-12-07T05:00:00", "3w", "yesterday", "", "2026-13-40T00:00:00Z"]) {
      expect(() => timeBoundMs("since", text, NOW)).toThrow(/since must be an ISO 8601 time with its zone.*or a duration back from now/);
    }
  });
});
