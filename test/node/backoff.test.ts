// Reconnect/retry timing: exponential steps with equal jitter, a ceiling, and heartbeat figures that
// notice a half-open socket within about 30 seconds; a gateway post's retries, probes and outage bound.
import { describe, expect, it } from "vitest";
import { DEFAULTS, nextDelay } from "../../local-agent/backoff.ts";
import { outageAttemptBound, probeDelay, retryWait } from "../../local-agent/delivery/retry-wait.ts";

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

describe("retries of a gateway post (local-agent/delivery/retry-wait.ts)", () => {
  const transient = { kind: "transient", reason: "503" } as const;

  it("a message's transient failures wait 5–10 ms, doubling with its own failures, never past 1 s", () => {
    for (let failures = 1; failures < 40; failures++) {
      const step = Math.min(DEFAULTS.maxIsolatedRetryMs, DEFAULTS.isolatedRetryMs * 2 ** (failures - 1));
      const wait = retryWait(transient, failures);
      expect(wait).toBeGreaterThanOrEqual(step / 2);
      expect(wait).toBeLessThanOrEqual(Math.min(step, 1000));
    }
    expect(retryWait({ kind: "rate_limited", retryAfterMs: 1234 }, 9)).toBe(1234);
    expect(retryWait({ kind: "config_error", reason: "401" }, 1)).toBe(DEFAULTS.configErrorRetryMs);
  });

  it("a gateway that is down is probed after 50, 100, 200, 400 ms, then every 500 ms, and every 5 s after a minute", () => {
    expect([0, 1, 2, 3, 4, 5, 50].map((probes) => probeDelay(probes, 1000))).toEqual([50, 100, 200, 400, 500, 500, 500]);
    expect(probeDelay(4, 59_999)).toBe(500);
    expect(probeDelay(4, 60_000)).toBe(5000);
  });

  it("bounds the connections an outage costs: those under way when it is recognised, then one per probe", () => {
    expect(outageAttemptBound(0, 4)).toBe(8);
    expect(outageAttemptBound(750, 4)).toBe(12);
    expect(outageAttemptBound(20_000, 4)).toBe(50);
    expect(outageAttemptBound(60_000, 1)).toBe(5 + 122);
    // After a minute, one every 5 s: 720 an hour.
    expect(outageAttemptBound(3_600_000, 4) - outageAttemptBound(60_000, 4)).toBeLessThanOrEqual(3_540_000 / 5000 + 1);
  });
});
