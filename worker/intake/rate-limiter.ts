// Per-sender sliding-window rate limit (the hub's rule: 20 messages a minute by default).
// Held in memory: an evicted inbox forgets recent counts, which errs on the side of accepting.
const WINDOW_MS = 60_000;
const MAX_TRACKED_SENDERS = 10_000;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSec: number };

export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  check(sender: string, perMinute: number, nowMs: number): RateDecision {
    const recent = (this.hits.get(sender) ?? []).filter((t) => nowMs - t < WINDOW_MS);
    if (recent.length >= perMinute) {
      this.hits.set(sender, recent);
      const retryAfterSec = Math.max(1, Math.ceil((recent[0]! + WINDOW_MS - nowMs) / 1000));
      return { allowed: false, retryAfterSec };
    }
    recent.push(nowMs);
    if (!this.hits.has(sender) && this.hits.size >= MAX_TRACKED_SENDERS) this.prune(nowMs);
    this.hits.set(sender, recent);
    return { allowed: true };
  }

  /** Takes back the newest hit counted for `sender` (a message that turned out to be a repeat). */
  uncount(sender: string): void {
    this.hits.get(sender)?.pop();
  }

  private prune(nowMs: number): void {
    for (const [sender, times] of this.hits) {
      if (times.every((t) => nowMs - t >= WINDOW_MS)) this.hits.delete(sender);
    }
    if (this.hits.size >= MAX_TRACKED_SENDERS) this.hits.clear();
  }
}
