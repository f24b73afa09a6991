// Reconnect/retry timing: exponential steps with equal jitter, a ceiling, and heartbeat figures that
// notice a half-open socket within about 30 seconds.
import { describe, expect, it } from "vitest";
import { DEFAULTS, nextDelay } from "../../local-agent/backoff.ts";

const options = { initialDelayMs: 100, maxDelayMs: 5_000, factor: 2 };

describe("nextDelay", () => {
  it("grows exponentially: the top of each step doubles", () => {
    const tops = [0, 1, 2, 3, 4].map((attempt) => nextDelay(attempt, () => 1, options));
    expect(tops).toEqual([100, 200, 400, 800, 1600]);
  });

  it("stays within [step/2, step] for any random value", () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const step = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** attempt);
      for (const r of [0, 0.25, 0.5, 0.999, Math.random()]) {
        const delay = nextDelay(attempt, () => r, options);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(step / 2));
        expect(delay).toBeLessThanOrEqual(step);
      }
    }
  });

  it("is capped at maxDelayMs, even for huge attempt counts", () => {
    expect(nextDelay(20, () => 1, options)).toBe(5_000);
    expect(nextDelay(10_000, () => 1, options)).toBe(5_000);
    expect(nextDelay(10_000, () => 0, options)).toBe(2_500);
    expect(nextDelay(1_000, () => 1)).toBe(DEFAULTS.maxDelayMs);
  });

  it("is deterministic with an injected random", () => {
    const seq = () => {
      let i = 0;
      const values = [0.1, 0.7, 0.3];
      return () => values[i++ % values.length]!;
    };
    const a = seq();
    const b = seq();
    const runA = [0, 1, 2, 3].map((n) => nextDelay(n, a, options));
    const runB = [0, 1, 2, 3].map((n) => nextDelay(n, b, options));
    expect(runA).toEqual(runB);
    expect(runA).toEqual([55, 170, 260, 440]);
  });

  it("treats a negative attempt as the first", () => {
    expect(nextDelay(-3, () => 1, options)).toBe(100);
  });

  it("uses DEFAULTS when no options are given", () => {
    expect(nextDelay(0, () => 1)).toBe(DEFAULTS.initialDelayMs);
    expect(nextDelay(0, () => 0)).toBe(DEFAULTS.initialDelayMs / 2);
  });
});

describe("DEFAULTS", () => {
  it("heartbeat deadline is under 30 s and longer than the ping interval", () => {
    expect(DEFAULTS.heartbeatDeadlineMs).toBeLessThan(30_000);
    expect(DEFAULTS.heartbeatIntervalMs).toBeLessThan(DEFAULTS.heartbeatDeadlineMs);
  });

  it("a half-open socket is noticed within ~30 s: the first check past the deadline comes by then", () => {
    // The deadline is checked on each ping tick; the last frame (a pong) arrives just after a tick.
    const ticks = Math.floor(DEFAULTS.heartbeatDeadlineMs / DEFAULTS.heartbeatIntervalMs) + 1;
    expect(ticks * DEFAULTS.heartbeatIntervalMs).toBeLessThanOrEqual(30_000);
  });

  it("the first delay is short and the ceiling bounded", () => {
    expect(DEFAULTS.initialDelayMs).toBeLessThanOrEqual(1_000);
    expect(DEFAULTS.maxDelayMs).toBeLessThanOrEqual(60_000);
    expect(DEFAULTS.factor).toBeGreaterThan(1);
  });
});
