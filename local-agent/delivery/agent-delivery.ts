// Delivery, one of the agent's parts (agent.ts): the delivery loop (delivery.ts) with its gateway client,
// the journal of finished ids (delivery-journal.ts, opened first because the relay link reads it too) and
// the feed the inspector and /metrics read (../inspector/delivery-feed.ts). Messages come in through
// push() (and are taken back through abandon()); acks and rejects go out through the relay link; forwarded events go to their apps through the
// forwarding part. Covered by test/node/delivery.e2e.test.ts, journal.e2e.test.ts and retry-now.e2e.test.ts.
import type { AbandonFrame, DeliveryFrame, Envelope } from "../../protocol/index.ts";
import type { AgentStatus } from "../agent-status.ts";
import type { AgentForwarding } from "../forward/agent-forwarding.ts";
import { DeliveryFeed } from "../inspector/delivery-feed.ts";
import type { Logger } from "../logger.ts";
import type { ConnectionState } from "../relay/relay-client.ts";
import type { RelayLink } from "../relay/relay-link.ts";
import type { AgentSettings } from "../settings.ts";
import { DeliveryJournal } from "./delivery-journal.ts";
import type { NoGateway } from "./delivery-options.ts";
import type { HeldCopies } from "./held-copy.ts";
import type { RetryNow } from "./delivery-status.ts";
import { DeliveryLoop } from "./delivery.ts";
import { createGatewayClient } from "./gateway-forwarder.ts";
import type { GatewayTarget } from "./gateway-forwarder.ts";

export interface AgentDeliveryOptions {
  settings: AgentSettings;
  logger: Logger;
  journal: DeliveryJournal | null;
  relay: Pick<RelayLink, "ack" | "reject" | "hubPrefix">;
  /** Where posts go now (../gateway/gateway-watch.ts), asked before every post. */
  target(): GatewayTarget | NoGateway;
  forwarding: AgentForwarding;
  /** Envelopes that are not for the gateway (delegation results, tasks): true = taken. */
  intercept(envelope: Envelope): boolean;
  /** How long a stop lets the posts in flight finish (default 2 s). */
  stopGraceMs?: number;
  /** The feed the inspector reads, shared with the live part (default: one of its own). */
  feed?: DeliveryFeed;
  /** What became of live requests whose held copies come (../live/agent-live.ts). */
  heldCopies?: HeldCopies;
}

export interface AgentDelivery {
  readonly feed: DeliveryFeed;
  push(frame: DeliveryFrame): void;
  /** The relay took a message back (an `abandon` frame): it stops where it is, unacknowledged. */
  abandon(frame: AbandonFrame): void;
  /** The relay link's state: a lost socket drops what has not started (the relay sends it again). */
  relayState(state: ConnectionState): void;
  retryNow(): RetryNow;
  paused(): boolean;
  status(): Omit<AgentStatus["delivery"], "cursor">;
  /** Stops taking messages; the ones in flight get their grace, then are abandoned unacknowledged. */
  stop(): Promise<void>;
  /** Stops, then closes the gateway client and the journal. Idempotent. */
  close(): Promise<void>;
}

/** The journal at `file` (none: the cursor lives in memory only), said when it had to start afresh. */
export function openJournal(file: string | undefined, agentId: string, logger: Logger): DeliveryJournal | null {
  const journal = file ? DeliveryJournal.open(file, { agentId }) : null;
  if (journal?.freshReason) logger.warn("delivery journal started afresh", { path: file ?? null, reason: journal.freshReason });
  return journal;
}

export function startDelivery(options: AgentDeliveryOptions): AgentDelivery {
  const { settings, relay, forwarding } = options;
  const feed = options.feed ?? new DeliveryFeed();
  const gatewayClient = createGatewayClient();
  const loop = new DeliveryLoop({
    agentId: settings.agent_id,
    // Asked before every post: a fixed hooks token or path takes effect on the next message.
    target: () => options.target(),
    post: (target, message, key) => gatewayClient.post(target, message, key),
    postToApp: forwarding.postToApp,
    ack: (id) => relay.ack(id),
    reject: (id, rejection) => relay.reject(id, rejection),
    hubPrefix: () => relay.hubPrefix(),
    ...(settings.delivery_concurrency !== undefined ? { concurrency: settings.delivery_concurrency } : {}),
    logger: options.logger,
    intercept: options.intercept,
    onEvent: (event) => feed.record(event),
    ...(options.heldCopies ? { heldCopies: options.heldCopies } : {}),
  });
  let connected = false;
  let stopping: Promise<void> | null = null;
  let closing: Promise<void> | null = null;
  const stop = () => (stopping ??= loop.stop(options.stopGraceMs));
  return {
    feed,
    push: (frame) => loop.push(frame),
    abandon: (frame) => loop.abandon(frame.id, frame.reason),
    relayState: (state) => {
      if (state === "connected" && !connected) feed.connections++;
      if (state === "disconnected" || state === "replaced") loop.dropQueued();
      connected = state === "connected";
    },
    retryNow: () => loop.retryNow(),
    paused: () => loop.status.paused !== null,
    status: () => ({ ...loop.status, recent_rejections: [...loop.status.recent_rejections], forwards: loop.forwards.status() }),
    stop,
    close: () =>
      (closing ??= (async () => {
        await stop();
        gatewayClient.close();
        options.journal?.close();
      })()),
  };
}
