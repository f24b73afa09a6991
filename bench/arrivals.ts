// Arrival times by key, awaited by whoever expects them: delivery frames by msg_id (relay scenario) and
// hooks at the stand-in gateway by Idempotency-Key (agent scenario). A key may arrive before it is asked for.
export class Arrivals {
  private readonly early = new Map<string, number>();
  private readonly waiters = new Map<string, (at: number) => void>();
  duplicates = 0;

  arrived(key: string, at = performance.now()): void {
    const waiter = this.waiters.get(key);
    if (waiter) waiter(at);
    else if (this.early.has(key)) this.duplicates++;
    else this.early.set(key, at);
  }

  arrival(key: string, timeoutMs: number): Promise<number> {
    const at = this.early.get(key);
    this.early.delete(key);
    return new Promise((resolve, reject) => {
      if (at !== undefined) return resolve(at);
      const timer = setTimeout(() => (this.waiters.delete(key), reject(new Error(`${key} did not arrive within ${timeoutMs} ms`))), timeoutMs);
      this.waiters.set(key, (arrivedAt) => (clearTimeout(timer), this.waiters.delete(key), resolve(arrivedAt)));
    });
  }
}
