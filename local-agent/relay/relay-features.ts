// What this agent speaks beyond the first protocol, named in its auth frame (protocol/lanes.ts
// PROTOCOL_FEATURES): lanes, and live requests (protocol/live.ts). A relay names back in `ready` those it
// speaks too; an older relay names none, and the socket then works as before either. Pure; imported by
// relay-client.ts; covered by test/node/relay-client-lanes.test.ts and relay-client-live.test.ts.
import { PROTOCOL_FEATURES } from "../../protocol/index.ts";
import type { ReadyFrame } from "../../protocol/index.ts";

export const AGENT_FEATURES: string[] = [PROTOCOL_FEATURES.lanes, PROTOCOL_FEATURES.live];

export interface SpokenFeatures {
  /** Per-destination lanes: ids arrive and finish out of order, the cursor moves by `floor`. */
  lanes: boolean;
  /** The relay may send `request` frames on this socket. */
  live: boolean;
}

export function spokenFeatures(ready: Pick<ReadyFrame, "features">): SpokenFeatures {
  const named = Array.isArray(ready.features) ? ready.features : [];
  return { lanes: named.includes(PROTOCOL_FEATURES.lanes), live: named.includes(PROTOCOL_FEATURES.live) };
}
