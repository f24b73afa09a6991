// Takes delivered messages in order and posts each into the gateway; acknowledges to the relay only
// after the gateway accepted it. Transient failures retry the same message (same Idempotency-Key);
// a config error (401/404) pauses everything and retries rarely; a content error (400, 413, other
// 4xx) sets that one message aside, unacknowledged on the relay, and later messages go on.
import type { DeliveryFrame, Envelope } from "../protocol/index.ts";
import { DEFAULTS, nextDelay } from "./backoff.ts";
import { classifyGatewayResponse } from "./gateway-response.ts";
import type { GatewayAnswer, GatewayTarget } from "./gateway-forwarder.ts";
import { frameEnvelope, gatewayRequestFor } from "./hub-format.ts";
import type { GatewayRequest } from "./hub-format.ts";
import type { Logger } from "./logger.ts";

export interface DeliveryRecord {
  id: number;
  subpath: string;
  status: number;
  at: number;
  /** Relay receipt to gateway accept. */
  latency_ms: number;
}

export interface DeliveryStatus {
  delivered: number;
  last_delivery: DeliveryRecord | null;
  /** Set while a config error holds every message back. */
  paused: string | null;
  /** Messages the gateway refused for their content: kept unacknowledged on the relay. */
  set_aside: { id: number; reason: string }[];
  last_error: string | null;
  queued: number;
}

export interface DeliveryOptions {
  agentId: string;
  /** Read on every attempt, so a fixed openclaw.json is picked up without a restart. */
  target(): GatewayTarget;
  post(target: GatewayTarget, message: GatewayRequest, idempotencyKey: string): Promise<GatewayAnswer>;
  ack(id: number): void;
  logger: Logger;
  /** Intercepts an envelope before the gateway (receipts awaited here, tasks); true = handled. */
  intercept?(envelope: Envelope): boolean;
}

export function idempotencyKeyFor(agentId: string, id: number): string {
  return `clawrelay:${agentId}:${id}`;
}

export class DeliveryLoop {
  readonly status: DeliveryStatus = { delivered: 0, last_delivery: null, paused: null, set_aside: [], last_error: null, queued: 0 };
  private readonly queue: DeliveryFrame[] = [];
  private readonly known = new Set<number>();
  private readonly setAside = new Set<number>();
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private readonly options: DeliveryOptions;

  constructor(options: DeliveryOptions) {
    this.options = options;
  }

  push(frame: DeliveryFrame): void {
    if (this.stopping || this.known.has(frame.id) || this.setAside.has(frame.id)) return;
    this.known.add(frame.id);
    this.queue.push(frame);
    this.status.queued = this.queue.length;
    this.running ??= this.run().finally(() => (this.running = null));
  }

  /** The relay resends everything unacknowledged after a reconnect: forget what has not started. */
  dropQueued(): void {
    const inFlight = this.queue[0];
    for (const frame of this.queue.splice(inFlight ? 1 : 0)) this.known.delete(frame.id);
    this.status.queued = this.queue.length;
  }

  /**
   * Stops taking messages. The one in flight gets `graceMs` to finish; after that it is abandoned,
   * unacknowledged, and the relay sends it again to the next connection (same Idempotency-Key).
   */
  async stop(graceMs = 2000): Promise<void> {
    this.stopping = true;
    this.wake?.();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    while (!this.stopping && this.queue.length > 0) {
      const frame = this.queue[0]!;
      await this.deliver(frame);
      if (this.queue[0] === frame) this.queue.shift();
      this.known.delete(frame.id);
      this.status.queued = this.queue.length;
    }
  }

  private async deliver(frame: DeliveryFrame): Promise<void> {
    const { logger, agentId } = this.options;
    let request: GatewayRequest;
    try {
      const envelope = frameEnvelope(frame);
      if (envelope && this.options.intercept?.(envelope)) return this.options.ack(frame.id);
      request = gatewayRequestFor(frame, envelope);
    } catch (err) {
      return this.putAside(frame, `cannot turn message into a gateway request: ${(err as Error).message}`);
    }
    const key = idempotencyKeyFor(agentId, frame.id);
    for (let attempt = 0; !this.stopping; attempt++) {
      const target = this.options.target();
      const answer = await this.options.post(target, request, key);
      if (this.stopping) return;
      const outcome = classifyGatewayResponse(answer.status, answer.retryAfter, DEFAULTS.defaultRetryAfterMs, answer.detail);
      if (outcome.kind === "accepted") {
        const at = Date.now();
        this.options.ack(frame.id);
        this.status.delivered++;
        this.status.paused = null;
        this.status.last_delivery = { id: frame.id, subpath: request.subpath, status: answer.status, at, latency_ms: at - frame.received_at };
        logger.info("delivered", { id: frame.id, subpath: request.subpath, status: answer.status, latency_ms: at - frame.received_at });
        return;
      }
      if (outcome.kind === "content_error") return this.putAside(frame, outcome.reason);
      const reason = outcome.kind === "rate_limited" ? `gateway answered 429; waiting ${outcome.retryAfterMs} ms` : outcome.reason;
      const wait =
        outcome.kind === "rate_limited" ? outcome.retryAfterMs : outcome.kind === "config_error" ? DEFAULTS.configErrorRetryMs : nextDelay(attempt);
      if (outcome.kind === "config_error") this.status.paused = outcome.reason;
      this.status.last_error = reason;
      logger[outcome.kind === "config_error" ? "error" : "warn"]("gateway refused", { id: frame.id, subpath: request.subpath, status: answer.status, error: reason, retry_in_ms: wait });
      await this.sleep(wait);
    }
  }

  private putAside(frame: DeliveryFrame, reason: string): void {
    this.setAside.add(frame.id);
    this.status.set_aside.push({ id: frame.id, reason });
    this.status.last_error = reason;
    this.options.logger.error("message set aside", { id: frame.id, error: reason, note: "kept unacknowledged on the relay" });
  }
}
