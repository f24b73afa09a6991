// Takes delivered messages and posts each into the gateway; acknowledges to the relay only after the
// gateway accepted it. Order is kept per conversation (conversation.ts: the hub's sessionKey, else the
// sub-path): a conversation has one message at a time, and up to `concurrency` posts are in flight
// across conversations, so a message that is retrying holds up only its own conversation. A message
// waiting out its backoff holds no post slot. Transient failures retry the same message (same
// Idempotency-Key); a config error (401, or a 404 the probe blames on hooks) pauses every post but the
// failing message's own rare retry (the gateway locks out after 20 bad tokens a minute); a 429 holds
// every post for its Retry-After; a content error (400, 413, other 4xx, a sub-path with no mapping)
// rejects that one message to the relay's dead shelf with a reason a person can act on.
import { isCanonicalSubpath, utf8 } from "../../protocol/index.ts";
import type { DeliveryFrame, Envelope, HubPrefix } from "../../protocol/index.ts";
import { DEFAULTS, nextDelay } from "../backoff.ts";
import { PROBE_BODY, PROBE_SUBPATH, classifyGatewayResponse, classifyProbe } from "./gateway-response.ts";
import type { GatewayOutcome } from "./gateway-response.ts";
import type { GatewayAnswer, GatewayTarget } from "./gateway-forwarder.ts";
import { conversationOf, senderOf } from "./conversation.ts";
import { frameEnvelope, gatewayRequestFor } from "./hub-format.ts";
import type { GatewayRequest } from "./hub-format.ts";
import type { Logger } from "../logger.ts";
import type { DeliveryEvent } from "../inspector/delivery-feed.ts";

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
  /** Taken from the relay and not finished yet (waiting, posting or waiting to retry). */
  queued: number;
  /** Of those, started: their conversation's turn (posting or waiting to retry). */
  in_flight: number;
  /** Posts at most in flight at once. */
  concurrency: number;
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
  /** Posts in flight at once across conversations (default 4; 1 = one message at a time). */
  concurrency?: number;
  /** Each outcome as it happens: delivered, rejected to the dead shelf, or retried (delivery-feed.ts). */
  onEvent?(event: DeliveryEvent): void;
}

const RECENT_REJECTIONS = 20;
export const DEFAULT_CONCURRENCY = 4;

interface Pending {
  frame: DeliveryFrame;
  /** Parsed once; null for a hook frame. */
  envelope: Envelope | null;
  /** Why an envelope frame could not be parsed (deliver() rejects it with this). */
  unreadable: string | null;
  conversation: string;
  /** Who it is from, for a person looking at deliveries (senderOf). */
  sender: string | null;
}

export function idempotencyKeyFor(agentId: string, id: number): string {
  return `clawrelay:${agentId}:${id}`;
}

export class DeliveryLoop {
  readonly status: DeliveryStatus;
  /** Taken, not started, in arrival (id) order. */
  private readonly waiting: Pending[] = [];
  /** Started, by id. */
  private readonly active = new Map<number, Promise<void>>();
  /** Conversations with a started message. */
  private readonly busy = new Set<string>();
  private readonly known = new Set<number>();
  private stopping = false;
  private readonly wakers = new Set<() => void>();
  /** Posts in flight now. */
  private posting = 0;
  /** Messages waiting for a post slot, first come first served. */
  private readonly slotQueue: { id: number; grant: () => void }[] = [];
  /** The message whose config error paused everything: only its retries post until it gets through. */
  private pausedBy: number | null = null;
  /** No post starts before this (a 429's Retry-After). */
  private holdUntil = 0;
  private holdTimer: NodeJS.Timeout | null = null;
  /**
   * Transient failures in a row across all posts, reset by any post the gateway takes. Backoff follows
   * it as well as the message's own attempts: a gateway that fails one post in ten but takes the rest
   * is not overloaded, so a lone failure is retried after 50–100 ms and an unlucky message does not
   * wait seconds behind its own streak; a gateway that fails everything gets the full exponential
   * backoff (0.25–0.5 s doubling to 30 s) after that one quick retry.
   */
  private failureStreak = 0;
  private readonly concurrency: number;
  private readonly options: DeliveryOptions;

  constructor(options: DeliveryOptions) {
    this.options = options;
    this.concurrency = Math.max(1, Math.trunc(options.concurrency ?? DEFAULT_CONCURRENCY) || DEFAULT_CONCURRENCY);
    this.status = {
      counted_since: Date.now(), delivered: 0, rejected: 0, last_delivery: null, paused: null, recent_rejections: [], last_error: null,
      queued: 0, in_flight: 0, concurrency: this.concurrency,
    };
  }

  push(frame: DeliveryFrame): void {
    if (this.stopping || this.known.has(frame.id)) return;
    this.known.add(frame.id);
    let envelope: Envelope | null = null;
    let unreadable: string | null = null;
    try {
      envelope = frameEnvelope(frame);
    } catch (err) {
      unreadable = (err as Error).message;
    }
    const conversation = conversationOf(frame, envelope);
    this.waiting.push({ frame, envelope, unreadable, conversation, sender: senderOf(frame, envelope, conversation) });
    this.startReady();
  }

  /** The relay resends everything unacknowledged after a reconnect: forget what has not started. */
  dropQueued(): void {
    for (const pending of this.waiting.splice(0)) this.known.delete(pending.frame.id);
    this.count();
  }

  /**
   * Stops taking messages. Those in flight get `graceMs` to finish; after that they are abandoned,
   * unacknowledged, and the relay sends them again to the next connection (same Idempotency-Keys).
   */
  async stop(graceMs = 2000): Promise<void> {
    this.stopping = true;
    for (const wake of [...this.wakers]) wake();
    for (const { grant } of this.slotQueue.splice(0)) grant();
    if (this.holdTimer) clearTimeout(this.holdTimer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([...this.active.values()]), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  private count(): void {
    this.status.queued = this.waiting.length + this.active.size;
    this.status.in_flight = this.active.size;
  }

  /** Starts every waiting message whose conversation is free, in arrival order. */
  private startReady(): void {
    for (let i = 0; !this.stopping && i < this.waiting.length; ) {
      const pending = this.waiting[i]!;
      if (this.busy.has(pending.conversation)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.busy.add(pending.conversation);
      const id = pending.frame.id;
      const run = this.deliver(pending)
        .catch((err: unknown) => this.options.logger.error("delivery failed", { id, error: String(err) }))
        .finally(() => {
          this.active.delete(id);
          this.busy.delete(pending.conversation);
          this.known.delete(id);
          this.startReady();
        });
      this.active.set(id, run);
    }
    this.count();
  }

  /** A post slot, when one is free and nothing holds posts (a pause, a 429). */
  private acquire(id: number): Promise<void> {
    if (this.stopping || this.mayPost(id)) {
      this.posting++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.slotQueue.push({ id, grant: resolve }));
  }

  private mayPost(id: number): boolean {
    return this.posting < this.concurrency && (this.pausedBy === null || this.pausedBy === id) && Date.now() >= this.holdUntil;
  }

  private release(): void {
    this.posting--;
    this.grantSlots();
  }

  private grantSlots(): void {
    for (let i = 0; i < this.slotQueue.length && this.posting < this.concurrency; ) {
      const waiter = this.slotQueue[i]!;
      if (!this.mayPost(waiter.id)) {
        // Only the pausing message may pass a pause; others keep their place in line.
        if (Date.now() < this.holdUntil) return;
        i++;
        continue;
      }
      this.slotQueue.splice(i, 1);
      this.posting++;
      waiter.grant();
    }
  }

  private hold(ms: number): void {
    this.holdUntil = Math.max(this.holdUntil, Date.now() + ms);
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => {
      this.holdTimer = null;
      this.grantSlots();
    }, Math.max(0, this.holdUntil - Date.now()));
  }

  private setPausedBy(id: number | null, reason: string | null): void {
    this.pausedBy = id;
    this.status.paused = reason;
    if (id === null) this.grantSlots();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  private async deliver(pending: Pending): Promise<void> {
    const { frame, envelope, unreadable } = pending;
    const { logger, agentId } = this.options;
    let request: GatewayRequest;
    try {
      if (unreadable !== null) throw new Error(unreadable);
      if (envelope && this.options.intercept?.(envelope)) return this.options.ack(frame.id);
      request = gatewayRequestFor(frame, envelope, this.options.hubPrefix?.() ?? "agentgram");
      if (!isCanonicalSubpath(request.subpath)) {
        throw new Error(`its sub-path "${request.subpath.slice(0, 80)}" is not canonical, so it could leave hooks.path; it was not posted`);
      }
    } catch (err) {
      return this.rejectMessage(pending, frame.subpath ?? "", { reason: `cannot turn the message into a gateway request: ${(err as Error).message}`, status: 0, attempts: 0 });
    }
    const key = idempotencyKeyFor(agentId, frame.id);
    for (let attempt = 0; !this.stopping; attempt++) {
      await this.acquire(frame.id);
      if (this.stopping) return this.release();
      const target = this.options.target();
      let answer: GatewayAnswer;
      let outcome: GatewayOutcome;
      try {
        answer = await this.options.post(target, request, key);
        outcome = classifyGatewayResponse(answer.status, answer.retryAfter, DEFAULTS.defaultRetryAfterMs, answer.detail);
        if (outcome.kind === "not_found" && !this.stopping) outcome = await this.probe(target, request.subpath, outcome.reason);
      } catch (err) {
        // Refused before anything was sent (the forwarder's own checks): this message can never go.
        return this.rejectMessage(pending, request.subpath, { reason: `not posted: ${(err as Error).message}`, status: 0, attempts: attempt });
      } finally {
        this.release();
      }
      if (this.stopping) return;
      if (outcome.kind === "accepted" || outcome.kind === "content_error") this.failureStreak = 0;
      if (outcome.kind === "accepted") return this.accepted(pending, request, answer.status, attempt + 1);
      if (outcome.kind === "content_error") return this.rejectMessage(pending, request.subpath, { reason: outcome.reason, status: answer.status, attempts: attempt + 1 });
      const reason = reasonOf(outcome);
      // The relay leaves a message in the agent's hands past its TTL; the agent gives it up here.
      if (Date.now() >= frame.expires_at) {
        return this.rejectMessage(pending, request.subpath, { reason: `ttl_expired while the gateway kept failing: ${reason}`, status: answer.status, attempts: attempt + 1 });
      }
      if (outcome.kind === "transient") this.failureStreak++;
      const wait =
        outcome.kind === "rate_limited"
          ? outcome.retryAfterMs
          : outcome.kind === "config_error"
            ? DEFAULTS.configErrorRetryMs
            : this.failureStreak <= 1
              ? nextDelay(0, Math.random, { ...DEFAULTS, initialDelayMs: DEFAULTS.isolatedRetryMs })
              : nextDelay(Math.min(attempt, this.failureStreak - 2));
      if (outcome.kind === "config_error" && (this.pausedBy === null || this.pausedBy === frame.id)) this.setPausedBy(frame.id, reason);
      // The gateway is refusing this client as a whole: no post of any conversation until it allows.
      if (outcome.kind === "rate_limited") this.hold(wait);
      this.status.last_error = { id: frame.id, message: reason, at: Date.now() };
      this.emit(pending, { outcome: "retrying", subpath: request.subpath, status: answer.status, attempts: attempt + 1, detail: reason });
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

  private emit(pending: Pending, event: Pick<DeliveryEvent, "outcome" | "subpath" | "status" | "attempts" | "detail">): void {
    const { frame } = pending;
    const at = Date.now();
    const message = { content_type: frame.content_type, body: frame.body, encoding: frame.encoding, headers: frame.headers ?? null, kind: frame.kind };
    this.options.onEvent?.({ ...event, id: frame.id, sender: pending.sender, at, latency_ms: at - frame.received_at, message });
  }

  private accepted(pending: Pending, request: GatewayRequest, status: number, attempts: number): void {
    const { frame } = pending;
    const at = Date.now();
    this.options.ack(frame.id);
    this.status.delivered++;
    // The gateway takes posts again: whoever paused everything, the pause is over.
    this.setPausedBy(null, null);
    this.status.last_error = null;
    this.status.last_delivery = { id: frame.id, subpath: request.subpath, status, at, latency_ms: at - frame.received_at };
    this.emit(pending, { outcome: "delivered", subpath: request.subpath, status, attempts, detail: null });
    this.options.logger.info("delivered", { id: frame.id, subpath: request.subpath, status, latency_ms: at - frame.received_at });
  }

  private rejectMessage(pending: Pending, subpath: string, rejection: Rejection): void {
    const { frame } = pending;
    const at = Date.now();
    this.options.reject(frame.id, rejection);
    this.status.rejected++;
    // A gateway's refusal of this message (a 4xx past the token check) shows the gateway works: the
    // pause is over. A message refused before any post (or for a 401 at its TTL) says nothing of that.
    if (rejection.status > 0 && rejection.status !== 401) this.setPausedBy(null, null);
    else if (this.pausedBy === frame.id) this.setPausedBy(null, this.status.paused);
    this.status.recent_rejections.push({ id: frame.id, subpath, at, ...rejection });
    if (this.status.recent_rejections.length > RECENT_REJECTIONS) this.status.recent_rejections.shift();
    this.status.last_error = { id: frame.id, message: rejection.reason, at };
    this.emit(pending, { outcome: "rejected", subpath, status: rejection.status, attempts: rejection.attempts, detail: rejection.reason });
    this.options.logger.error("message rejected to the dead shelf", { id: frame.id, subpath, status: rejection.status, error: rejection.reason, next: `clawrelay messages show ${frame.id}` });
  }
}

function reasonOf(outcome: Exclude<GatewayOutcome, { kind: "accepted" | "content_error" }>): string {
  return outcome.kind === "rate_limited" ? `gateway answered 429; waiting ${outcome.retryAfterMs} ms` : outcome.reason;
}
