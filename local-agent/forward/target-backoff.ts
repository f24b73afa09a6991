// One forwarding source's target as its events' attempts see it (forward-delivery.ts): its failures in a
// row since its last success, when its next attempt may go, and the one attempt under way while it
// fails — the probe: a failing app is asked by one event at a time, not by every event of a backlog at
// once. The back-off is the target's, not each event's: the events behind a failed one wait the same
// back-off, not one each, and any success resets it (the first retry after a success goes at once,
// forwardRetryDelay in app-response.ts). Covered by test/node/forward-policy.test.ts.

/** An attempt under way: the round it began in, and whether it is the failing target's probe. */
export interface Attempt {
  round: number;
  probe: boolean;
}

export class TargetBackoff {
  failuresInRow = 0;
  /** While it fails: no attempt goes before this (ms since the epoch). */
  nextTryAt = 0;
  /** Counted failures so far: an attempt that began before the latest one failed beside it, and adds nothing to the back-off. */
  private round = 0;
  private probing = false;
  private readonly waiters = new Set<() => void>();
  private readonly delay: (failuresInRow: number) => number;

  constructor(delay: (failuresInRow: number) => number) {
    this.delay = delay;
  }

  get failing(): boolean {
    return this.failuresInRow > 0;
  }

  /** An attempt may begin: at once while the target answers; while it fails, only when no probe is under way (it is then the probe). Null: wait for changed(). */
  begin(): Attempt | null {
    if (!this.failing) return { round: this.round, probe: false };
    if (this.probing) return null;
    this.probing = true;
    return { round: this.round, probe: true };
  }

  /** Resolves when begin() may answer otherwise (the probe ended, the target answered), when `signal` aborts, or at wakeAll(). */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.waiters.delete(wake);
        signal.removeEventListener("abort", wake);
        resolve();
      };
      this.waiters.add(wake);
      if (signal.aborted) wake();
      else signal.addEventListener("abort", wake, { once: true });
    });
  }

  /** The target answered (took the event, or refused it as the event's own fault): it is not failing. */
  succeeded(attempt: Attempt): void {
    this.failuresInRow = 0;
    this.nextTryAt = 0;
    this.end(attempt);
  }

  /** The attempt failed; `waitMs`: a Retry-After the target asked for (null: its back-off). */
  failed(attempt: Attempt, waitMs: number | null): void {
    const now = Date.now();
    if (attempt.round === this.round) {
      this.failuresInRow++;
      this.round++;
      this.nextTryAt = now + (waitMs ?? this.delay(this.failuresInRow));
    } else if (waitMs !== null) this.nextTryAt = Math.max(this.nextTryAt, now + waitMs);
    this.end(attempt);
  }

  /** The attempt ended with nothing learnt of the target (stopped, abandoned, never sent). */
  cancelled(attempt: Attempt): void {
    this.end(attempt);
  }

  /** Every waiter looks again (the loop stops). */
  wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private end(attempt: Attempt): void {
    if (attempt.probe) this.probing = false;
    this.wakeAll();
  }
}
