// The delivery loop's timed waits (delivery.ts, and the forwarded events' retries it lends its sleep to),
// kept so that they can all be cut short at once: when the loop stops, when `clawrelay retry` asks, and
// when the gateway's settings change under a paused loop; and one message's alone, when it is abandoned.
// Covered by test/node/retry-now.e2e.test.ts and delivery-abandon.test.ts.

export class WaitSet {
  private readonly wakers = new Set<() => void>();

  /** Resolves after `ms`, or at once when wakeAll() is called or `signal` aborts meanwhile. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        signal?.removeEventListener("abort", wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
      if (signal?.aborted) wake();
      else signal?.addEventListener("abort", wake, { once: true });
    });
  }

  /** Ends every wait under way; returns how many there were. */
  wakeAll(): number {
    const waiting = [...this.wakers];
    for (const wake of waiting) wake();
    return waiting.length;
  }
}
