// Delivery of forwarded events (frames with `forward`) to their local apps, for the delivery loop
// (delivery/delivery.ts), which keeps their order — one event at a time per source, its conversation
// `forward:<source>` — and hands each here. Apart from the gateway on purpose: its own post slots, its
// own backoff (app-response.ts), and none of the gateway's pause, 429 hold, outage probing or failure
// streak, so a down app holds up only its own source and a down gateway none of them. The app's 2xx
// acknowledges an event (journal first, as for the gateway); a redirect or another 4xx, a refused target
// or a frame that cannot be posted go to the dead shelf with the reason; the rest retry until the
// event's TTL. A failing app's waiting events are set aside when the agent holds too much of the relay's
// window (set-aside.ts). Covered by test/node/forward-delivery.test.ts and forward-agent.e2e.test.ts.
import type { Rejection } from "../delivery/delivery-status.ts";
import type { EventFields, Pending } from "../delivery/pending-message.ts";
import type { Logger } from "../logger.ts";
import { createAppClient } from "./app-client.ts";
import type { AppClient, AppRequest } from "./app-client.ts";
import { classifyAppAnswer, forwardRetryDelay } from "./app-response.ts";
import type { AppAnswer } from "./app-response.ts";
import { forwardRequest, forwardShownAs } from "./forward-request.ts";
import { ForwardTargets } from "./forward-targets.ts";
import type { ForwardTargetStatus } from "./forward-targets.ts";
import { SetAside } from "./set-aside.ts";
import type { AsideLoop } from "./set-aside.ts";

export interface ForwardHost {
  /** Default: a client of its own (app-client.ts), closed by dispose(). */
  post?(request: AppRequest): Promise<AppAnswer>;
  /** Posts to apps in flight at once, across sources. */
  concurrency: number;
  logger: Logger;
  /** The loop's sleep: cut short when it stops. */
  sleep(ms: number): Promise<void>;
  /** The wait before the next attempt after a failure; default forwardRetryDelay (tests shorten it). */
  retryDelay?(failures: number, failingForMs: number): number;
  stopping(): boolean;
  emit(pending: Pending, event: EventFields): void;
  /** Rejection null: the app took it, acknowledge it to the relay; else it can never go: to the dead shelf. Counted either way. */
  finished(pending: Pending, shownAs: string, rejection: Rejection | null): void;
  /** What setting aside needs of the loop; none: nothing is ever set aside. */
  aside?: AsideLoop;
}

/** At most `free` posts at once, first come first served; close() lets every waiter (and later caller) through. */
class AppSlots {
  private free: number;
  private closed = false;
  private readonly waiting: (() => void)[] = [];

  constructor(concurrency: number) {
    this.free = concurrency;
  }

  acquire(): Promise<void> {
    if (this.closed || this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }

  close(): void {
    this.closed = true;
    for (const grant of this.waiting.splice(0)) grant();
  }
}

type Where = Pick<EventFields, "target" | "method">;

export class ForwardDelivery {
  readonly targets = new ForwardTargets();
  private readonly slots: AppSlots;
  private readonly host: ForwardHost;
  private readonly post: (request: AppRequest) => Promise<AppAnswer>;
  private readonly client: AppClient | null;
  /** A failing app's waiting events to the dead shelf and back (set-aside.ts); null without host.aside. */
  readonly aside: SetAside | null;

  constructor(host: ForwardHost) {
    this.host = host;
    this.aside = host.aside
      ? new SetAside({ ...host.aside, targets: this.targets, logger: host.logger, sleep: (ms) => host.sleep(ms), stopping: () => host.stopping(), emit: (p, e) => host.emit(p, e) })
      : null;
    this.slots = new AppSlots(host.concurrency);
    this.client = host.post ? null : createAppClient();
    this.post = host.post ?? ((request) => this.client!.post(request));
  }

  /** Stops taking turns: every waiter goes ahead (and finds the loop stopping). */
  close(): void {
    this.slots.close();
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
    let failures = 0;
    // Posts the app was asked to take (a request the guard stopped was never one).
    let attempts = 0;
    while (!this.host.stopping()) {
      await this.slots.acquire();
      let answer: AppAnswer;
      try {
        if (this.host.stopping()) return;
        answer = await this.post(request);
      } finally {
        this.slots.release();
      }
      // Abandoned unacknowledged: the relay sends it again to the next connection.
      if (this.host.stopping()) return;
      if (answer.kind !== "not_sent") attempts++;
      const status = answer.kind === "answered" ? answer.status : 0;
      if (answer.kind === "answered") state.last_answer = { status, detail: answer.detail, at: Date.now(), id: frame.id };
      const outcome = classifyAppAnswer(answer, forward.source);
      if (outcome.kind === "accepted") return this.accept(pending, state, where, shownAs, status, attempts);
      if (outcome.kind === "rejected") {
        // An app that answers is up, whatever it thought of this event.
        if (answer.kind === "answered") state.failing_since = null;
        return this.reject(pending, state, where, shownAs, { reason: outcome.reason, status, attempts });
      }
      state.failing_since ??= Date.now();
      state.last_error = outcome.reason;
      // The relay leaves a message in the agent's hands past its TTL; the agent gives it up here.
      if (Date.now() >= frame.expires_at) {
        return this.reject(pending, state, where, shownAs, { reason: `ttl_expired while the app kept failing: ${outcome.reason}`, status, attempts });
      }
      failures++;
      const wait = outcome.waitMs ?? (this.host.retryDelay ?? forwardRetryDelay)(failures, Date.now() - state.failing_since);
      this.host.emit(pending, { outcome: "retrying", subpath: shownAs, status, attempts, detail: outcome.reason, ...where });
      this.host.logger.warn("app did not take a forwarded event", { id: frame.id, source: forward.source, target: forward.target, status, error: outcome.reason, retry_in_ms: wait });
      this.aside?.relieve();
      await this.host.sleep(Math.min(wait, Math.max(0, frame.expires_at - Date.now())));
    }
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

