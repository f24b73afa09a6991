// What the sender of a live request is answered: the app's answer (status, its headers through answerHeaders
// — hop-by-hop ones and cookies left out — plus a sandboxing Content-Security-Policy, since every inbox
// shares the relay's origin), or the relay's refusal when there was none to give (503 offline, 504 after the
// deadline, 502 when the app could not be reached or answered too much, 429 when too many wait), each with
// Retry-After. Used by sources/source-live.ts and a2a/a2a-routes.ts; covered by test/worker/live-requests.test.ts.
import { ANSWER_CSP, RelayError, answerHeaders } from "../../protocol/index.ts";
import type { LiveResult } from "./live-requests.ts";

/** Statuses whose response has no body (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function answeredResponse(result: Extract<LiveResult, { kind: "answered" }>, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of answerHeaders(result.headers)) headers.append(name, value);
  headers.set("content-security-policy", ANSWER_CSP);
  const body = method === "HEAD" || NULL_BODY.has(result.status) ? null : result.body;
  return new Response(body, { status: result.status, headers });
}

export const OFFLINE_RETRY_SEC = 30;
export const DEADLINE_RETRY_SEC = 5;

/** The refusal of a live request that was not answered and is not held (a GET or HEAD, an A2A call, a failure). */
export function liveRefusal(result: Exclude<LiveResult, { kind: "answered" }>, deadlineSec: number): RelayError {
  const retry = (sec: number) => ({ "retry-after": String(sec) });
  switch (result.kind) {
    case "offline":
      return new RelayError(503, "agent_offline", `no agent is connected to this inbox to answer live; nothing was stored: retry after ${OFFLINE_RETRY_SEC} s`, retry(OFFLINE_RETRY_SEC));
    case "agent_too_old":
      return new RelayError(503, "agent_too_old", `the connected agent does not answer live requests (update clawrelay on its machine); nothing was stored: retry after ${OFFLINE_RETRY_SEC} s`, retry(OFFLINE_RETRY_SEC));
    case "busy":
      return new RelayError(429, "too_many_live_requests", "this inbox has as many live requests waiting for an answer as it takes; nothing was stored: retry in a second", retry(1));
    case "deadline":
      return new RelayError(504, "deadline_passed", `the app did not answer within ${deadlineSec} s; nothing was stored: retry after ${DEADLINE_RETRY_SEC} s`, retry(DEADLINE_RETRY_SEC));
    case "failed":
      return result.notSent
        ? new RelayError(502, "app_unreachable", `the agent could not reach the app: ${result.message}; nothing was stored: retry after ${DEADLINE_RETRY_SEC} s`, retry(DEADLINE_RETRY_SEC))
        : new RelayError(502, result.code, `the app's answer could not be passed back: ${result.message}`, retry(DEADLINE_RETRY_SEC));
  }
}
