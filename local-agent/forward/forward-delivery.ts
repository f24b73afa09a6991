// Delivery of forwarded events (frames with `forward`) to their local apps, for the delivery loop
// (delivery/delivery.ts), which keeps each source's lane in order — one event at a time, or several for
// a source whose order does not matter — and hands each here. Apart from the gateway on purpose: no
// post slots shared across sources (a post that has not answered holds a place in its own lane only;
// the relay's window bounds them all), its own back-off, and none of the gateway's pause, 429 hold,
// outage probing or failure streak, so a down app holds up only its own lane and a down gateway none. Each source's policy
// comes with its frames (forward-request.ts forwardPolicy: time limit, retry budget, order). The app's 2xx
// acknowledges an event (journal first, as for the gateway); a redirect or another 4xx, a refused target
// or a frame that cannot be posted go to the dead shelf with the reason. An answered failure (5xx, 408,
// 429), a time-out or a reset spends one of the event's retries, and past its budget it goes to the dead
// shelf with what failed and how to send it again, and its lane goes on; a refused connection (nothing
// listening) spends nothing: the event waits, its target probed with back-off (target-backoff.ts), until
// the app answers or the event's TTL ends. Covered by test/node/forward-delivery.test.ts,
// forward-policy.test.ts and forward-agent.e2e.test.ts.
import type { Rejection } from "../delivery/delivery-status.ts";
import type { EventFields, Pending } from "../delivery/pending-message.ts";
import type { Logger } from "../logger.ts";
import { createAppClient } from "./app-client.ts";
import type { AppClient, AppRequest } from "./app-client.ts";
import { classifyAppAnswer, forwardRetryDelay } from "./app-response.ts";
import type { AppAnswer } from "./app-response.ts";
import { forwardPolicy, forwardRequest, forwardShownAs } from "./forward-request.ts";
import { ForwardTargets } from "./forward-targets.ts";
import type { ForwardTargetStatus } from "./forward-targets.ts";
import { TargetBackoff } from "./target-backoff.ts";
import type { Attempt } from "./target-backoff.ts";

export interface ForwardHost {
  /** Default: a client of its own (app-client.ts), closed by dispose(). */
  post?(request: AppRequest, signal: AbortSignal): Promise<AppAnswer>;
  logger: Logger;
  /** The loop's sleep: cut short when it stops, at `clawrelay retry`, or when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** The wait before a target's next attempt after `failuresInRow` failures; default forwardRetryDelay (tests shorten it). */
  retryDelay?(failuresInRow: number): number;
  stopping(): boolean;
  emit(pending: Pending, event: EventFields): void;
  /** Rejection null: the app took it, acknowledge it to the relay; else it can never go: to the dead shelf. Counted either way. */
  finished(pending: Pending, shownAs: string, rejection: Rejection | null): void;
}

type Where = Pick<EventFields, "target" | "method">;

export class ForwardDelivery {
  readonly targets = new ForwardTargets();
  private readonly host: ForwardHost;
  private readonly post: (request: AppRequest, signal: AbortSignal) => Promise<AppAnswer>;
  private readonly client: AppClient | null;
  /** Per source, its target's back-off (a new target starts afresh). */
  private readonly backoffs = new Map<string, { target: string; backoff: TargetBackoff }>();
  /** Per source, the events being delivered and the failures each spent of its budget (the lowest id is the head). */
  private readonly spent = new Map<string, Map<Pending, number>>();

  constructor(host: ForwardHost) {
    this.host = host;
    this.client = host.post ? null : createAppClient();
    this.post = host.post ?? ((request, signal) => this.client!.post(request, signal));
  }

  /** Stops taking turns: every waiter looks again (and finds the loop stopping). */
  close(): void {
    for (const { backoff } of this.backoffs.values()) backoff.wakeAll();
  }

  /** Closes its own client's connections (after the posts in flight had their grace). */
  dispose(): void {
    this.client?.close();
  }

  status(): ForwardTargetStatus[] {
    return this.targets.list();
  }

  async deliver(pending: Pending): Promise<void> {
    const { frame } = pending;
    const forward = frame.forward!;
    const state = this.targets.seen(forward.source, forward.target);
    const shownAs = forwardShownAs(forward);
    const built = forwardRequest(frame, forward);
    if (!built.ok) return this.reject(pending, state, { target: forward.target, method: String(forward.method) }, shownAs, { reason: built.problem, status: 0, attempts: 0 });
    const { request } = built;
    const where: Where = { target: request.url, method: request.method };
    const { retries } = forwardPolicy(forward);
    state.retries = retries;
    const backoff = this.backoffOf(forward.source, forward.target);
    const spent = this.spentOf(forward.source);
    spent.set(pending, 0);
    // Posts the app was asked to take (a request the guard stopped was never one).
    let attempts = 0;
    try {
      while (!this.gone(pending)) {
        const attempt = await this.turn(pending, backoff, state);
        if (attempt === null) return;
        const answer = await this.postOnce(pending, request, attempt, backoff);
        if (answer === null) return;
        if (answer.kind !== "not_sent") attempts++;
        const status = answer.kind === "answered" ? answer.status : 0;
        if (answer.kind === "answered") state.last_answer = { status, detail: answer.detail, at: Date.now(), id: frame.id };
        const outcome = classifyAppAnswer(answer, forward.source, Date.now(), { headers: request.headers, id: frame.id });
        if (outcome.kind === "accepted") {
          backoff.succeeded(attempt);
          return this.accept(pending, state, where, shownAs, status, attempts);
        }
        if (outcome.kind === "rejected") {
          // An app that answers is up, whatever it thought of this event.
          if (answer.kind === "answered") {
            backoff.succeeded(attempt);
            state.failing_since = null;
          } else backoff.cancelled(attempt);
          return this.reject(pending, state, where, shownAs, { reason: outcome.reason, status, attempts });
        }
        backoff.failed(attempt, outcome.waitMs);
        state.failing_since ??= Date.now();
        state.last_error = pending.lastError = outcome.reason;
        const failures = (spent.get(pending) ?? 0) + (outcome.spends ? 1 : 0);
        spent.set(pending, failures);
        this.showHead(forward.source, state);
        if (failures > retries) {
          const reason = `the app at ${forward.target.slice(0, 300)} failed this event ${failures} time${failures === 1 ? "" : "s"} (last: ${outcome.reason}); source "${forward.source}" allows ${retries} retries. Once the app is fixed: clawrelay messages replay ${frame.id}`;
          return this.reject(pending, state, where, shownAs, { reason, status, attempts });
        }
        // The relay leaves a message in the agent's hands past its TTL; the agent gives it up here.
        if (Date.now() >= frame.expires_at) {
          return this.reject(pending, state, where, shownAs, { reason: `ttl_expired while the app kept failing: ${outcome.reason}`, status, attempts });
        }
        this.host.emit(pending, { outcome: "retrying", subpath: shownAs, status, attempts, detail: outcome.reason, ...where });
        this.host.logger.warn("app did not take a forwarded event", { id: frame.id, source: forward.source, target: forward.target, status, error: outcome.reason, failures, retries, retry_in_ms: Math.max(0, backoff.nextTryAt - Date.now()) });
      }
    } finally {
      spent.delete(pending);
      this.showHead(forward.source, state);
    }
  }

  /** The loop is stopping, or the relay abandoned this event: nothing more is done for it. */
  private gone(pending: Pending): boolean {
    return this.host.stopping() || pending.abort.signal.aborted;
  }

  /**
   * Waits for this event's turn at its target: at once while the target answers; while it fails, as its
   * one probe, after the back-off (or the event's TTL, whichever comes first). Null: gone meanwhile.
   */
  private async turn(pending: Pending, backoff: TargetBackoff, state: ForwardTargetStatus): Promise<Attempt | null> {
    const { signal } = pending.abort;
    while (!this.gone(pending)) {
      const attempt = backoff.begin();
      if (attempt === null) {
        await backoff.changed(signal);
        continue;
      }
      const waitMs = attempt.probe ? Math.min(backoff.nextTryAt - Date.now(), pending.frame.expires_at - Date.now()) : 0;
      if (waitMs > 0) {
        pending.nextTryAt = state.next_try_at = Date.now() + waitMs;
        await this.host.sleep(waitMs, signal);
        pending.nextTryAt = state.next_try_at = null;
      }
      if (!this.gone(pending)) return attempt;
      backoff.cancelled(attempt);
    }
    return null;
  }

  /** One post; null when the loop stopped or the relay abandoned the event meanwhile (unacknowledged: the relay sends it again, or not). */
  private async postOnce(pending: Pending, request: AppRequest, attempt: Attempt, backoff: TargetBackoff): Promise<AppAnswer | null> {
    let answer: AppAnswer | null = null;
    try {
      answer = await this.post(request, pending.abort.signal);
    } finally {
      // A post that threw (an injected client's fault) must not leave the target's probe taken for ever.
      if (answer === null || this.gone(pending)) backoff.cancelled(attempt);
    }
    return this.gone(pending) ? null : answer;
  }

  private backoffOf(source: string, target: string): TargetBackoff {
    const known = this.backoffs.get(source);
    if (known?.target === target) return known.backoff;
    const backoff = new TargetBackoff((n) => (this.host.retryDelay ?? forwardRetryDelay)(n));
    this.backoffs.set(source, { target, backoff });
    return backoff;
  }

  private spentOf(source: string): Map<Pending, number> {
    let spent = this.spent.get(source);
    if (!spent) this.spent.set(source, (spent = new Map()));
    return spent;
  }

  /** The source's head (its oldest event being delivered): the failures it spent, for the status. */
  private showHead(source: string, state: ForwardTargetStatus): void {
    let head: [Pending, number] | null = null;
    for (const entry of this.spent.get(source) ?? []) if (!head || entry[0].frame.id < head[0].frame.id) head = entry;
    state.head_failures = head?.[1] ?? 0;
  }

  private accept(pending: Pending, state: ForwardTargetStatus, where: Where, shownAs: string, status: number, attempts: number): void {
    const { frame } = pending;
    this.host.finished(pending, shownAs, null);
    state.failing_since = null;
    state.last_error = null;
    state.delivered++;
    this.host.emit(pending, { outcome: "delivered", subpath: shownAs, status, attempts, detail: null, ...where });
    this.host.logger.info("forwarded", { id: frame.id, source: state.source, target: state.target, method: where.method, status, latency_ms: Date.now() - frame.received_at });
  }

  private reject(pending: Pending, state: ForwardTargetStatus, where: Where, shownAs: string, rejection: Rejection): void {
    const { frame } = pending;
    this.host.finished(pending, shownAs, rejection);
    state.last_error = rejection.reason;
    state.rejected++;
    this.host.emit(pending, { outcome: "rejected", subpath: shownAs, status: rejection.status, attempts: rejection.attempts, detail: rejection.reason, ...where });
    this.host.logger.error("message rejected to the dead shelf", { id: frame.id, source: state.source, target: state.target, status: rejection.status, error: rejection.reason, next: `clawrelay messages show ${frame.id}` });
  }
}

