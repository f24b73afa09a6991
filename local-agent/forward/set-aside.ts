// Setting aside: a source whose app is down must not fill the relay's window. The relay sends the agent
// at most `window` unfinished messages (worker/delivery/socket-session.ts pumps a contiguous id range), so
// a source whose app refuses connections while its events keep coming would hold every other message —
// the gateway's, other sources' — until the app is back. When the agent holds SET_ASIDE_AT of the window
// and a source's head event is failing, that source's waiting events (never its head) go to the relay's
// dead shelf with a reason a person can act on; while the source is set aside each later event of it goes
// there at once (its order survives). Once its head is finished — the app answered — the agent replays
// them through the owner API, oldest first, each under a new id at the queue's end; events arriving
// meanwhile go aside and are replayed in a further pass. Made by forward-delivery.ts; covered by
// test/node/forward-set-aside.test.ts and forward-set-aside.e2e.test.ts.
import { forwardUrl } from "../../protocol/index.ts";
import { nextDelay } from "../backoff.ts";
import { forwardConversation } from "../delivery/conversation.ts";
import type { Rejection } from "../delivery/delivery-status.ts";
import type { EventFields, Pending } from "../delivery/pending-message.ts";
import type { Logger } from "../logger.ts";
import { forwardShownAs } from "./forward-request.ts";
import type { ForwardTargets, ForwardTargetStatus } from "./forward-targets.ts";
import { AsideLine, setAsideReason } from "./aside-line.ts";

/**
 * The share of the relay's window the agent may hold before a failing app's waiting events are set aside.
 * Below it, an app restart costs nothing (its events wait in order here, no replays, no dead shelf); the
 * quarter left keeps the window open for everything else while the head's next failure decides — a
 * failure comes within 250 ms to 5 s, or 30 s once an app has been off for minutes — so other messages
 * keep flowing at their rate meanwhile. Higher, and a busy source could close the window before a
 * failure; lower, and a short outage with an ordinary backlog would already send events to the shelf.
 */
export const SET_ASIDE_AT = 3 / 4;

/** What setting aside needs of the delivery loop (delivery.ts). */
export interface AsideLoop {
  /** The window the relay granted this connection (its `ready` frame). */
  window(): number;
  /** Messages the loop holds unfinished: waiting and started. */
  unfinished(): number;
  /** The conversation has a started message (its head). */
  started(conversation: string): boolean;
  /** The conversation has a started or waiting message. */
  holds(conversation: string): boolean;
  /** Takes the conversation's waiting (not started) messages out of the loop's line, in order. */
  takeWaiting(conversation: string): Pending[];
  /** Puts a replayed event into the loop's line (it was held until its replay's id was known). */
  enqueue(pending: Pending): void;
  /** Rejects a message to the relay's dead shelf; the loop forgets it (the relay may send it again). */
  reject(id: number, rejection: Rejection): void;
  /** Replays a dead message through the owner API: its new id. Throws with `status` for a relay's refusal. */
  replay(id: number): Promise<number>;
}

export interface AsideHost extends AsideLoop {
  targets: ForwardTargets;
  logger: Logger;
  sleep(ms: number): Promise<void>;
  stopping(): boolean;
  emit(pending: Pending, event: EventFields): void;
}

type Replayed = number | "skipped" | "stopped";

export class SetAside {
  /** Sources set aside, by name; gone once every event of theirs is replayed. */
  private readonly lines = new Map<string, AsideLine>();
  private readonly host: AsideHost;

  constructor(host: AsideHost) {
    this.host = host;
  }

  /** Frames held here until a replay's answer says whether they are its own. */
  get held(): number {
    let n = 0;
    for (const line of this.lines.values()) n += line.held.length;
    return n;
  }

  /** Takes a frame of a source that is set aside (true): to the dead shelf, or held; false: the loop's. */
  intercept(pending: Pending): boolean {
    const { id, forward } = pending.frame;
    let awaited: string | null = null;
    for (const [source, line] of this.lines) if (line.unseen.delete(id)) awaited = source;
    const line = forward ? this.lines.get(forward.source) : undefined;
    let taken = false;
    if (line) {
      const key = line.replays.get(id);
      // A frame whose id may be a replay's not yet answered waits for the answer: its place depends on it.
      if (key === undefined && line.outstanding) line.held.push(pending);
      else if (key === undefined || line.rejecting) this.putAside(line, [pending]);
      taken = key === undefined || line.rejecting;
    }
    // A replay on its way has come, or one more event is aside: the next pass may go.
    if (awaited !== null) this.advance(awaited);
    if (taken && forward && awaited !== forward.source) this.advance(forward.source);
    return taken;
  }

  /** Sets aside the waiting events of every failing source whose head is started, when the agent holds too much. */
  relieve(): void {
    const { host } = this;
    if (host.unfinished() + this.held < Math.ceil(host.window() * SET_ASIDE_AT)) return;
    for (const state of host.targets.live()) {
      const conversation = forwardConversation(state.source);
      if (state.failing_since === null || !host.started(conversation)) continue;
      const waiting = host.takeWaiting(conversation);
      if (waiting.length === 0) continue;
      const line = this.lineOf(state.source);
      line.rejecting = true;
      this.putAside(line, waiting);
      host.logger.warn("set aside the events of a failing app", {
        source: state.source, target: state.target, events: waiting.length, set_aside: line.size, held: host.unfinished() + this.held, window: host.window(),
        next: "replayed when the app answers again",
      });
    }
  }

  /** The source's head is finished (taken, refused, expired): its set-aside events may be replayed. */
  headFinished(source: string): void {
    this.advance(source);
  }

  /** The socket dropped: the relay sends every unacknowledged frame again, held ones too. */
  dropHeld(): Pending[] {
    const dropped: Pending[] = [];
    for (const line of this.lines.values()) dropped.push(...line.held.splice(0));
    return dropped;
  }

  private lineOf(source: string): AsideLine {
    let line = this.lines.get(source);
    if (!line) this.lines.set(source, (line = new AsideLine()));
    return line;
  }

  private stateOf(pending: Pending): ForwardTargetStatus {
    const forward = pending.frame.forward!;
    return this.host.targets.find(forward.source) ?? this.host.targets.seen(forward.source, forward.target);
  }

  /** To the dead shelf, each under its place in its source's order (its first id, kept across replays). */
  private putAside(line: AsideLine, pendings: Pending[]): void {
    if (pendings.length === 0) return;
    for (const { frame } of pendings) line.add(frame.id, line.replays.get(frame.id) ?? frame.id);
    const state = this.stateOf(pendings[0]!);
    state.set_aside = line.size;
    for (const pending of pendings) {
      const forward = pending.frame.forward!;
      const reason = setAsideReason(state, pending.frame.id, line.size);
      this.host.reject(pending.frame.id, { reason, status: 0, attempts: 0 });
      this.host.emit(pending, { outcome: "rejected", subpath: forwardShownAs(forward), status: 0, attempts: 0, detail: reason, target: forwardUrl(forward.target, forward.tail) ?? forward.target, method: forward.method });
    }
  }

  /**
   * May the next set-aside event of `source` be replayed now? Not while replays already on their way are
   * to go aside (they come first); not while the app is failing and something of the source is there to
   * find out when it answers. With nothing there, one is replayed, to be the head that finds out.
   */
  private mayReplay(source: string, line: AsideLine): boolean {
    if (this.host.stopping() || line.size === 0) return false;
    if (line.rejecting && line.unseen.size > 0) return false;
    const failing = (this.host.targets.find(source)?.failing_since ?? null) !== null;
    return !failing || (!this.host.holds(forwardConversation(source)) && line.unseen.size === 0);
  }

  private advance(source: string): void {
    const line = this.lines.get(source);
    if (!line || line.running) return;
    if (!this.mayReplay(source, line)) return this.endIfDone(source, line);
    line.running = true;
    // After an error nothing goes on by itself (no tight loop): the source's next event or head does it.
    this.pass(source, line)
      .then(() => {
        line.running = false;
        if (!this.host.stopping()) this.advance(source);
      })
      .catch((err: unknown) => {
        line.running = false;
        this.host.logger.error("replaying set-aside events failed", { source, error: String(err) });
      });
  }

  /** Replays the source's set-aside events oldest first, one at a time, while mayReplay says so. */
  private async pass(source: string, line: AsideLine): Promise<void> {
    if (this.mayReplay(source, line)) this.host.logger.info("replaying set-aside events", { source, set_aside: line.size });
    while (this.mayReplay(source, line)) {
      const next = line.first()!;
      // Replays go to the loop's line now, not aside: the app answers (or one is needed to ask it).
      line.rejecting = false;
      line.outstanding = true;
      let replayed: Replayed;
      try {
        replayed = await this.replayOne(source, next.id);
      } finally {
        line.outstanding = false;
      }
      if (replayed === "stopped") return;
      line.remove(next.id);
      if (typeof replayed === "number") {
        line.replays.set(replayed, next.key);
        line.unseen.add(replayed);
        line.replayed++;
      } else line.skipped++;
      const state = this.host.targets.find(source);
      if (state) state.set_aside = line.size;
      this.sortHeld(line);
    }
  }

  /** Frames that came while a replay was asked: its own go to the loop, the rest aside. */
  private sortHeld(line: AsideLine): void {
    const aside: Pending[] = [];
    for (const pending of line.held.splice(0)) {
      line.unseen.delete(pending.frame.id);
      if (line.replays.has(pending.frame.id) && !line.rejecting) this.host.enqueue(pending);
      else aside.push(pending);
    }
    this.putAside(line, aside);
  }

  private async replayOne(source: string, id: number): Promise<Replayed> {
    for (let attempt = 0; ; attempt++) {
      if (this.host.stopping()) return "stopped";
      try {
        return await this.host.replay(id);
      } catch (err) {
        const status = (err as { status?: unknown }).status;
        const error = (err as Error).message;
        // Refused for good (gone: the owner dropped or replayed it; or the key is no longer the inbox's).
        if (typeof status === "number" && status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429) {
          this.host.logger.warn("a set-aside event could not be replayed; skipped", { id, source, error });
          return "skipped";
        }
        // The relay is unreachable, or has not shelved it yet (409 not_dead: the reject is on its way).
        const wait = nextDelay(attempt);
        this.host.logger.warn("replaying a set-aside event failed; trying again", { id, source, error, retry_in_ms: wait });
        await this.host.sleep(wait);
      }
    }
  }

  private endIfDone(source: string, line: AsideLine): void {
    if (line.running || line.outstanding || line.size > 0 || line.held.length > 0 || (line.rejecting && line.unseen.size > 0)) return;
    this.lines.delete(source);
    const state = this.host.targets.find(source);
    if (state) state.set_aside = 0;
    this.host.logger.info("set-aside events replayed", { source, replayed: line.replayed, skipped: line.skipped });
  }
}
