// The delivery loop's post slots (delivery.ts): at most `concurrency` posts in flight across
// conversations, none while a 429's Retry-After holds, while a config error pauses delivery only the
// pausing message's own retries, and while the gateway is down one probe at a time: a waiting message
// is let through after probeDelay (retry-wait.ts), the waiters taking turns, and the first post the
// gateway answers lets every one through. Covered by test/node/post-slots.test.ts,
// gateway-outage.e2e.test.ts, conversations.e2e.test.ts and gateway-failures.e2e.test.ts.
import { probeDelay } from "./retry-wait.ts";

/** A gateway that is down, as the slots see it: since when, the probes so far, whose post is the probe. */
interface Outage {
  since: number;
  probes: number;
  /** A probe is due: the next waiter (or the next acquire) posts. */
  due: boolean;
  probing: number | null;
  timer: NodeJS.Timeout | null;
}

export class PostSlots {
  readonly concurrency: number;
  /** Posts in flight now. */
  private posting = 0;
  /** Messages waiting for a post slot, first come first served. */
  private readonly queue: { id: number; grant: () => void }[] = [];
  /** The message whose config error paused everything: only its retries post until it gets through. */
  private pausing: number | null = null;
  /** No post starts before this (a 429's Retry-After). */
  private holdUntil = 0;
  private holdTimer: NodeJS.Timeout | null = null;
  private outage: Outage | null = null;
  private closed = false;

  constructor(concurrency: number) {
    this.concurrency = concurrency;
  }

  get pausedBy(): number | null {
    return this.pausing;
  }

  /** The outage under way, or null while the gateway answers. */
  get down(): { since: number; probes: number } | null {
    return this.outage && { since: this.outage.since, probes: this.outage.probes };
  }

  /** A post slot, when one is free and nothing holds posts (a pause, a 429, an outage's next probe). */
  acquire(id: number): Promise<void> {
    if (this.closed || (this.queue.length === 0 && this.mayPost(id))) {
      this.take(id);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.queue.push({ id, grant: resolve });
      this.grant();
    });
  }

  /** The post of `id` is over; true when it was an outage's probe (the next one is then scheduled). */
  release(id: number): boolean {
    this.posting--;
    const probe = this.outage !== null && this.outage.probing === id;
    if (probe) {
      this.outage!.probing = null;
      this.outage!.probes++;
      this.scheduleProbe();
    }
    this.grant();
    return probe;
  }

  /** The gateway is down: from now on one probe at a time, the first after probeDelay(0). */
  beginOutage(): void {
    if (this.outage || this.closed) return;
    this.outage = { since: Date.now(), probes: 0, due: false, probing: null, timer: null };
    this.scheduleProbe();
  }

  /** The gateway answered: every waiter goes ahead (as slots allow). */
  endOutage(): void {
    if (!this.outage) return;
    if (this.outage.timer) clearTimeout(this.outage.timer);
    this.outage = null;
    this.grant();
  }

  /** No post of any conversation starts for `ms`. */
  hold(ms: number): void {
    this.holdUntil = Math.max(this.holdUntil, Date.now() + ms);
    this.armHold();
  }

  /** Lifts a 429's hold now (`clawrelay retry`); returns the ms it had left. */
  endHold(): number {
    const left = Math.max(0, this.holdUntil - Date.now());
    this.holdUntil = 0;
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    this.grant();
    return left;
  }

  /** During an outage, the next probe goes now rather than after its delay; false when none is waiting. */
  probeNow(): boolean {
    const outage = this.outage;
    if (!outage?.timer) return false;
    clearTimeout(outage.timer);
    outage.timer = null;
    outage.due = true;
    this.grant();
    return true;
  }

  /** Only message `id` posts until this is called again; null lifts the pause. */
  setPausedBy(id: number | null): void {
    this.pausing = id;
    if (id === null) this.grant();
  }

  /** The loop is stopping: every waiter goes ahead (and finds it stopping), as does every later acquire. */
  close(): void {
    this.closed = true;
    for (const { grant } of this.queue.splice(0)) grant();
    if (this.holdTimer) clearTimeout(this.holdTimer);
    if (this.outage?.timer) clearTimeout(this.outage.timer);
  }

  /**
   * Wakes the waiters when the hold ends. Node starts a timer from the event loop's cached time, so on a
   * busy loop it fires before Date.now() reaches holdUntil: grant() then finds the hold still on and arms
   * it again (a message after a 429 used to wait for ever).
   */
  private armHold(): void {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => {
      this.holdTimer = null;
      this.grant();
    }, Math.max(1, this.holdUntil - Date.now()));
  }

  private scheduleProbe(): void {
    const outage = this.outage!;
    outage.timer = setTimeout(() => {
      outage.timer = null;
      outage.due = true;
      this.grant();
    }, probeDelay(outage.probes, Date.now() - outage.since));
  }

  private mayPost(id: number): boolean {
    return this.posting < this.concurrency && (this.pausing === null || this.pausing === id) && Date.now() >= this.holdUntil && (this.outage === null || this.outage.due);
  }

  private take(id: number): void {
    this.posting++;
    if (this.outage?.due) {
      this.outage.due = false;
      this.outage.probing = id;
    }
  }

  private grant(): void {
    for (let i = 0; i < this.queue.length && this.posting < this.concurrency; ) {
      const waiter = this.queue[i]!;
      if (!this.mayPost(waiter.id)) {
        if (Date.now() < this.holdUntil) {
          if (!this.holdTimer) this.armHold();
          return;
        }
        // Only the pausing message may pass a pause; others keep their place in line.
        if (this.outage && !this.outage.due) return;
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.take(waiter.id);
      waiter.grant();
    }
  }
}
