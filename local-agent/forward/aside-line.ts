// One source's set-aside events (set-aside.ts): the ids on the relay's dead shelf in the source's order,
// the replays asked and not yet seen, the frames held until a replay's new id is known; and the reason a
// set-aside event carries on the shelf, which stays true if the agent stops before replaying it. Covered
// by test/node/forward-set-aside.test.ts and forward-set-aside.e2e.test.ts.
import type { Pending } from "../delivery/pending-message.ts";
import type { ForwardTargetStatus } from "./forward-targets.ts";

export interface AsideEntry {
  id: number;
  /** Its place in the source's order: the id it first came with (a replay's new id keeps its original's). */
  key: number;
}

export class AsideLine {
  /** On the dead shelf, by key. */
  private readonly entries: AsideEntry[] = [];
  private readonly ids = new Set<number>();
  /** The head failed while the agent held too much: every frame of the source but its head goes aside, replays too. */
  rejecting = false;
  /** A pass of replays runs (set-aside.ts pass()). */
  running = false;
  /** A replay is being asked: a frame that comes now may be its own, its id not known yet. */
  outstanding = false;
  /** Frames that came while a replay was asked, in order. */
  readonly held: Pending[] = [];
  /** Replays' new ids → their keys, while the source is set aside. */
  readonly replays = new Map<number, number>();
  /** Replays' new ids whose frames have not come yet. */
  readonly unseen = new Set<number>();
  replayed = 0;
  skipped = 0;

  get size(): number {
    return this.entries.length;
  }

  first(): AsideEntry | undefined {
    return this.entries[0];
  }

  /** Adds `id` at its key's place; one already there (a reject the relay sends again) keeps its place. */
  add(id: number, key: number): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    let at = this.entries.length;
    while (at > 0 && this.entries[at - 1]!.key > key) at--;
    this.entries.splice(at, 0, { id, key });
  }

  remove(id: number): void {
    if (!this.ids.delete(id)) return;
    const at = this.entries.findIndex((e) => e.id === id);
    if (at >= 0) this.entries.splice(at, 1);
  }
}

/** Why an event is on the dead shelf, how it comes back by itself, and how to bring it back by hand. */
export function setAsideReason(state: ForwardTargetStatus, id: number, count: number): string {
  const target = state.target.slice(0, 300);
  const byHand = `if the agent stops before that: clawrelay messages replay ${id}`;
  if (state.failing_since === null) {
    return `set aside: events of source "${state.source}" set aside before it, while the app at ${target} failed, are being replayed; it is replayed after them, in order; ${byHand}`;
  }
  const why = state.last_error ? ` (${state.last_error.slice(0, 200)})` : "";
  return (
    `set aside: the app at ${target} has not taken an event since ${new Date(state.failing_since).toISOString()}${why}; ` +
    `${count} events of source "${state.source}" would have held up every other message. The agent replays them, oldest first, when the app answers again; ${byHand}`
  );
}
