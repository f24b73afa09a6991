// How long a message the gateway did not take waits before its next attempt, and the reason a person
// sees meanwhile. Pure; imported by delivery.ts. Covered by test/node/gateway-failures.e2e.test.ts.
import { DEFAULTS, nextDelay } from "../backoff.ts";
import type { GatewayOutcome } from "./gateway-response.ts";

/** An outcome that is retried: the gateway neither took the message nor refused its content. */
export type RetriedOutcome = Exclude<GatewayOutcome, { kind: "accepted" | "content_error" }>;

/**
 * `failureStreak` counts transient failures in a row across all posts, reset by any post the gateway
 * takes. Backoff follows it as well as the message's own attempts: a gateway that fails one post in ten
 * but takes the rest is not overloaded, so a lone failure is retried after 50–100 ms and an unlucky
 * message does not wait seconds behind its own streak; a gateway that fails everything gets the full
 * exponential backoff (0.25–0.5 s doubling to 30 s) after that one quick retry.
 */
export function retryWait(outcome: RetriedOutcome, attempt: number, failureStreak: number): number {
  return outcome.kind === "rate_limited"
    ? outcome.retryAfterMs
    : outcome.kind === "config_error"
      ? DEFAULTS.configErrorRetryMs
      : failureStreak <= 1
        ? nextDelay(0, Math.random, { ...DEFAULTS, initialDelayMs: DEFAULTS.isolatedRetryMs })
        : nextDelay(Math.min(attempt, failureStreak - 2));
}

export function reasonOf(outcome: RetriedOutcome): string {
  return outcome.kind === "rate_limited" ? `gateway answered 429; waiting ${outcome.retryAfterMs} ms` : outcome.reason;
}
