// The lanes block of `clawrelay status`: which lanes (protocol/lanes.ts: a source's, a gateway
// conversation) hold messages, as the relay counts them (queued, sent) and as the agent holds them
// (waiting, posting), since when, the head's next try and its last error — the oldest first, a few lines
// at most. A lane's name holds sender-chosen text (a session key, a source's name) and an error an app's
// answer: both are escaped for the terminal. Pure; imported by cli-status.ts, covered by
// test/node/lanes-display.test.ts.
import type { LaneSummary } from "../../protocol/index.ts";
import type { AgentLane } from "../delivery/delivery-status.ts";
import { formatAge } from "../relay/messages.ts";
import { terminalCut } from "./terminal-text.ts";

/** Lanes shown at most; one more line says how many are left out. */
export const LANES_SHOWN = 8;
const LANE_NAME_WIDTH = 48;
const ERROR_WIDTH = 120;
const INDENT = " ".repeat(10);

interface LaneSeen {
  lane: string;
  relay?: LaneSummary;
  agent?: AgentLane;
  since: number;
}

const counts = (parts: [number, string][], where: string) => {
  const shown = parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return shown.length > 0 ? [`${shown.join(", ")} ${where}`] : [];
};

function laneLine(seen: LaneSeen, now: number): string {
  const { relay, agent } = seen;
  const nextTryAt = agent?.next_try_at ?? null;
  return [
    terminalCut(seen.lane, LANE_NAME_WIDTH),
    ...counts([[relay?.queued ?? 0, "queued"], [relay?.sent ?? 0, "sent"]], "at the relay"),
    ...counts([[agent?.waiting ?? 0, "waiting"], [agent?.posting ?? 0, "posting"]], "here"),
    `oldest ${formatAge(now - seen.since, true)}`,
    ...(nextTryAt !== null ? [nextTryAt > now ? `next try in ${formatAge(nextTryAt - now, true)}` : "next try now"] : []),
    ...(agent?.last_error ? [`last error: ${terminalCut(agent.last_error, ERROR_WIDTH)}`] : []),
  ].join("; ");
}

/**
 * The lanes the relay's summary and the agent's delivery list (either may be absent: an older relay or
 * agent), one line each, the oldest first; none when neither lists any.
 */
export function laneLines(relayLanes: readonly LaneSummary[] | undefined, agentLanes: readonly AgentLane[] | undefined, now: number): string[] {
  const byLane = new Map<string, LaneSeen>();
  for (const relay of relayLanes ?? []) byLane.set(relay.lane, { lane: relay.lane, relay, since: relay.oldest_at });
  for (const agent of agentLanes ?? []) {
    const seen = byLane.get(agent.lane);
    if (seen) byLane.set(agent.lane, { ...seen, agent, since: Math.min(seen.since, agent.since) });
    else byLane.set(agent.lane, { lane: agent.lane, agent, since: agent.since });
  }
  const lanes = [...byLane.values()].sort((a, b) => a.since - b.since || (a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : 0));
  const lines = lanes.slice(0, LANES_SHOWN).map((seen, i) => `${i === 0 ? "lanes".padEnd(INDENT.length) : INDENT}${laneLine(seen, now)}`);
  if (lanes.length > LANES_SHOWN) lines.push(`${INDENT}… ${lanes.length - LANES_SHOWN} more lane(s) (clawrelay messages shows each message's lane)`);
  return lines;
}
