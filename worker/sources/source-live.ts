// A verified request to a live source (its live_sec set): sent down the agent's socket and answered with
// the app's answer, or held — stored as any event, answered as today plus x-clawrelay-held — when it carries
// an event and cannot be answered (no agent, an agent too old, earlier events of the source still queued,
// the app unreachable, the deadline passed: then the live request's rid goes with the stored copy, so the
// agent settles it by the answer that came late instead of posting it twice). A GET or HEAD is never stored:
// it is refused at once (503, 504, 502, with Retry-After). The sender's credentials go to an app, never to
// the gateway; a held copy keeps them as any event does (kept-credentials.ts). Used by source-routes.ts; covered by
// test/worker/live-requests.test.ts and test/worker/live-held.test.ts.
import { HELD_HEADER, LIVE, RelayError, isCredentialHeader, sourceLane } from "../../protocol/index.ts";
import type { ForwardMethod, HeldReason, LiveMethod, StoredRequest } from "../../protocol/index.ts";
import type { IntakeContext } from "../intake/intake-context.ts";
import { answeredResponse, liveRefusal } from "../live/live-answer.ts";
import type { LiveAsk, LiveRequests } from "../live/live-requests.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { KeptCredentials } from "./kept-credentials.ts";
import type { StoredSource } from "./source-config.ts";
import { acceptSourceEvent, eventHeaders } from "./source-intake.ts";
import type { VerifiedEvent } from "./source-kinds.ts";

export interface LiveSourceHost {
  readonly live: LiveRequests;
  readonly store: InboxStore;
  readonly keptCredentials: KeptCredentials;
  intake(nowMs?: number): IntakeContext;
}

export interface LiveArrival {
  source: StoredSource;
  liveSec: number;
  event: VerifiedEvent;
  body: Uint8Array;
  contentType: string;
  method: LiveMethod;
  tail: string;
  /** The sender's headers kept (source-request.ts keptHeaders). */
  headers: [string, string][];
}

function askOf(arrival: LiveArrival): LiveAsk {
  const { source, method, tail } = arrival;
  // The app gets the sender's credentials; the gateway never does (kept-credentials.ts).
  const headers = source.forward ? arrival.headers : arrival.headers.filter(([name]) => !isCredentialHeader(name));
  const target: LiveAsk["target"] = source.forward
    ? { source: source.name, target: source.forward.url, allow_public: source.forward.allow_public }
    : { source: source.name, subpath: source.subpath, content_type: arrival.contentType, hook_headers: eventHeaders(source, arrival.event) };
  return {
    to: source.forward ? "app" : "gateway",
    method,
    tail,
    headers,
    body: arrival.body,
    deadlineMs: arrival.liveSec * 1000,
    target,
    holdable: method !== "GET" && method !== "HEAD",
    // The path only: a query (an OAuth callback's) may hold a one-time code.
    log: { source: source.name, path: tail.split("?")[0] || "/" },
  };
}

/** Stores the request as any event of its source, and says why it was held. */
async function hold(host: LiveSourceHost, arrival: LiveArrival, nowMs: number, reason: HeldReason, rid?: string): Promise<Response> {
  const plain: StoredRequest = { method: arrival.method as ForwardMethod, tail: arrival.tail, headers: arrival.headers, ...(rid ? { live_rid: rid } : {}) };
  const { source, event, body, contentType } = arrival;
  const request = await host.keptCredentials.storedJson(plain, source.forward !== null);
  const answer = await acceptSourceEvent(host.intake(nowMs), { source, event, body, contentType, request });
  return Response.json(answer, { status: 200, headers: { [HELD_HEADER]: reason } });
}

export async function receiveLive(host: LiveSourceHost, arrival: LiveArrival, nowMs: number): Promise<Response> {
  if (arrival.body.byteLength > LIVE.requestBodyMaxBytes) {
    throw new RelayError(413, "live_body_too_large", `a live request's body is at most ${LIVE.requestBodyMaxBytes} bytes; this one was ${arrival.body.byteLength}; nothing was stored`);
  }
  const ask = askOf(arrival);
  // Order is kept: while earlier events of the source wait, a later one waits behind them. A GET or HEAD
  // carries no event, so it is answered anyway.
  if (ask.holdable && typeof host.live.socket() !== "string" && host.store.lanes().holds(sourceLane(arrival.source.name))) {
    host.live.note(ask, nowMs, "held", "queued_ahead", null);
    return hold(host, arrival, nowMs, "queued_ahead");
  }
  const result = await host.live.ask(ask);
  switch (result.kind) {
    case "answered":
      return answeredResponse(result, arrival.method);
    case "offline":
    case "agent_too_old":
      if (ask.holdable) return hold(host, arrival, nowMs, result.kind);
      break;
    case "deadline":
      if (ask.holdable) return hold(host, arrival, nowMs, "deadline", result.rid);
      break;
    case "failed":
      if (ask.holdable && result.notSent) return hold(host, arrival, nowMs, "unreachable");
      break;
    case "busy":
      break;
  }
  throw liveRefusal(result, arrival.liveSec);
}
