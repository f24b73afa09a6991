// Each lane's queued ids in order, held in memory by the inbox's store (inbox-store.ts): built by one scan
// of the queue after the object wakes, then kept in step by every write of the store (insert, receipts,
// ack, reject, dead on arrival, replay, drop, expiry, restore), so a lanes socket's pump (lane-pump.ts)
// picks what to send without reading rows: each send reads only its own row. Pure; covered by
// test/worker/websocket-lanes.test.ts.
import type { LaneSummary } from "../../protocol/index.ts";

/** Ids in ascending order; removing the lowest (an ack, mostly) costs no copy. */
export class IdQueue {
  private ids: number[] = [];
  private head = 0;

  get size(): number {
    return this.ids.length - this.head;
  }

  first(): number | null {
    return this.size > 0 ? this.ids[this.head]! : null;
  }

  /** Appended when it is the newest (every new message); else put in its place (a restored or replayed one). */
  add(id: number): void {
    const last = this.size > 0 ? this.ids[this.ids.length - 1]! : -1;
    if (id > last) {
      this.ids.push(id);
      return;
    }
    const at = this.indexOf(id);
    if (this.ids[at] !== id) this.ids.splice(at, 0, id);
  }

  remove(id: number): boolean {
    const at = this.indexOf(id);
    if (this.ids[at] !== id) return false;
    if (at === this.head) {
      this.head += 1;
      // Gaps at the front are let go once they are half the array.
      if (this.head * 2 > this.ids.length) {
        this.ids = this.ids.slice(this.head);
        this.head = 0;
      }
    } else {
      this.ids.splice(at, 1);
    }
    return true;
  }

  *values(): IterableIterator<number> {
    for (let i = this.head; i < this.ids.length; i++) yield this.ids[i]!;
  }

  /** Where `id` is, or would go (binary search over the live part). */
  private indexOf(id: number): number {
    let low = this.head;
    let high = this.ids.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.ids[mid]! < id) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

interface Entry {
  lane: string;
  receivedAt: number;
}

export class LaneIndex {
  private readonly byLane = new Map<string, IdQueue>();
  private readonly entries = new Map<number, Entry>();
  private readonly everyId = new IdQueue();

  add(seq: number, lane: string, receivedAt: number): void {
    if (this.entries.has(seq)) return;
    this.entries.set(seq, { lane, receivedAt });
    this.everyId.add(seq);
    let ids = this.byLane.get(lane);
    if (!ids) this.byLane.set(lane, (ids = new IdQueue()));
    ids.add(seq);
  }

  remove(seq: number): void {
    const entry = this.entries.get(seq);
    if (!entry) return;
    this.entries.delete(seq);
    this.everyId.remove(seq);
    const ids = this.byLane.get(entry.lane)!;
    ids.remove(seq);
    if (ids.size === 0) this.byLane.delete(entry.lane);
  }

  /** A queued message's lane; null when it is not queued. */
  laneOf(seq: number): string | null {
    return this.entries.get(seq)?.lane ?? null;
  }

  /** Whether `lane` holds a queued message. */
  holds(lane: string): boolean {
    return this.byLane.has(lane);
  }

  /** The lowest queued id, or null when nothing is queued. */
  lowest(): number | null {
    return this.everyId.first();
  }

  /** Every lane that holds a queued message, with its ids in order. */
  lanes(): IterableIterator<[string, IdQueue]> {
    return this.byLane.entries();
  }

  /** The lanes that hold messages, the one with the oldest first, at most `max`; `isSent` says which ids the agent holds. */
  summaries(isSent: (seq: number) => boolean, max: number): LaneSummary[] {
    const out: LaneSummary[] = [];
    for (const [lane, ids] of this.byLane) {
      let sent = 0;
      let oldestAt = Number.MAX_SAFE_INTEGER;
      for (const seq of ids.values()) {
        if (isSent(seq)) sent += 1;
        oldestAt = Math.min(oldestAt, this.entries.get(seq)!.receivedAt);
      }
      out.push({ lane, queued: ids.size - sent, sent, oldest_at: oldestAt });
    }
    return out.sort((a, b) => a.oldest_at - b.oldest_at || (a.lane < b.lane ? -1 : 1)).slice(0, max);
  }
}
