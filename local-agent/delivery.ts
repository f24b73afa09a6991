// Takes delivered messages in order and posts each into the gateway; acknowledges to the relay only
// after the gateway accepted it. Transient failures retry the same message (same Idempotency-Key);
// a config error (401, or a 404 the probe blames on hooks) pauses everything and retries rarely; a
// content error (400, 413, other 4xx, a sub-path with no mapping) rejects that one message to the
// relay's dead shelf with a reason a person can act on, and later messages go on.
import { isCanonicalSubpath, utf8 } from "../protocol/index.ts";
import type { DeliveryFrame, Envelope, HubPrefix } from "../protocol/index.ts";
import { DEFAULTS, nextDelay } from "./backoff.ts";
import { PROBE_BODY, PROBE_SUBPATH, classifyGatewayResponse, classifyProbe } from "./gateway-response.ts";
import type { GatewayOutcome } from "./gateway-response.ts";
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

export interface Rejection {
  reason: string;
  /** The gateway's last status (0: unreachable). */
  status: number;
  attempts: number;
}

export interface DeliveryStatus {
  /** The counters below count from here (the process's start): they are not persisted. */
  counted_since: number;
  delivered: number;
  rejected: number;
  last_delivery: DeliveryRecord | null;
  /** Set while a config error holds every message back. */
  paused: string | null;
  /** The latest messages sent to the relay's dead shelf by this process (newest last). */
  recent_rejections: ({ id: number; subpath: string; at: number } & Rejection)[];
  /** The latest failure; cleared by the next delivery. */
  last_error: { id: number; message: string; at: number } | null;
  queued: number;
}

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
}

const RECENT_REJECTIONS = 20;

export function idempotencyKeyFor(agentId: string, id: number): string {
  return `clawrelay:${agentId}:${id}`;
}

export class DeliveryLoop {
  readonly status: DeliveryStatus;
  private readonly queue: DeliveryFrame[] = [];
  private readonly known = new Set<number>();
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private readonly options: DeliveryOptions;

  constructor(options: DeliveryOptions) {
    this.options = options;
    this.status = { counted_since: Date.now(), delivered: 0, rejected: 0, last_delivery: null, paused: null, recent_rejections: [], last_error: null, queued: 0 };
  }

  push(frame: DeliveryFrame): void {
    if (this.stopping || this.known.has(frame.id)) return;
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
      request = gatewayRequestFor(frame, envelope, this.options.hubPrefix?.() ?? "agentgram");
      if (!isCanonicalSubpath(request.subpath)) {
        throw new Error(`its sub-path "${request.subpath.slice(0, 80)}" is not canonical, so it could leave hooks.path; it was not posted`);
      }
    } catch (err) {
      return this.rejectMessage(frame, frame.subpath ?? "", { reason: `cannot turn the message into a gateway request: ${(err as Error).message}`, status: 0, attempts: 0 });
    }
    const key = idempotencyKeyFor(agentId, frame.id);
    for (let attempt = 0; !this.stopping; attempt++) {
      const target = this.options.target();
      let answer: GatewayAnswer;
      try {
        answer = await this.options.post(target, request, key);
      } catch (err) {
        // Refused before anything was sent (the forwarder's own checks): this message can never go.
        return this.rejectMessage(frame, request.subpath, { reason: `not posted: ${(err as Error).message}`, status: 0, attempts: attempt });
      }
      if (this.stopping) return;
      let outcome = classifyGatewayResponse(answer.status, answer.retryAfter, DEFAULTS.defaultRetryAfterMs, answer.detail);
      if (outcome.kind === "not_found") outcome = await this.probe(target, request.subpath, outcome.reason);
      if (this.stopping) return;
      if (outcome.kind === "accepted") return this.accepted(frame, request, answer.status);
      if (outcome.kind === "content_error") return this.rejectMessage(frame, request.subpath, { reason: outcome.reason, status: answer.status, attempts: attempt + 1 });
      const reason = reasonOf(outcome);
      // The relay leaves a message in the agent's hands past its TTL; the agent gives it up here.
      if (Date.now() >= frame.expires_at) {
        return this.rejectMessage(frame, request.subpath, { reason: `ttl_expired while the gateway kept failing: ${reason}`, status: answer.status, attempts: attempt + 1 });
      }
      const wait =
        outcome.kind === "rate_limited" ? outcome.retryAfterMs : outcome.kind === "config_error" ? DEFAULTS.configErrorRetryMs : nextDelay(attempt);
      if (outcome.kind === "config_error") this.status.paused = reason;
      this.status.last_error = { id: frame.id, message: reason, at: Date.now() };
      logger[outcome.kind === "config_error" ? "error" : "warn"]("gateway refused", { id: frame.id, subpath: request.subpath, status: answer.status, error: reason, retry_in_ms: wait });
      await this.sleep(Math.min(wait, Math.max(0, frame.expires_at - Date.now())));
    }
  }

  /** Tells a 404 for an unmapped sub-path from hooks that are off (see classifyProbe). */
  private async probe(target: GatewayTarget, subpath: string, first404: string): Promise<GatewayOutcome> {
    if (subpath === PROBE_SUBPATH) return classifyProbe(404, subpath, target.hooksPath, first404);
    const probe: GatewayRequest = { subpath: PROBE_SUBPATH, contentType: "application/json", body: utf8(PROBE_BODY) };
    const answer = await this.options.post(target, probe, null);
    return classifyProbe(answer.status, subpath, target.hooksPath, first404);
  }

  private accepted(frame: DeliveryFrame, request: GatewayRequest, status: number): void {
    const at = Date.now();
    this.options.ack(frame.id);
    this.status.delivered++;
    this.status.paused = null;
    this.status.last_error = null;
    this.status.last_delivery = { id: frame.id, subpath: request.subpath, status, at, latency_ms: at - frame.received_at };
    this.options.logger.info("delivered", { id: frame.id, subpath: request.subpath, status, latency_ms: at - frame.received_at });
  }

  private rejectMessage(frame: DeliveryFrame, subpath: string, rejection: Rejection): void {
    const at = Date.now();
    this.options.reject(frame.id, rejection);
    this.status.rejected++;
    // A refusal is about this message only: the gateway itself works, so nothing stays paused.
    this.status.paused = null;
    this.status.recent_rejections.push({ id: frame.id, subpath, at, ...rejection });
    if (this.status.recent_rejections.length > RECENT_REJECTIONS) this.status.recent_rejections.shift();
    this.status.last_error = { id: frame.id, message: rejection.reason, at };
    this.options.logger.error("message rejected to the dead shelf", { id: frame.id, subpath, status: rejection.status, error: rejection.reason, next: `clawrelay messages show ${frame.id}` });
  }
}

function reasonOf(outcome: Exclude<GatewayOutcome, { kind: "accepted" | "content_error" }>): string {
  return outcome.kind === "rate_limited" ? `gateway answered 429; waiting ${outcome.retryAfterMs} ms` : outcome.reason;
}
