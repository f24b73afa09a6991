// What the delivery loop (delivery.ts) is given by the agent that runs it (agent.ts): the gateway to
// post into, the relay's acknowledgement and dead shelf, and hooks. Types only; covered by
// test/node/delivery.e2e.test.ts and gateway-path.test.ts.
import type { Envelope, HubPrefix } from "../../protocol/index.ts";
import type { DeliveryEvent } from "../inspector/delivery-feed.ts";
import type { Logger } from "../logger.ts";
import type { Rejection } from "./delivery-status.ts";
import type { GatewayAnswer, GatewayTarget } from "./gateway-forwarder.ts";
import type { GatewayRequest } from "./hub-format.ts";

export interface DeliveryOptions {
  agentId: string;
  /** Read on every attempt, so a fixed openclaw.json is picked up without a restart. */
  target(): GatewayTarget;
  /** `idempotencyKey` null: a request that must never be answered from the gateway's replay cache. */
  post(target: GatewayTarget, message: GatewayRequest, idempotencyKey: string | null): Promise<GatewayAnswer>;
  ack(id: number): void;
  /** Hands a message the gateway will not take to the relay's dead shelf. */
  reject(id: number, rejection: Rejection): void;
  logger: Logger;
  /** Intercepts an envelope before the gateway (receipts awaited here, tasks); true = handled. */
  intercept?(envelope: Envelope): boolean;
  /** The hub's sub-path prefix for envelopes the relay delivers itself (from `ready`; default agentgram). */
  hubPrefix?(): HubPrefix;
  /** Posts in flight at once across conversations (default 4; 1 = one message at a time). */
  concurrency?: number;
  /** Each outcome as it happens: delivered, rejected to the dead shelf, or retried (delivery-feed.ts). */
  onEvent?(event: DeliveryEvent): void;
}
