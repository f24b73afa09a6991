// The delivery loop's line (delivery.ts): the messages taken from the relay and not finished, waiting in
// arrival (id) order or started, at most one started per conversation (conversation.ts), each started as
// soon as its conversation is free. Covered by test/node/conversations.e2e.test.ts, delivery.e2e.test.ts
// and forward-set-aside.test.ts.
import type { Pending } from "./pending-message.ts";

export interface LineHost {
  /** Runs a started message to its end; never rejects (its errors are the host's to log). */
  run(pending: Pending): Promise<void>;
  /** A started message ended, and the next of its conversation (if any) started. */
  ended(pending: Pending): void;
  /** The counts changed. */
  changed(): void;
  stopping(): boolean;
}

export class ConversationLine {
  /** Taken, not started, in arrival (id) order. */
  private readonly waiting: Pending[] = [];
  /** Started, by id. */
  private readonly active = new Map<number, Promise<void>>();
  /** Conversations with a started message. */
  private readonly busy = new Set<string>();
  /** Ids in the line, or taken out of it and not let go (forget). */
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

  /** Lets go of an id taken out of the line: the relay may send it again. */
  forget(id: number): void {
    this.known.delete(id);
  }

  /** A claimed message at the end of the line; it starts when its conversation is free. */
  add(pending: Pending): void {
    this.waiting.push(pending);
    this.startReady();
  }

  started(conversation: string): boolean {
    return this.busy.has(conversation);
  }

  holds(conversation: string): boolean {
    return this.busy.has(conversation) || this.waiting.some((p) => p.conversation === conversation);
  }

  /** Takes a conversation's waiting messages out of the line, in order (still claimed). */
  take(conversation: string): Pending[] {
    const taken = this.waiting.filter((p) => p.conversation === conversation);
    if (taken.length > 0) this.waiting.splice(0, this.waiting.length, ...this.waiting.filter((p) => p.conversation !== conversation));
    this.host.changed();
    return taken;
  }

  /** Takes every waiting message out of the line and lets go of it. */
  dropWaiting(): Pending[] {
    const dropped = this.waiting.splice(0);
    for (const pending of dropped) this.known.delete(pending.frame.id);
    this.host.changed();
    return dropped;
  }

  /** Resolves when every started message has ended. */
  settled(): Promise<unknown> {
    return Promise.all([...this.active.values()]);
  }

  /** Starts every waiting message whose conversation is free, in arrival order. */
  private startReady(): void {
    for (let i = 0; !this.host.stopping() && i < this.waiting.length; ) {
      const pending = this.waiting[i]!;
      if (this.busy.has(pending.conversation)) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.busy.add(pending.conversation);
      const id = pending.frame.id;
      const run = this.host.run(pending).finally(() => {
        this.active.delete(id);
        this.busy.delete(pending.conversation);
        this.known.delete(id);
        this.startReady();
        this.host.ended(pending);
      });
      this.active.set(id, run);
    }
    this.host.changed();
  }
}
