// What a local app's answer to a forwarded event means, and how long its target waits before the next
// attempt. Pure; imported by forward-delivery.ts. Unlike the gateway's answers (delivery/gateway-
// response.ts) nothing here pauses anything: an app stands for its own source only. 2xx takes the
// event; 408, 429, 5xx, a time-out or a reset retry it and spend one of its retry budget (the source's
// `retries`, protocol/lanes.ts FORWARD_POLICY); a refused connection (nothing listening) retries it and
// spends nothing, since the app never saw it; a redirect or any other 4xx is the event's own fault, so
// it goes to the dead shelf with what the app said (a Stripe event refused for its signature's age
// with the tolerance recipe too: stale-signature.ts). A live request's answer read whole (wholeAnswer) is
// shaped here for both clients that read one. Covered by test/node/forward-delivery.test.ts,
// forward-policy.test.ts, live-app.e2e.test.ts and live-gateway.e2e.test.ts.
import { FORWARD_POLICY } from "../../protocol/index.ts";
import { parseRetryAfter } from "../delivery/gateway-response.ts";
import { staleStripeHint } from "./stale-signature.ts";

export const FORWARD_DEFAULTS = {
  /** After a target's first failure its next attempt goes at once; after the second this, doubling with each failure in a row… */
  firstRetryMs: 250,
  /** …up to this (an app that is off for the night is asked twice a minute). */
  maxRetryMs: 30_000,
  /** A 429's Retry-After is honoured up to this. */
  maxRetryAfterMs: 5 * 60_000,
  /** No answer (headers and body) within this is a failure (the source's timeout_sec, when it has one). */
  timeoutMs: FORWARD_POLICY.timeoutSec * 1000,
} as const;

/** A live request's answer as a whole (AppRequest.keepBodyBytes): what goes back to its sender. */
export interface WholeAnswer {
  /** As the app sent them, names lower-cased, in order. */
  headers: [string, string][];
  /** Up to keepBodyBytes. */
  body: Uint8Array;
  /** The body came to its end (not cut, not broken off). */
  ended: boolean;
  /** The body was longer than keepBodyBytes (the rest was not read). */
  tooLarge: boolean;
}

/** Node's raw header list [name, value, name, value…] as pairs, names lower-cased, in order. */
export function headerPairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!.toLowerCase(), raw[i + 1]!]);
  return out;
}

/**
 * An answer read whole up to `keep` bytes, by either client (app-client.ts, delivery/gateway-forwarder.ts):
 * `body` what was read, `size` the bytes that came, `ended` whether the body came to its end.
 */
export function wholeAnswer(rawHeaders: string[], body: Buffer, size: number, keep: number, ended: boolean): WholeAnswer {
  return { headers: headerPairs(rawHeaders), body: body.subarray(0, keep), ended: ended && size <= keep, tooLarge: size > keep };
}

/** How an attempt to post to the app ended (app-client.ts). */
export type AppAnswer =
  /** The app answered with an HTTP status; `whole` when the request asked for it. */
  | { kind: "answered"; status: number; retryAfter: string | null; location: string | null; detail: string; whole?: WholeAnswer }
  /** No answer (status 0): the connection was refused (nothing listening, refusedConnection), reset, or timed out. */
  | { kind: "unreachable"; detail: string; refusedConnection: boolean }
  /** Never sent, and never will be: the address guard or Node refused the request itself. */
  | { kind: "not_sent"; reason: string };

export type AppOutcome =
  | { kind: "accepted" }
  /** `waitMs`: a Retry-After to honour; null = the target's back-off. `spends`: one of the event's retry budget (not so a refused connection). */
  | { kind: "retry"; reason: string; waitMs: number | null; spends: boolean }
  | { kind: "rejected"; reason: string };

/** The first bytes of an answer as a person reads them: at most 200 characters, whitespace collapsed. */
export function answerDetail(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes.subarray(0, 1024)).replace(/\s+/g, " ").trim().slice(0, 200);
}

/** What was posted, as far as the reason for a refusal needs it: its headers, and its message id for the replay command. */
export interface PostedEvent {
  headers: readonly (readonly [string, string])[];
  id: number | null;
}

export function classifyAppAnswer(answer: AppAnswer, source: string, nowMs = Date.now(), posted: PostedEvent = { headers: [], id: null }): AppOutcome {
  if (answer.kind === "not_sent") return { kind: "rejected", reason: answer.reason };
  if (answer.kind === "unreachable") return { kind: "retry", reason: answer.detail, waitMs: null, spends: !answer.refusedConnection };
  const { status, detail } = answer;
  const what = detail ? `${status}: ${detail}` : String(status);
  if (status >= 200 && status < 300) return { kind: "accepted" };
  if (status === 429) {
    const asked = parseRetryAfter(answer.retryAfter, nowMs);
    return { kind: "retry", reason: `the app answered ${what}`, waitMs: asked === null ? null : Math.min(asked, FORWARD_DEFAULTS.maxRetryAfterMs), spends: true };
  }
  if (status === 408 || status >= 500 || status < 200) return { kind: "retry", reason: `the app answered ${what}`, waitMs: null, spends: true };
  if (status >= 300 && status < 400) {
    const where = answer.location ?? "(no Location header)";
    return { kind: "rejected", reason: `the app redirected to ${where} (${status}); forwarded events do not follow redirects. Forward to that URL: clawrelay sources set ${source} --forward ${where}` };
  }
  const hint = status >= 400 && status < 500 ? staleStripeHint(posted.headers, nowMs, posted.id) : null;
  return { kind: "rejected", reason: `the app refused this event with ${what}${hint ? `. ${hint}` : ""}` };
}

/**
 * The wait before a target's next attempt after `failuresInRow` failures in a row since its last success
 * (1 after the first): at once after the first two (a reset keep-alive connection, an app that refuses
 * one post in ten: two failures in a row are common in a long drain, three are not), then 250 ms doubling
 * to 30 s. The target's, not each event's: a backlog waits one back-off, not one per event. No jitter:
 * one agent posts to one app, there is no crowd to spread out.
 */
export function forwardRetryDelay(failuresInRow: number): number {
  if (failuresInRow <= 2) return 0;
  return Math.min(FORWARD_DEFAULTS.maxRetryMs, FORWARD_DEFAULTS.firstRetryMs * 2 ** (failuresInRow - 3));
}

/** Errors of a connection that never reached an app (nothing listening, no such host): the app did not see the event. */
const NOTHING_THERE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL"]);

export function isRefusedConnection(code: string | undefined): boolean {
  return code !== undefined && NOTHING_THERE.has(code);
}
