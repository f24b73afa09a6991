// Takes delivered messages and posts each into the gateway; acknowledges to the relay only after the
// gateway accepted it. Order is kept per lane (conversation-line.ts; the relay names each frame's lane,
// an older relay none, and then the agent's own conversation stands in): one message at a time each, up
// to `concurrency` posts in flight across them, so a retrying message (which holds no post slot while
// it waits) holds up only its own. Transient failures retry the same message (same Idempotency-Key)
// within 1 s; DEFAULTS.outageStreak of them in a row mean the gateway is down, and then one post at a
// time probes it (post-slots.ts) until any post is answered, which lets every conversation go on. A
// config error (401, or a 404 the probe blames on hooks) — or no gateway set up at all — pauses every
// post but the failing message's own rare retry (the gateway locks out after 20 bad tokens a minute); a
// 429 holds every post for its Retry-After; a content error (400, 413, other 4xx, an unmapped sub-path)
// rejects that one message to the relay's dead shelf with a reason a person can act on. Events forwarded
// to a local app (`frame.forward`) keep their source's order here (or go several at once for a source
// whose order does not matter) and are posted by ../forward/forward-delivery.ts, apart from all of the
// gateway's state. A message the relay abandons (dropped, or sent again for a new target) stops where it
// is: no ack, no reject, no further attempt; a held copy of a live request is settled by that request's
// outcome first (held-copy.ts). Covered by test/node/delivery.e2e.test.ts, gateway-outage.e2e.test.ts,
// forward-delivery.test.ts, delivery-abandon.test.ts, retry-now.e2e.test.ts and live-app.e2e.test.ts.
import { utf8 } from "../../protocol/index.ts";
import type { DeliveryFrame } from "../../protocol/index.ts";
import { DEFAULTS } from "../backoff.ts";
import { ForwardDelivery } from "../forward/forward-delivery.ts";
import { ConversationLine } from "./conversation-line.ts";
import { PROBE_BODY, PROBE_SUBPATH, classifyGatewayResponse, classifyProbe } from "./gateway-response.ts";
import type { GatewayOutcome } from "./gateway-response.ts";
import type { GatewayAnswer, GatewayTarget } from "./gateway-forwarder.ts";
import type { GatewayRequest } from "./hub-format.ts";
import type { DeliveryOptions } from "./delivery-options.ts";
import { noteRejection } from "./delivery-status.ts";
import type { DeliveryStatus, Rejection, RetryNow } from "./delivery-status.ts";
import { PostSlots } from "./post-slots.ts";
import { WaitSet } from "./wait-set.ts";
import { NO_GATEWAY_RETRY_MS, reasonOf, retryWait } from "./retry-wait.ts";
import { deliveryEvent, idempotencyKeyFor, pendingFor, postableRequest } from "./pending-message.ts";
import { settledByLive } from "./held-copy.ts";
import type { EventFields, Pending } from "./pending-message.ts";

export const DEFAULT_CONCURRENCY = 4;
export { idempotencyKeyFor } from "./pending-message.ts";

export class DeliveryLoop {
  readonly status: DeliveryStatus;
  /** Taken from the relay, not finished: waiting, or started (one at a time per conversation). */
  private readonly line: ConversationLine;
  private stopping = false;
  private readonly waits = new WaitSet();
  private readonly slots: PostSlots;
  /** Transient failures in a row across all posts, reset by any post the gateway answers otherwise. */
  private failureStreak = 0;
  private readonly options: DeliveryOptions;
  /** Forwarded events' posts, slots and per-source state (status: `forwards`). */
  readonly forwards: ForwardDelivery;

  constructor(options: DeliveryOptions) {
    this.options = options;
    this.slots = new PostSlots(Math.max(1, Math.trunc(options.concurrency ?? DEFAULT_CONCURRENCY) || DEFAULT_CONCURRENCY));
    this.status = {
      counted_since: Date.now(), delivered: 0, rejected: 0, last_delivery: null, paused: null, recent_rejections: [], last_error: null,
      queued: 0, in_flight: 0, concurrency: this.slots.concurrency, gateway_down: null,
      get lanes() { return line.lanes(); },
    };
    const line = (this.line = new ConversationLine({
      run: (pending) => this.deliver(pending).catch((err: unknown) => this.options.logger.error("delivery failed", { id: pending.frame.id, error: String(err) })),
      // A source whose order does not matter posts up to the loop's concurrency at once.
      parallel: ({ frame }) => (frame.forward?.ordered === false ? this.slots.concurrency : 1),
      changed: () => {
        this.status.queued = this.line.waitingCount + this.line.startedCount;
        this.status.in_flight = this.line.startedCount;
      },
      stopping: () => this.stopping,
    }));
    this.forwards = new ForwardDelivery({
      ...(options.postToApp ? { post: options.postToApp } : {}),
      logger: options.logger,
      sleep: (ms, signal) => this.waits.sleep(ms, signal),
      ...(options.timings?.forwardRetryDelay ? { retryDelay: options.timings.forwardRetryDelay } : {}),
      stopping: () => this.stopping,
      emit: (pending, event) => this.emit(pending, event),
      finished: (pending, shownAs, rejection) => this.finished(pending, shownAs, rejection),
    });
  }

  push(frame: DeliveryFrame): void {
    if (this.stopping || !this.line.claim(frame.id)) return;
    this.line.add(pendingFor(frame));
  }

  /** The relay resends everything unacknowledged after a reconnect: forget what has not started. */
  dropQueued(): void {
    this.line.dropWaiting();
  }

  /**
   * The relay took message `id` back (an `abandon` frame): it stops where it is, its lane moves on, and
   * the relay may send it again. A gateway post already under way may still land; its answer is ignored.
   */
  abandon(id: number, reason: string): void {
    const was = this.line.abandon(id);
    if (was === null) return;
    // Its pause would hold every gateway post with no one left to lift it: the next failure may pause again.
    if (this.slots.pausedBy === id) this.setPausedBy(null, this.status.paused);
    this.options.logger.info("message abandoned", { id, reason, was });
  }

  /** The loop is stopping, or the relay abandoned this message: nothing more is done for it. */
  private gone(pending: Pending): boolean {
    return this.stopping || pending.abort.signal.aborted;
  }

  /**
   * Stops taking messages. Those in flight get `graceMs` to finish; after that they are abandoned,
   * unacknowledged, and the relay sends them again to the next connection (same Idempotency-Keys).
   */
  async stop(graceMs = 2000): Promise<void> {
    this.stopping = true;
    this.waits.wakeAll();
    this.slots.close();
    this.forwards.close();
    this.status.gateway_down = null;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.line.settled(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    this.forwards.dispose();
  }

  private setPausedBy(id: number | null, reason: string | null): void {
    this.status.paused = reason;
    this.slots.setPausedBy(id);
  }

  /**
   * Cuts every wait short at once (`clawrelay retry`, or the gateway's settings changed): retries and
   * a config error's 60 s, the 429 hold, the outage's next probe. A pause stays until a post gets through.
   */
  retryNow(): RetryNow {
    return { woken: this.waits.wakeAll(), hold_cut_ms: this.slots.endHold(), probe_now: this.slots.probeNow(), paused: this.status.paused };
  }

  private finished({ frame }: Pending, subpath: string, rejection: Rejection | null): void { // a forwarded event, or a held copy (held-copy.ts)
    if (rejection) return this.shelve(frame.id, subpath, rejection);
    this.options.ack(frame.id);
    this.status.delivered++;
  }

  private async deliver(pending: Pending): Promise<void> {
    const { frame, envelope, unreadable } = pending;
    const held = { gone: () => this.gone(pending), finished: (r: Rejection | null, subpath: string) => this.finished(pending, subpath, r), emit: (e: EventFields) => this.emit(pending, e) };
    if (await settledByLive(pending, this.options.heldCopies, held)) return;
    if (frame.forward) return this.forwards.deliver(pending);
    const { logger, agentId } = this.options;
    let request: GatewayRequest;
    try {
      if (unreadable !== null) throw new Error(unreadable);
      if (envelope && this.options.intercept?.(envelope)) return this.options.ack(frame.id);
      request = postableRequest(pending, this.options.hubPrefix?.() ?? "agentgram");
    } catch (err) {
      return this.rejectMessage(pending, frame.subpath ?? "", { reason: `cannot turn the message into a gateway request: ${(err as Error).message}`, status: 0, attempts: 0 });
    }
    const key = idempotencyKeyFor(agentId, frame.id);
    // Transient failures in a row while the gateway took other posts (an outage's do not count).
    let failures = 0;
    let attempts = 0;
    let waitedForGateway = false;
    while (!this.gone(pending)) {
      await this.slots.acquire(frame.id);
      if (this.gone(pending)) return void this.slots.release(frame.id);
      const target = this.options.target();
      if ("problem" in target) {
        this.slots.release(frame.id);
        if (!(await this.waitForGateway(pending, request.subpath, target.problem, attempts, waitedForGateway))) return;
        waitedForGateway = true;
        continue;
      }
      let answer: GatewayAnswer;
      let outcome: GatewayOutcome;
      let probe = false;
      try {
        answer = await this.options.post(target, request, key);
        attempts++;
        outcome = classifyGatewayResponse(answer.status, answer.retryAfter, DEFAULTS.defaultRetryAfterMs, answer.detail, target.tokenFrom);
        if (outcome.kind === "not_found" && !this.gone(pending)) outcome = await this.probe(target, request, outcome.reason);
        // Before the slot is freed, so a post that finds the gateway down hands its slot to no one.
        if (!this.gone(pending)) this.noteGateway(outcome, pending, request.subpath);
      } catch (err) {
        // Refused before anything was sent (the forwarder's own checks): this message can never go.
        if (this.gone(pending)) return;
        return this.rejectMessage(pending, request.subpath, { reason: `not posted: ${(err as Error).message}`, status: 0, attempts });
      } finally {
        probe = this.slots.release(frame.id);
        if (probe && this.status.gateway_down) this.status.gateway_down.probes++;
      }
      if (this.gone(pending)) return;
      if (outcome.kind === "accepted") return this.accepted(pending, request, answer.status, attempts);
      if (outcome.kind === "content_error") return this.rejectMessage(pending, request.subpath, { reason: outcome.reason, status: answer.status, attempts });
      const reason = reasonOf(outcome);
      // The relay leaves a message in the agent's hands past its TTL; the agent gives it up here.
      if (Date.now() >= frame.expires_at) {
        return this.rejectMessage(pending, request.subpath, { reason: `ttl_expired while the gateway kept failing: ${reason}`, status: answer.status, attempts });
      }
      this.status.last_error = { id: frame.id, message: reason, at: Date.now() };
      pending.lastError = reason;
      // While the gateway is down the message waits in line for the probe, with no timer of its own; a
      // probe's failure is no news (the "gateway down" line said it), a post's that was under way is.
      if (outcome.kind === "transient" && this.slots.down) {
        if (!probe) this.emit(pending, { outcome: "retrying", subpath: request.subpath, status: answer.status, attempts, detail: reason });
        failures = 0;
        continue;
      }
      failures = outcome.kind === "transient" ? failures + 1 : 0;
      const wait = retryWait(outcome, failures);
      if (outcome.kind === "config_error" && (this.slots.pausedBy === null || this.slots.pausedBy === frame.id)) this.setPausedBy(frame.id, reason);
      // The gateway is refusing this client as a whole: no post of any conversation until it allows.
      if (outcome.kind === "rate_limited") this.slots.hold(wait);
      this.emit(pending, { outcome: "retrying", subpath: request.subpath, status: answer.status, attempts, detail: reason });
      logger[outcome.kind === "config_error" ? "error" : "warn"](answer.status === 0 ? "gateway unreachable" : "gateway refused", { id: frame.id, subpath: request.subpath, status: answer.status, error: reason, retry_in_ms: wait });
      const sleepMs = Math.min(wait, Math.max(0, frame.expires_at - Date.now()));
      pending.nextTryAt = Date.now() + sleepMs;
      await this.waits.sleep(sleepMs, pending.abort.signal);
      pending.nextTryAt = null;
    }
  }

  /** No gateway set up (no hooks token): paused with the reason, it looks again every few seconds; false when its TTL ended it or the loop stops. */
  private async waitForGateway(pending: Pending, subpath: string, problem: string, attempts: number, waitedBefore: boolean): Promise<boolean> {
    const { frame } = pending;
    const reason = `no gateway to post to: ${problem}. Messages for the gateway wait; events forwarded to local apps go on`;
    if (Date.now() >= frame.expires_at) {
      this.rejectMessage(pending, subpath, { reason: `ttl_expired while waiting for a gateway: ${problem}`, status: 0, attempts });
      return false;
    }
    if (this.slots.pausedBy === null || this.slots.pausedBy === frame.id) this.setPausedBy(frame.id, reason);
    if (!waitedBefore) {
      this.emit(pending, { outcome: "retrying", subpath, status: 0, attempts, detail: reason });
      this.options.logger.warn("waiting for a gateway", { id: frame.id, subpath, error: problem });
    }
    pending.lastError = reason;
    await this.waits.sleep(Math.min(this.options.timings?.noGatewayRetryMs ?? NO_GATEWAY_RETRY_MS, Math.max(0, frame.expires_at - Date.now())), pending.abort.signal);
    return !this.gone(pending);
  }

  /** Keeps the failure streak, and says when the gateway went down (post-slots.ts probes it) and came back. */
  private noteGateway(outcome: GatewayOutcome, pending: Pending, subpath: string): void {
    if (outcome.kind !== "transient") {
      this.failureStreak = 0;
      const down = this.status.gateway_down;
      if (!down) return;
      this.slots.endOutage();
      this.status.gateway_down = null;
      this.options.logger.info("gateway back", { id: pending.frame.id, subpath, down_ms: Date.now() - down.since, probes_failed: down.probes });
      return;
    }
    if (++this.failureStreak < DEFAULTS.outageStreak || this.slots.down) return;
    this.slots.beginOutage();
    this.status.gateway_down = { since: Date.now(), probes: 0, reason: outcome.reason };
    this.options.logger.warn("gateway down", { id: pending.frame.id, subpath, error: outcome.reason, failures_in_a_row: this.failureStreak, probe: "one post at a time until it answers" });
  }

  /** Tells a 404 for an unmapped sub-path from hooks that are off (see classifyProbe). */
  private async probe(target: GatewayTarget, request: GatewayRequest, first404: string): Promise<GatewayOutcome> {
    if (request.subpath === PROBE_SUBPATH) return classifyProbe(404, request.subpath, target.hooksPath, first404, request.body);
    const probe: GatewayRequest = { subpath: PROBE_SUBPATH, contentType: "application/json", body: utf8(PROBE_BODY) };
    const answer = await this.options.post(target, probe, null);
    return classifyProbe(answer.status, request.subpath, target.hooksPath, first404, request.body, target.tokenFrom);
  }

  private emit(pending: Pending, event: EventFields): void {
    this.options.onEvent?.(deliveryEvent(pending, event));
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

  /** Hands a message to the relay's dead shelf and counts it, a forwarded one too (`subpath`: its URL tail or source). */
  private shelve(id: number, subpath: string, rejection: Rejection): void {
    this.options.reject(id, rejection);
    this.status.rejected++;
    noteRejection(this.status, { id, subpath, at: Date.now(), ...rejection });
  }

  private rejectMessage(pending: Pending, subpath: string, rejection: Rejection): void {
    const { frame } = pending;
    this.shelve(frame.id, subpath, rejection);
    // A gateway's refusal of this message (a 4xx past the token check) shows the gateway works: the
    // pause is over. A message refused before any post (or for a 401 at its TTL) says nothing of that.
    if (rejection.status > 0 && rejection.status !== 401) this.setPausedBy(null, null);
    else if (this.slots.pausedBy === frame.id) this.setPausedBy(null, this.status.paused);
    this.status.last_error = { id: frame.id, message: rejection.reason, at: Date.now() };
    this.emit(pending, { outcome: "rejected", subpath, status: rejection.status, attempts: rejection.attempts, detail: rejection.reason });
    this.options.logger.error("message rejected to the dead shelf", { id: frame.id, subpath, status: rejection.status, error: rejection.reason, next: `clawrelay messages show ${frame.id}` });
  }
}
