// What a lanes socket (socket-session.ts) is sent next: the oldest queued ids of each lane that are not
// in flight, while the lane holds fewer than its share of the window (protocol/lanes.ts laneShare) and
// the connection fewer than the window, oldest first across lanes. A lane whose messages are never
// acknowledged (a hanging app) so holds its share and no more; the others keep flowing. Memory only:
// the lanes come from the store's index (storage/lane-index.ts). Pure; covered by
// test/worker/websocket-lanes.test.ts.
import { laneShare, sourceLane } from "../../protocol/index.ts";
import type { LaneIndex } from "../storage/lane-index.ts";
import type { ForwardTargets } from "./delivery-frame.ts";

const SOURCE_LANE_PREFIX = sourceLane("");

/**
 * Whether a lane's messages are posted one at a time: all are but the lane of a source forwarded to a
 * local app whose owner said its order does not matter (`ordered: false`), which may hold half the window.
 */
export function laneOrdered(lane: string, targets: ForwardTargets): boolean {
  if (!lane.startsWith(SOURCE_LANE_PREFIX)) return true;
  return targets(lane.slice(SOURCE_LANE_PREFIX.length))?.ordered !== false;
}

/** Inserts `id` into the ascending `best`, keeping at most `max`. */
function keepSmallest(best: number[], id: number, max: number): void {
  let at = best.length;
  while (at > 0 && best[at - 1]! > id) at -= 1;
  best.splice(at, 0, id);
  if (best.length > max) best.pop();
}

/** The ids to send now, ascending, given what is in flight on the socket. */
export function nextToSend(index: LaneIndex, inFlight: readonly number[], window: number, targets: ForwardTargets): number[] {
  const free = window - inFlight.length;
  if (free <= 0) return [];
  const held = new Set(inFlight);
  const heldPerLane = new Map<string, number>();
  for (const id of inFlight) {
    const lane = index.laneOf(id);
    if (lane !== null) heldPerLane.set(lane, (heldPerLane.get(lane) ?? 0) + 1);
  }
  const best: number[] = [];
  for (const [lane, ids] of index.lanes()) {
    let room = laneShare(window, laneOrdered(lane, targets)) - (heldPerLane.get(lane) ?? 0);
    for (const id of ids.values()) {
      if (room <= 0 || (best.length === free && id > best[free - 1]!)) break;
      if (held.has(id)) continue;
      keepSmallest(best, id, free);
      room -= 1;
    }
  }
  return best;
}
