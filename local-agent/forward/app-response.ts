// What a local app's answer to a forwarded event means, and how long the event waits before the next
// attempt. Pure; imported by forward-delivery.ts. Unlike the gateway's answers (delivery/gateway-
// response.ts) nothing here pauses anything: an app stands for its own source only. 2xx takes the
// event; 408, 429, 5xx and no answer at all retry it (nothing is lost, order is kept); a redirect or
// any other 4xx is the event's own fault, so it goes to the dead shelf with what the app said.
// Covered by test/node/forward-delivery.test.ts.
import { parseRetryAfter } from "../delivery/gateway-response.ts";

export const FORWARD_DEFAULTS = {
  /** The first retry after a failure, doubling with each failure in a row… */
  firstRetryMs: 250,
  /** …up to this… */
  maxRetryMs: 5_000,
  /** …and, once the target has been failing this long, this (an app that is off for the night). */
  slowAfterMs: 5 * 60_000,
  slowRetryMs: 30_000,
  /** A 429's Retry-After is honoured up to this. */
  maxRetryAfterMs: 5 * 60_000,
  /** No answer (headers and body) within this is a failure, retried like a refused connection. */
  timeoutMs: 30_000,
} as const;

/** How an attempt to post to the app ended (app-client.ts). */
export type AppAnswer =
  /** The app answered with an HTTP status. */
  | { kind: "answered"; status: number; retryAfter: string | null; location: string | null; detail: string }
  /** No answer: the connection was refused, reset, or timed out (status 0). */
  | { kind: "unreachable"; detail: string; refusedConnection: boolean }
  /** Never sent, and never will be: the address guard or Node refused the request itself. */
  | { kind: "not_sent"; reason: string };

export type AppOutcome =
  | { kind: "accepted" }
  /** `waitMs`: a Retry-After to honour; null = the usual backoff. */
  | { kind: "retry"; reason: string; waitMs: number | null }
  | { kind: "rejected"; reason: string };

/** The first bytes of an answer as a person reads them: at most 200 characters, whitespace collapsed. */
export function answerDetail(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes.subarray(0, 1024)).replace(/\s+/g, " ").trim().slice(0, 200);
}

export function classifyAppAnswer(answer: AppAnswer, source: string, nowMs = Date.now()): AppOutcome {
  if (answer.kind === "not_sent") return { kind: "rejected", reason: answer.reason };
  if (answer.kind === "unreachable") return { kind: "retry", reason: answer.detail, waitMs: null };
  const { status, detail } = answer;
  const what = detail ? `${status}: ${detail}` : String(status);
  if (status >= 200 && status < 300) return { kind: "accepted" };
  if (status === 429) {
    const asked = parseRetryAfter(answer.retryAfter, nowMs);
    return { kind: "retry", reason: `the app answered ${what}`, waitMs: asked === null ? null : Math.min(asked, FORWARD_DEFAULTS.maxRetryAfterMs) };
  }
  if (status === 408 || status >= 500 || status < 200) return { kind: "retry", reason: `the app answered ${what}`, waitMs: null };
  if (status >= 300 && status < 400) {
    const where = answer.location ?? "(no Location header)";
    return { kind: "rejected", reason: `the app redirected to ${where} (${status}); forwarded events do not follow redirects. Forward to that URL: clawrelay sources set ${source} --forward ${where}` };
  }
  return { kind: "rejected", reason: `the app refused this event with ${what}` };
}

/**
 * The wait before the next attempt after `failures` failures in a row (1 after the first): 250 ms
 * doubling to 5 s, and 30 s once the target has been failing for `failingForMs` ≥ 5 minutes. No jitter:
 * one agent posts to one app, there is no crowd to spread out.
 */
export function forwardRetryDelay(failures: number, failingForMs: number): number {
  if (failingForMs >= FORWARD_DEFAULTS.slowAfterMs) return FORWARD_DEFAULTS.slowRetryMs;
  return Math.min(FORWARD_DEFAULTS.maxRetryMs, FORWARD_DEFAULTS.firstRetryMs * 2 ** Math.max(0, failures - 1));
}
