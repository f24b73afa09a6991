// What became of this agent's last live requests, in memory (the last LIVE_OUTCOMES_KEPT): a held copy of
// one (DeliveryFrame.live_rid, delivery/held-copy.ts) is settled by it — acknowledged when the target took
// the request (2xx), to the dead shelf when it refused it (a 4xx but 408 and 429), posted as any event
// otherwise. One still under way is waited for. A restart forgets them all: a held copy then is posted
// (docs/live.md says so: an app still working on a request when its agent restarted may see it twice).
// Pure; imported by agent-live.ts; covered by test/node/live-outcomes.test.ts.
import type { HeldVerdict } from "../delivery/held-copy.ts";

export const LIVE_OUTCOMES_KEPT = 1024;

/** How a live request ended: the target's status (null: none came) and what it said, or why it failed. */
export interface LiveSettled {
  status: number | null;
  /** The answer's first words, or the failure's message. */
  detail: string;
  /** A failure's code (answer_too_large, unreachable …); null when answered. */
  failure: string | null;
}

interface Entry {
  settled: LiveSettled | null;
  done: Promise<LiveSettled>;
  resolve(settled: LiveSettled): void;
}

export class LiveOutcomes {
  private readonly entries = new Map<string, Entry>();
  private readonly kept: number;

  constructor(kept = LIVE_OUTCOMES_KEPT) {
    this.kept = kept;
  }

  /** A live request is under way. */
  begin(rid: string): void {
    let resolve: (settled: LiveSettled) => void = () => {};
    const done = new Promise<LiveSettled>((r) => (resolve = r));
    const entry: Entry = {
      settled: null,
      done,
      resolve: (settled) => {
        entry.settled = settled;
        resolve(settled);
      },
    };
    this.entries.delete(rid);
    this.entries.set(rid, entry);
    // The oldest go first; one still waited for resolves its waiters all the same.
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.kept) break;
      this.entries.delete(oldest);
    }
  }

  settle(rid: string, settled: LiveSettled): void {
    const entry = this.entries.get(rid);
    if (entry && entry.settled === null) entry.resolve(settled);
  }

  /** Its outcome once it is finished; null when this agent does not know it (too old, or another process's). */
  outcome(rid: string): Promise<LiveSettled> | null {
    return this.entries.get(rid)?.done ?? null;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Under way now. */
  get inFlight(): number {
    let n = 0;
    for (const entry of this.entries.values()) if (entry.settled === null) n++;
    return n;
  }

  /** What to do with a held copy of `rid` (waits for it while it is under way). */
  async verdict(rid: string, messageId: number): Promise<HeldVerdict> {
    const pending = this.outcome(rid);
    return pending === null ? { action: "post" } : heldVerdict(await pending, messageId);
  }
}

/** The held copy's fate by the live request's outcome (design: "Late answers"). */
export function heldVerdict(settled: LiveSettled, messageId?: number): HeldVerdict {
  const { status } = settled;
  if (status === null) return { action: "post" };
  if (status >= 200 && status < 300) return { action: "ack", status };
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
    const said = settled.detail ? `: ${settled.detail}` : "";
    const replay = messageId === undefined ? "clawrelay messages replay ID" : `clawrelay messages replay ${messageId}`;
    return { action: "reject", status, reason: `the target refused this request with ${status}${said} when it came live (its sender was told it was held, so it was not posted again). Once the target takes such requests: ${replay}` };
  }
  return { action: "post" };
}
