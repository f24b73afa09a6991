// @ts-check
// The inspector's Lanes panel: which lanes (a source's, a gateway conversation) hold messages, from the
// agent's status (waiting, posting, since, the head's next try and last error; each state push) and the
// relay's queue summary (queued, sent; each listing), one row per lane, the oldest first. A lane's name is
// sender-chosen text: set as text only, like everything else on the page. Either side may list none (an
// older agent or relay): the panel shows what the other says, and hides when neither lists a lane.
// Imported by inspector.js; covered by test/node/inspector-lanes.browser.test.ts.
import { cell, el } from "./page-dom.js";
import { ago, clock, duration, oneLine } from "./page-text.js";

/** @typedef {{ lane: string, waiting: number, posting: number, since: number, next_try_at: number | null, last_error: string | null }} AgentLane local-agent/delivery/delivery-status.ts */
/** @typedef {{ lane: string, queued: number, sent: number, oldest_at: number }} RelayLane protocol/queue-item.ts LaneSummary */

/** Rows shown at most; the relay and the agent each list 20. */
const ROWS_SHOWN = 20;

/** @type {AgentLane[]} */
let agentLanes = [];
/** @type {RelayLane[]} */
let relayLanes = [];

/** @param {AgentLane[]} lanes */
export function setAgentLanes(lanes) {
  agentLanes = lanes;
  render();
}

/** @param {RelayLane[]} lanes */
export function setRelayLanes(lanes) {
  relayLanes = lanes;
  render();
}

/** @param {[number, string][]} parts */
const counts = (parts) => parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`).join(", ");

/** @param {number | null} at */
function nextTry(at) {
  if (at === null) return "";
  const ms = at - clock.now();
  return ms > 0 ? `in ${duration(ms)}` : "now";
}

function render() {
  /** @type {Map<string, { lane: string, relay?: RelayLane, agent?: AgentLane, since: number }>} */
  const byLane = new Map();
  for (const relay of relayLanes) byLane.set(relay.lane, { lane: relay.lane, relay, since: relay.oldest_at });
  for (const agent of agentLanes) {
    const seen = byLane.get(agent.lane);
    byLane.set(agent.lane, seen ? { ...seen, agent, since: Math.min(seen.since, agent.since) } : { lane: agent.lane, agent, since: agent.since });
  }
  const lanes = [...byLane.values()].sort((a, b) => a.since - b.since).slice(0, ROWS_SHOWN);
  el("lanes").hidden = lanes.length === 0;
  const body = /** @type {HTMLElement} */ (el("lanes").querySelector("tbody"));
  body.replaceChildren(
    ...lanes.map(({ lane, relay, agent, since }) => {
      const row = document.createElement("tr");
      row.dataset.lane = lane;
      const next = agent?.next_try_at ?? null;
      if (next !== null) row.className = "failing";
      const name = cell("td", oneLine(lane, 60), "mono");
      name.title = lane;
      const error = cell("td", oneLine(agent?.last_error ?? ""), "wrap");
      if (agent?.last_error) error.title = agent.last_error;
      row.append(
        name,
        cell("td", counts([[relay?.queued ?? 0, "queued"], [relay?.sent ?? 0, "sent"]])),
        cell("td", counts([[agent?.waiting ?? 0, "waiting"], [agent?.posting ?? 0, "posting"]])),
        cell("td", ago(clock.now() - since)),
        cell("td", nextTry(next), next === null ? "" : "status-warn"),
        error,
      );
      return row;
    }),
  );
}
