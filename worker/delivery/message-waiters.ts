// Long-polls waiting for a message (GET …/messages?timeout=N): each resolves when a message is stored or
// when its time is up, whichever comes first. Held by inbox.ts (moved out of it whole); covered by
// test/worker/polling.test.ts.

export class MessageWaiters {
  private readonly waiters = new Set<() => void>();

  /** A message was stored: every waiting poll looks again. */
  wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves when a message is stored or after `ms`, whichever comes first. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}
