// Live requests, one of the agent's parts (agent.ts): each `request` frame the relay link hands on is
// answered on its own, at once — never queued behind deliveries, whatever the lanes hold — by
// live-requests.ts, and its answer goes back up as `answer` frames (answer-frames.ts). Its outcome is
// remembered (live-outcomes.ts) so that a held copy of it settles by it (the delivery loop asks through
// heldCopies), and shown in the inspector's feed (kind "live": method, path without its query, status,
// duration; never a body). An answer that finds the socket gone is dropped: the relay held the request or
// told its sender. Covered by test/node/live-app.e2e.test.ts, live-compat.e2e.test.ts and live-gateway.e2e.test.ts.
import type { LiveRequestFrame } from "../../protocol/index.ts";
import type { AgentStatus } from "../agent-status.ts";
import { createGatewayClient } from "../delivery/gateway-forwarder.ts";
import type { HeldCopies } from "../delivery/held-copy.ts";
import type { AgentForwarding } from "../forward/agent-forwarding.ts";
import type { GatewayWatch } from "../gateway/gateway-watch.ts";
import type { DeliveryFeed } from "../inspector/delivery-feed.ts";
import type { Logger } from "../logger.ts";
import type { RelayLink } from "../relay/relay-link.ts";
import { answerFrames, failedFrame } from "./answer-frames.ts";
import { LiveOutcomes } from "./live-outcomes.ts";
import { answerLiveRequest } from "./live-requests.ts";
import type { LiveResult } from "./live-requests.ts";

export interface AgentLiveOptions {
  agentId: string;
  logger: Logger;
  relay: Pick<RelayLink, "send">;
  forwarding: Pick<AgentForwarding, "postToApp">;
  gateway: Pick<GatewayWatch, "target" | "settings">;
  feed: DeliveryFeed;
}

export interface AgentLive {
  /** Answers a request frame; returns at once. */
  handle(frame: LiveRequestFrame): void;
  readonly heldCopies: HeldCopies;
  status(): NonNullable<AgentStatus["live"]>;
  /** Gives up the requests under way and closes the gateway client. Idempotent. */
  close(): void;
}

/** The path a person may see: the tail without its query (an OAuth callback's holds a one-time code). */
export function shownPath(frame: LiveRequestFrame): string {
  const path = frame.tail.split("?")[0] ?? "";
  return frame.to === "gateway" ? `/${frame.subpath ?? ""}` : path === "" ? "/" : path;
}

export function startLive(options: AgentLiveOptions): AgentLive {
  const { logger, relay, feed } = options;
  const outcomes = new LiveOutcomes();
  const gatewayClient = createGatewayClient();
  const running = new Set<AbortController>();
  const counts: Omit<NonNullable<AgentStatus["live"]>, "in_flight"> = { answered: 0, failed: 0, last: null };
  /** Live rows in the feed take negative ids: they are no inbox message's. */
  let feedId = 0;
  const targets = {
    agentId: options.agentId,
    postToApp: options.forwarding.postToApp,
    postToGateway: gatewayClient.post,
    gatewayTarget: () => options.gateway.target(),
    gatewayPort: () => options.gateway.settings().port,
  };

  const finish = (frame: LiveRequestFrame, result: LiveResult, startedAt: number) => {
    const durationMs = Date.now() - startedAt;
    const frames = result.kind === "answered" ? answerFrames(frame.rid, result.status, result.headers, result.body) : [failedFrame(frame.rid, result.failure)];
    // Frame after frame while the socket holds: one that cannot go means the rest cannot either.
    const sent = frames.every((f) => relay.send(f));
    const { status } = result;
    outcomes.settle(frame.rid, { status, detail: result.kind === "failed" ? result.failure.message : "", failure: result.kind === "failed" ? result.failure.code : null });
    const path = shownPath(frame);
    counts[result.kind === "answered" ? "answered" : "failed"]++;
    counts.last = { at: Date.now(), method: frame.method, path, status, duration_ms: durationMs, to: frame.to };
    const detail = result.kind === "failed" ? `${result.failure.code}: ${result.failure.message}` : sent ? null : "answered after the relay's socket closed: the relay held it or told its sender";
    feed.record({ kind: "live", outcome: result.kind === "answered" ? "delivered" : "rejected", id: --feedId, subpath: path, sender: frame.source ?? frame.to, status: status ?? 0, method: frame.method, at: Date.now(), latency_ms: durationMs, attempts: 1, detail });
    const fields = { rid: frame.rid, to: frame.to, source: frame.source ?? null, method: frame.method, path, status, duration_ms: durationMs, sent };
    if (result.kind === "answered") logger.info("live request answered", fields);
    else logger.warn("live request failed", { ...fields, code: result.failure.code, error: result.failure.message, not_sent: result.failure.not_sent });
  };

  const handle = (frame: LiveRequestFrame) => {
    const startedAt = Date.now();
    const abort = new AbortController();
    outcomes.begin(frame.rid);
    running.add(abort);
    void answerLiveRequest(frame, targets, abort.signal)
      .then((result) => finish(frame, result, startedAt))
      .catch((err: unknown) => logger.error("live request failed in the agent", { rid: frame.rid, error: String(err) }))
      .finally(() => {
        running.delete(abort);
        // Settled already, unless the agent itself failed: then its held copy is posted as usual.
        outcomes.settle(frame.rid, { status: null, detail: "the agent failed to answer it", failure: "unreachable" });
      });
  };

  let closed = false;
  return {
    handle,
    heldCopies: { verdict: (rid, messageId) => outcomes.verdict(rid, messageId) },
    status: () => ({ answered: counts.answered, failed: counts.failed, in_flight: running.size, last: counts.last ? { ...counts.last } : null }),
    close: () => {
      if (closed) return;
      closed = true;
      for (const abort of running) abort.abort();
      gatewayClient.close();
    },
  };
}
