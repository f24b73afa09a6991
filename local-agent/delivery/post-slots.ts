// The delivery loop's post slots (delivery.ts): at most `concurrency` posts in flight across
// conversations, none while a 429's Retry-After holds, and while a config error pauses delivery only
// the pausing message's own retries. Covered by test/node/conversations.e2e.test.ts and
// gateway-failures.e2e.test.ts.

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
  private closed = false;

  constructor(concurrency: number) {
    this.concurrency = concurrency;
  }

  get pausedBy(): number | null {
    return this.pausing;
  }

  /** A post slot, when one is free and nothing holds posts (a pause, a 429). */
  acquire(id: number): Promise<void> {
    if (this.closed || this.mayPost(id)) {
      this.posting++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push({ id, grant: resolve }));
  }

  release(): void {
    this.posting--;
    this.grant();
  }

  /** No post of any conversation starts for `ms`. */
  hold(ms: number): void {
    this.holdUntil = Math.max(this.holdUntil, Date.now() + ms);
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => {
      this.holdTimer = null;
      this.grant();
    }, Math.max(0, this.holdUntil - Date.now()));
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
  }

  private mayPost(id: number): boolean {
    return this.posting < this.concurrency && (this.pausing === null || this.pausing === id) && Date.now() >= this.holdUntil;
  }

  private grant(): void {
    for (let i = 0; i < this.queue.length && this.posting < this.concurrency; ) {
      const waiter = this.queue[i]!;
      if (!this.mayPost(waiter.id)) {
        // Only the pausing message may pass a pause; others keep their place in line.
        if (Date.now() < this.holdUntil) return;
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.posting++;
      waiter.grant();
    }
  }
}
