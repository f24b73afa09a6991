// The delivery loop's line (delivery.ts): the messages taken from the relay and not finished, waiting in
// arrival (id) order or started. A message's conversation is its lane (pending-message.ts): at most one
// started per conversation — or, for a source whose order does not matter, as many as the host allows —
// each started as soon as its conversation has room. An abandoned message (the relay took it back) leaves
// the line at once, started or not, and its conversation moves on. Covered by
// test/node/conversations.e2e.test.ts, delivery.e2e.test.ts and delivery-abandon.test.ts.
import { AGENT_LANES_LISTED } from "./delivery-status.ts";
import type { AgentLane } from "./delivery-status.ts";
import type { Pending } from "./pending-message.ts";

export interface LineHost {
  /** Runs a started message to its end; never rejects (its errors are the host's to log). */
  run(pending: Pending): Promise<void>;
  /** How many of this message's conversation may be started at once (1: one at a time, in order). */
  parallel(pending: Pending): number;
  /** The counts changed. */
  changed(): void;
  stopping(): boolean;
}

export class ConversationLine {
  /** Taken, not started, in arrival (id) order. */
  private readonly waiting: Pending[] = [];
  /** Started and not abandoned, by id. */
  private readonly active = new Map<number, { pending: Pending; run: Promise<void> }>();
  /** Started messages per conversation. */
  private readonly busy = new Map<string, number>();
  /** Ids in the line (waiting or started). */
  private readonly known = new Set<number>();
  private readonly host: LineHost;

  constructor(host: LineHost) {
    this.host = host;
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  get startedCount(): number {
    return this.active.size;
  }

  /** False when `id` is here already (the relay sent it again); else it is now. */
  claim(id: number): boolean {
    if (this.known.has(id)) return false;
    this.known.add(id);
    return true;
  }

  /** A claimed message at the end of the line; it starts when its conversation has room. */
  add(pending: Pending): void {
    this.waiting.push(pending);
    this.startReady();
  }

  /**
   * The relay took message `id` back: a waiting one leaves the line; a started one is told (its abort
   * signal) and let go of — whatever its run does later is no longer the line's — and its conversation
   * moves on. Either way the relay may send it again. Answers what it was.
   */
  abandon(id: number): "waiting" | "started" | null {
    const at = this.waiting.findIndex((p) => p.frame.id === id);
    if (at >= 0) {
      this.waiting.splice(at, 1);
      this.known.delete(id);
      this.host.changed();
      return "waiting";
    }
    const entry = this.active.get(id);
    if (!entry) return null;
    entry.pending.abort.abort();
    this.end(entry.pending);
    return "started";
  }

  /** Takes every waiting message out of the line and lets go of it. */
  dropWaiting(): Pending[] {
    const dropped = this.waiting.splice(0);
    for (const pending of dropped) this.known.delete(pending.frame.id);
    this.host.changed();
    return dropped;
  }

  /** Resolves when every started message (not abandoned) has ended. */
  settled(): Promise<unknown> {
    return Promise.all([...this.active.values()].map((entry) => entry.run));
  }

  /** The lanes held, oldest first (by their oldest message's receipt at the relay), at most AGENT_LANES_LISTED. */
  lanes(): AgentLane[] {
    const byLane = new Map<string, AgentLane>();
    const note = (pending: Pending, started: boolean) => {
      let lane = byLane.get(pending.conversation);
      if (!lane) byLane.set(pending.conversation, (lane = { lane: pending.conversation, waiting: 0, posting: 0, since: pending.frame.received_at, next_try_at: null, last_error: null }));
      if (started) lane.posting++;
      else lane.waiting++;
      lane.since = Math.min(lane.since, pending.frame.received_at);
      if (pending.nextTryAt !== null) lane.next_try_at = Math.min(lane.next_try_at ?? Infinity, pending.nextTryAt);
      lane.last_error ??= pending.lastError;
    };
    for (const { pending } of [...this.active.values()].sort((a, b) => a.pending.frame.id - b.pending.frame.id)) note(pending, true);
    for (const pending of this.waiting) note(pending, false);
    return [...byLane.values()].sort((a, b) => a.since - b.since).slice(0, AGENT_LANES_LISTED);
  }

  /** A started message ended or was abandoned: its conversation has room again. */
  private end(pending: Pending): void {
    const { id } = pending.frame;
    this.active.delete(id);
    this.known.delete(id);
    const started = (this.busy.get(pending.conversation) ?? 1) - 1;
    if (started > 0) this.busy.set(pending.conversation, started);
    else this.busy.delete(pending.conversation);
    this.startReady();
  }

  /** Starts every waiting message whose conversation has room, in arrival order. */
  private startReady(): void {
    for (let i = 0; !this.host.stopping() && i < this.waiting.length; ) {
      const pending = this.waiting[i]!;
      const started = this.busy.get(pending.conversation) ?? 0;
      if (started >= this.host.parallel(pending)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.busy.set(pending.conversation, started + 1);
      const entry = { pending, run: Promise.resolve() };
      entry.run = this.host.run(pending).finally(() => {
        // An abandoned message was let go of when it was abandoned; its id may be another run's now.
        if (this.active.get(pending.frame.id) === entry) this.end(pending);
      });
      this.active.set(pending.frame.id, entry);
    }
    this.host.changed();
  }
}
