// The delivery loop's post slots (local-agent/delivery/post-slots.ts) on fake timers: a 429's hold lets
// the waiting posts through when it ends — also when its timer fires a moment before Date.now() reaches
// the end, as Node's timers do on a busy event loop (they count from the loop's cached time).
import { afterEach, describe, expect, it, vi } from "vitest";
import { PostSlots } from "../../local-agent/delivery/post-slots.ts";

afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` has settled, after the microtasks queued so far ran. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe("a 429's hold", () => {
  it("holds every post until it ends, then lets them through", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const slots = new PostSlots(4);
    slots.hold(1000);
    const waiting = slots.acquire(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(waiting)).toBe(true);
  });

  it("regression: when its timer fires before Date.now() reaches the end, the post asked for after it still goes (it waited for ever: no delivery after a 429 on a loaded machine)", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const slots = new PostSlots(4);
    slots.hold(1000);
    // Date.now() runs 5 ms behind the timers, as a busy event loop's cached time makes them fire early.
    vi.setSystemTime(1_000_000 - 5);
    await vi.advanceTimersByTimeAsync(1000);
    expect(Date.now()).toBeLessThan(1_000_000 + 1000);
    // The message's own 1 s wait ended too: it asks for a slot while the hold has 5 ms left.
    const waiting = slots.acquire(1);
    expect(await settled(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(5);
    expect(await settled(waiting)).toBe(true);
  });
});
