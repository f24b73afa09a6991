// Lanes: every destination of an inbox's messages flows on its own. A message's lane is decided once,
// when the relay accepts it: a webhook source's events are the source's lane (whether they go to a local
// app or to the gateway); every other message is its gateway conversation (conversation-key.ts). The relay
// sends any queued message whose lane has room (worker/delivery/), so a hanging or failing app holds only
// its own lane's share of the connection's window; the agent keeps order within a lane and posts lanes
// independently (local-agent/delivery/). Shared by the relay and the agent; pure. An agent and a relay
// that both name PROTOCOL_FEATURES.lanes use lanes; any other pair keeps the one-range order of before.
// Covered by test/protocol/lanes.test.ts.
import { conversationKey } from "./conversation-key.ts";
import type { ConversationSource } from "./conversation-key.ts";

/** What an agent names in its auth frame and a relay in its ready frame (`features`). */
export const PROTOCOL_FEATURES = {
  /** Per-destination lanes: frames carry `lane` and `floor`; the relay may send `abandon`. */
  lanes: "lanes",
  /** Live requests (live.ts): the relay may send `request` frames; the agent answers with `answer` frames. */
  live: "live",
} as const;

export type ProtocolFeature = (typeof PROTOCOL_FEATURES)[keyof typeof PROTOCOL_FEATURES];

/** A source's lane: its events keep their order, whichever target they go to. */
export function sourceLane(source: string): string {
  return `source:${source}`;
}

/** The lane a message belongs to: its source's, or its gateway conversation. */
export function laneOf(input: { source: string } | ConversationSource): string {
  return "source" in input ? sourceLane(input.source) : conversationKey(input);
}

/**
 * How many unacknowledged messages one lane may hold of a connection's window. A quarter: three lanes
 * stuck on hanging apps still leave a quarter of the window to everything else, and an ordered lane
 * (posted one at a time) has its next messages at hand. A source whose order does not matter may hold
 * half, to post several at once.
 */
export function laneShare(window: number, ordered: boolean): number {
  return Math.max(1, Math.ceil(window / (ordered ? 4 : 2)));
}

/**
 * How a source's forwarded events are posted (the source's settings; defaults when it has none):
 * each post's time limit, how many answered failures (5xx, time-outs, resets) its head may have before it
 * goes to the dead shelf, and whether its events must be posted in order.
 */
export const FORWARD_POLICY = {
  /** A post with no answer within this is a failure. */
  timeoutSec: 30,
  timeoutSecMax: 300,
  /**
   * Retries after the first failed post: nine failures in all, with the target's back-off (twice at once,
   * then 250 ms doubling) about half a minute of waiting plus the posts' own time (a time-out each at most):
   * enough for an app's quick restart, short enough that an event the app can never take holds its lane
   * minutes, not the days of its TTL. A refused connection (nothing listening) spends none of it.
   */
  retries: 8,
  retriesMax: 100,
} as const;
