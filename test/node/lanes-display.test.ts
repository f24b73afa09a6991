// What a person sees of lanes (issue 30) in `clawrelay status` and `clawrelay messages`: which lanes wait,
// as the relay counts them (queued, sent) and as the agent holds them (waiting, posting), since when, the
// head's next try and last error, the oldest first and a few lines at most; each message's lane in the
// listing and in `messages show`. A lane's name is sender-chosen text (a hook body's sessionKey, a session
// key, a source's name), so a hostile one full of escape sequences is shown escaped, never acted on; the
// same for an app's error text. Without lanes (an older relay or agent) the output is as before.
import { describe, expect, it } from "vitest";
import type { LaneSummary, QueueItem } from "../../protocol/index.ts";
import type { AgentStatusAnswer } from "../../local-agent/agent-status.ts";
import type { AgentLane } from "../../local-agent/delivery/delivery-status.ts";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import { LANES_SHOWN, laneLines } from "../../local-agent/cli/status-lanes.ts";
import { terminalCut, terminalSafe } from "../../local-agent/cli/terminal-text.ts";
import { messageDetail, messagesTable } from "../../local-agent/relay/messages.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
/** Clears the screen, sets the window title, recolours, reorders text right-to-left, rings the bell: all sender-chosen. */
const HOSTILE = "agent:main:\u001b[2J\u001b]0;pwned\u0007\u001b[31mred\u202egnp.exe\u009b1m";
/** Any control character or bidi override that would act on a terminal, apart from the newlines between lines. */
const ACTING = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function relayLane(over: Partial<LaneSummary> & { lane: string }): LaneSummary {
  return { queued: 0, sent: 0, oldest_at: NOW - 60_000, ...over };
}

function agentLane(over: Partial<AgentLane> & { lane: string }): AgentLane {
  return { waiting: 0, posting: 0, since: NOW - 60_000, next_try_at: null, last_error: null, ...over };
}

function statusAnswer(relayLanes: LaneSummary[] | undefined, agentLanes: AgentLane[] | undefined): AgentStatusAnswer {
  const delivery = {
    counted_since: NOW - 3_600_000, delivered: 12, rejected: 0, last_delivery: null, paused: null, recent_rejections: [], last_error: null,
    queued: 3, in_flight: 1, concurrency: 4, gateway_down: null, lanes: agentLanes ?? [], cursor: 41, forwards: [],
  };
  // An agent from before lanes reports no `lanes` at all.
  if (agentLanes === undefined) Reflect.deleteProperty(delivery, "lanes");
  return {
    agent_id: "ag_0123456789ab",
    runs_in: "standalone",
    relay: { url: "http://relay.test", state: "connected", since: NOW - 60_000, backlog: 0, error: null },
    gateway: { port: 18789, hooks_path: "/hooks", config_path: null, auth_source: "none", config_error: null, problem: null },
    delivery,
    delegation: { waiting: 0, late_results_dropped: 0 },
    hub: { mode: null, watch: { state: "off", url: "", since: NOW, last_update_at: null, updates: 0, error: null }, credentials: null },
    api_port: 19791,
    started_at: NOW - 3_600_000,
    relay_queue: { queued: 3, sent: 1, dead: 0, oldest_waiting_at: NOW - 180_000, ...(relayLanes ? { lanes: relayLanes } : {}) },
    relay_hub: null,
  };
}

function item(id: number, lane: string | undefined): QueueItem {
  return {
    id, state: "queued", kind: "hook", subpath: "agentgram_inbox/agent", content_type: "application/json", size: 20, received_at: NOW - 90_000, expires_at: NOW + 86_400_000,
    sender: null, msg_id: null, type: null, attempts: 0, reason: null, last_status: null, dead_at: null, replay_of: null, ...(lane !== undefined ? { lane } : {}),
  };
}

describe("terminal-safe text", () => {
  it("shows every control character and bidi override as a visible escape, and leaves other text as it is", () => {
    expect(terminalSafe(HOSTILE)).toBe("agent:main:\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mred\\u202egnp.exe\\x9b1m");
    expect(terminalSafe("source:stripe — ünïcode ✓ 🦀")).toBe("source:stripe — ünïcode ✓ 🦀");
  });

  it("cuts to a width in code points (never half an emoji), with an ellipsis", () => {
    expect(terminalCut("🦀🦀🦀🦀", 3)).toBe("🦀🦀…");
    expect(terminalCut("short", 10)).toBe("short");
    expect(terminalCut("\u001b[31m", 5)).toBe("\\x1b…");
    expect(terminalCut("ab\u001b[31m", 5)).toBe("ab…");
  });
});

describe("clawrelay status: the lanes block", () => {
  it("says which lanes wait, at the relay and here, since when, the head's next try and last error, the oldest first", () => {
    const lines = laneLines(
      [relayLane({ lane: "agent:main:dm:ag_feedfacecafe", queued: 2, oldest_at: NOW - 30_000 }), relayLane({ lane: "source:stripe", queued: 120, sent: 32, oldest_at: NOW - 170_000 })],
      [agentLane({ lane: "source:stripe", waiting: 31, posting: 1, since: NOW - 180_000, next_try_at: NOW + 4000, last_error: "the app answered 503: maintenance" }), agentLane({ lane: "source:github", posting: 1, since: NOW - 5000 })],
      NOW,
    );
    expect(lines).toEqual([
      "lanes     source:stripe; 120 queued, 32 sent at the relay; 31 waiting, 1 posting here; oldest 3 min; next try in 4 s; last error: the app answered 503: maintenance",
      "          agent:main:dm:ag_feedfacecafe; 2 queued at the relay; oldest 30 s",
      "          source:github; 1 posting here; oldest 5 s",
    ]);
  });

  it("is at most a few lines: the oldest lanes, then how many more", () => {
    const many = Array.from({ length: 14 }, (_, i) => relayLane({ lane: `subpath:hook-${i}`, queued: 1, oldest_at: NOW - (i + 1) * 1000 }));
    const lines = laneLines(many, [], NOW);
    expect(lines).toHaveLength(LANES_SHOWN + 1);
    expect(lines[0]).toMatch(/^lanes {5}subpath:hook-13;/);
    expect(lines[LANES_SHOWN - 1]).toMatch(/^ {10}subpath:hook-6;/);
    expect(lines[LANES_SHOWN]).toBe("          … 6 more lane(s) (clawrelay messages shows each message's lane)");
  });

  it("escapes a hostile lane name and error text: nothing on the status reaches the terminal as a control", () => {
    const text = statusText(
      statusAnswer([relayLane({ lane: HOSTILE, queued: 4 })], [agentLane({ lane: HOSTILE, posting: 1, last_error: "the app answered 500: \u001b[1;1H\u001b[2Kall good" })]),
      4242,
      NOW,
    );
    expect(text).not.toMatch(ACTING);
    const lanes = text.split("\n").filter((line) => line.startsWith("lanes "));
    expect(lanes).toEqual(["lanes     agent:main:\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mred…; 4 queued at the relay; 1 posting here; oldest 60 s; last error: the app answered 500: \\x1b[1;1H\\x1b[2Kall good"]);
  });

  it("cuts a long lane name so the line stays readable", () => {
    const [line] = laneLines([relayLane({ lane: `source:${"x".repeat(200)}`, queued: 1 })], undefined, NOW);
    expect(line).toBe(`lanes     source:${"x".repeat(40)}…; 1 queued at the relay; oldest 60 s`);
  });

  it("is left out when neither the relay nor the agent lists a lane (an older relay and agent, or nothing waits)", () => {
    const before = statusText(statusAnswer(undefined, undefined), 1, NOW);
    expect(before).not.toMatch(/^lanes/m);
    expect(statusText(statusAnswer([], []), 1, NOW)).toBe(before);
    // Either side alone is enough.
    expect(statusText(statusAnswer(undefined, [agentLane({ lane: "source:stripe", waiting: 2 })]), 1, NOW)).toMatch(/^lanes {5}source:stripe; 2 waiting here; oldest 60 s$/m);
    expect(statusText(statusAnswer([relayLane({ lane: "source:stripe", queued: 2 })], undefined), 1, NOW)).toMatch(/^lanes {5}source:stripe; 2 queued at the relay; oldest 60 s$/m);
  });
});

describe("clawrelay messages: each message's lane", () => {
  it("lists a lane column, escaped and cut, when the relay reports lanes", () => {
    const table = messagesTable([item(7, "source:stripe"), item(8, HOSTILE), item(9, `agent:main:${"y".repeat(80)}`)], NOW);
    const [header, ...rows] = table.split("\n");
    expect(header).toMatch(/^ID\s+STATE\s+SUB-PATH\s+LANE\s+SIZE\s+AGE\s+ATTEMPTS\s+REASON$/);
    expect(rows[0]).toMatch(/^7\s+queued\s+agentgram_inbox\/agent\s+source:stripe\s+20\s+90s\s+0$/);
    expect(rows[1]).toContain("agent:main:\\x1b[2J\\x1b]0;pwned…");
    expect(rows[2]).toContain(`agent:main:${"y".repeat(20)}…`);
    expect(table).not.toMatch(ACTING);
  });

  it("has no lane column from an older relay", () => {
    expect(messagesTable([item(7, undefined)], NOW).split("\n")[0]).toMatch(/^ID\s+STATE\s+SUB-PATH\s+SIZE\s+AGE\s+ATTEMPTS\s+REASON$/);
  });

  it("messages show prints the lane, escaped", () => {
    const shown = messageDetail({ message: item(8, HOSTILE), body: "{}", encoding: "utf8" });
    expect(shown).toContain("lane:         agent:main:\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mred\\u202egnp.exe\\x9b1m\n");
    expect(shown.split("\n").slice(0, 3)).toEqual(["id:           8", "state:        queued", "lane:         agent:main:\\x1b[2J\\x1b]0;pwned\\x07\\x1b[31mred\\u202egnp.exe\\x9b1m"]);
    expect(messageDetail({ message: item(8, undefined), body: "{}", encoding: "utf8" })).not.toContain("lane:");
  });
});
