// How long a message the gateway did not take waits before its next attempt, how often a gateway that
// is down is probed, and the reason a person sees meanwhile. Pure; imported by delivery.ts and
// post-slots.ts. Covered by test/node/gateway-outage.e2e.test.ts and gateway-failures.e2e.test.ts.
import { DEFAULTS, nextDelay } from "../backoff.ts";
import type { GatewayOutcome } from "./gateway-response.ts";

/** With no gateway set up (no hooks token), how often a waiting message looks again: a stat of openclaw.json, nothing sent. */
export const NO_GATEWAY_RETRY_MS = 5_000;

/** An outcome that is retried: the gateway neither took the message nor refused its content. */
export type RetriedOutcome = Exclude<GatewayOutcome, { kind: "accepted" | "content_error" }>;

/**
 * `failures`: the message's own transient failures in a row (1 after the first) while the gateway took
 * other posts. A gateway that fails everything is not backed off here, message by message: after
 * DEFAULTS.outageStreak failures in a row it counts as down, and the messages wait for the one probe
 * (post-slots.ts) with no timer of their own. So no message sleeps more than 1 s behind a gateway that
 * takes posts, and the 5 ms–1 s steps only spread out the retries of a message the gateway keeps failing.
 */
export function retryWait(outcome: RetriedOutcome, failures: number): number {
  if (outcome.kind === "rate_limited") return outcome.retryAfterMs;
  if (outcome.kind === "config_error") return DEFAULTS.configErrorRetryMs;
  return nextDelay(failures - 1, Math.random, { initialDelayMs: DEFAULTS.isolatedRetryMs, maxDelayMs: DEFAULTS.maxIsolatedRetryMs, factor: DEFAULTS.factor });
}

/** The wait before probe `probes` (0-based) of an outage that began `downMs` ago: 50, 100, 200, 400, then 500 ms; 5 s after a minute. */
export function probeDelay(probes: number, downMs: number): number {
  if (downMs >= DEFAULTS.probeFastForMs) return DEFAULTS.probeSlowIntervalMs;
  return Math.min(DEFAULTS.probeIntervalMs, DEFAULTS.firstProbeMs * 2 ** probes);
}

/**
 * The most connections an outage of `downMs` can cost: the posts started before it was recognised (those
 * in flight, and one per slot each of the first outageStreak − 1 failures frees), then one per probe.
 * E.g. 20 s at concurrency 4: 8 + 42 = 50.
 */
export function outageAttemptBound(downMs: number, concurrency: number): number {
  let probes = 0;
  for (let at = probeDelay(0, 0); at <= downMs; at += probeDelay(probes, at)) probes++;
  return concurrency + DEFAULTS.outageStreak - 1 + probes;
}

export function reasonOf(outcome: RetriedOutcome): string {
  return outcome.kind === "rate_limited" ? `gateway answered 429; waiting ${outcome.retryAfterMs} ms` : outcome.reason;
}
