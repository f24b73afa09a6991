// What the delivery loop (delivery.ts) is given by the agent that runs it (agent.ts): the gateway to
// post into, the local apps forwarded events go to, the relay's acknowledgement and dead shelf, and
// hooks. Types only; covered by test/node/delivery.e2e.test.ts, gateway-path.test.ts and
// forward-delivery.test.ts.
import type { Envelope, HubPrefix } from "../../protocol/index.ts";
import type { DeliveryEvent } from "../inspector/delivery-feed.ts";
import type { AppRequest } from "../forward/app-client.ts";
import type { AppAnswer } from "../forward/app-response.ts";
import type { Logger } from "../logger.ts";
import type { Rejection } from "./delivery-status.ts";
import type { HeldCopies } from "./held-copy.ts";
import type { GatewayAnswer, GatewayTarget } from "./gateway-forwarder.ts";
import type { GatewayRequest } from "./hub-format.ts";

/**
 * The loop's own waits: the production values (each named below) unless a test shortens them, so a
 * test of what happens after a wait does not sit through it.
 */
export interface DeliveryTimings {
  /** With no gateway set up (no hooks token), how often a waiting message looks again (retry-wait.ts NO_GATEWAY_RETRY_MS). */
  noGatewayRetryMs: number;
  /** The wait before a forward target's next attempt after `failuresInRow` failures in a row (forward/app-response.ts forwardRetryDelay). */
  forwardRetryDelay(failuresInRow: number): number;
}

/** No gateway to post to (no hooks token anywhere): why, in words a person can act on. */
export interface NoGateway {
  problem: string;
}

export interface DeliveryOptions {
  agentId: string;
  /**
   * Read on every attempt, so a fixed openclaw.json is picked up without a restart. NoGateway: the
   * gateway-bound messages wait (paused, with the problem) while forwarded ones go on.
   */
  target(): GatewayTarget | NoGateway;
  /** `idempotencyKey` null: a request that must never be answered from the gateway's replay cache. */
  post(target: GatewayTarget, message: GatewayRequest, idempotencyKey: string | null): Promise<GatewayAnswer>;
  /** Posts a forwarded event to its local app (forward/app-client.ts; `signal`: the relay abandoned it); default: a client of the loop's own. */
  postToApp?(request: AppRequest, signal?: AbortSignal): Promise<AppAnswer>;
  ack(id: number): void;
  /** Hands a message the gateway will not take to the relay's dead shelf. */
  reject(id: number, rejection: Rejection): void;
  logger: Logger;
  /** Intercepts an envelope before the gateway (receipts awaited here, tasks); true = handled. */
  intercept?(envelope: Envelope): boolean;
  /** The hub's sub-path prefix for envelopes the relay delivers itself (from `ready`; default agentgram). */
  hubPrefix?(): HubPrefix;
  /** Gateway posts in flight at once across conversations (default 4; 1 = one message at a time); an unordered forwarding source's at once. */
  concurrency?: number;
  /** Each outcome as it happens: delivered, rejected to the dead shelf, or retried (delivery-feed.ts). */
  onEvent?(event: DeliveryEvent): void;
  /** What became of the live requests whose held copies come with `live_rid` (../live/); none: every copy is posted. */
  heldCopies?: HeldCopies;
  /** Shorter waits for tests; each one left out is the production value. */
  timings?: Partial<DeliveryTimings>;
}
