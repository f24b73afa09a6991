// For tests of the agent's timed state machines (the reconnecting socket, the relay's and the hub's
// sockets) on vitest's fake timers, against small real servers: only timers and Date are faked — I/O
// stays real — so a test moves the clock past a deadline at once instead of waiting it out, and waits
// only for the network's events (until()).
import { vi } from "vitest";

/** Taken before any test fakes the timers: until() polls with it. */
const realSetTimeout = globalThis.setTimeout;

export function useFakeClock(): void {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
}

/** Waits for `check` to hold while real I/O happens; the error says what never came. */
export async function until(what: string, check: () => boolean): Promise<void> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > 10_000) throw new Error(`${what} never happened (no such event in 10 s of real time)`);
    await new Promise((resolve) => realSetTimeout(resolve, 2));
  }
}

/** Moves the fake clock on, running every timer due on the way (and the promises they settle). */
export async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}
