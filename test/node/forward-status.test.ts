// How forward targets are reported: `clawrelay status` prints one line per forwarding source (its target,
// the app's last answer and its age, how long it has been refusing connections or failing, its head's
// failures of the retry budget and its next try; nothing of set-aside events any more), and `clawrelay
// doctor` asks the running agent (found through run.json, as `status` finds it) and WARNs of a target
// failing for more than a minute, naming it, since when, the last error and the fixes; of a failing head,
// the retries spent and when it goes to the dead shelf. The no-gateway line of `status` too.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentStatusAnswer } from "../../local-agent/agent-status.ts";
import { forwardLines, statusText } from "../../local-agent/cli/cli-status.ts";
import { forwardChecks, forwardingChecks } from "../../local-agent/doctor/doctor-forward.ts";
import { findRunningAgent } from "../../local-agent/cli/running-agent.ts";
import type { Check } from "../../local-agent/doctor/doctor.ts";
import type { ForwardTargetStatus } from "../../local-agent/forward/forward-targets.ts";
import type { Identity } from "../../local-agent/identity.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function target(over: Partial<ForwardTargetStatus> = {}): ForwardTargetStatus {
  return { source: "stripe", target: "http://127.0.0.1:3000/webhooks", last_answer: null, failing_since: null, last_error: null, delivered: 0, rejected: 0, next_try_at: null, head_failures: 0, ...over };
}

const refusing = target({
  last_answer: { status: 200, detail: "ok", at: NOW - 20 * 60_000, id: 41 },
  failing_since: NOW - 3 * 60_000,
  last_error: "connection refused by 127.0.0.1:3000 (is the app running?)",
  delivered: 12,
});

function statusAnswer(forwards: ForwardTargetStatus[], gatewayProblem: string | null = null): AgentStatusAnswer {
  return {
    agent_id: "ag_0123456789ab",
    runs_in: "standalone",
    relay: { url: "http://relay.test", state: "connected", since: NOW - 60_000, backlog: 0, error: null },
    gateway: { port: 18789, hooks_path: "/hooks", config_path: null, auth_source: "none", config_error: null, problem: gatewayProblem },
    delivery: {
      counted_since: NOW - 3_600_000, delivered: 12, rejected: 0, last_delivery: null, paused: null, recent_rejections: [], last_error: null,
      queued: 3, in_flight: 1, concurrency: 4, gateway_down: null, lanes: [], cursor: 41, forwards,
    },
    delegation: { waiting: 0, late_results_dropped: 0 },
    hub: { mode: null, watch: { state: "off", url: "", since: NOW, last_update_at: null, updates: 0, error: null }, credentials: null },
    api_port: 19791,
    started_at: NOW - 3_600_000,
    relay_queue: { queued: 3, sent: 1, dead: 0, oldest_waiting_at: NOW - 180_000 },
    relay_hub: null,
  };
}

describe("clawrelay status", () => {
  it("prints one line per forwarding source: target, last answer and its age, and how long it has been refusing connections", () => {
    const healthy = target({ source: "github", target: "http://127.0.0.1:4000/gh", last_answer: { status: 204, detail: "", at: NOW - 12_000, id: 40 }, delivered: 3 });
    const text = statusText(statusAnswer([healthy, refusing]), 4242, NOW);
    expect(text).toContain("forward   github → http://127.0.0.1:4000/gh: last answer 204 12 s ago (id 40); delivered 3, rejected 0");
    expect(text).toContain("forward   stripe → http://127.0.0.1:3000/webhooks: last answer 200 20 min ago (id 41); refusing connections for 3 min; delivered 12, rejected 0");
  });

  it("says how an app fails when it answers, and what it last refused once it is well again", () => {
    const failing = target({ failing_since: NOW - 90_000, last_error: "the app answered 503: maintenance" });
    const refused = target({ last_answer: { status: 400, detail: "bad", at: NOW - 5000, id: 9 }, last_error: "the app refused this event with 400: bad", rejected: 1 });
    expect(forwardLines([failing, refused, target()], NOW)).toEqual([
      "forward   stripe → http://127.0.0.1:3000/webhooks: no answer yet; failing (the app answered 503: maintenance) for 90 s; delivered 0, rejected 0",
      "forward   stripe → http://127.0.0.1:3000/webhooks: last answer 400 5 s ago (id 9); last rejected: the app refused this event with 400: bad; delivered 0, rejected 1",
      "forward   stripe → http://127.0.0.1:3000/webhooks: no answer yet; delivered 0, rejected 0",
    ]);
  });

  it("shows the head's failures of its source's retries and its next try while it waits to retry; nothing of them otherwise", () => {
    const failing = target({ failing_since: NOW - 40_000, last_error: "the app answered 503: maintenance", head_failures: 3, next_try_at: NOW + 4000 });
    expect(forwardLines([{ ...failing, retries: 8 }, failing, { ...failing, head_failures: 1, next_try_at: NOW - 10 }, target({ head_failures: 0, next_try_at: null })], NOW)).toEqual([
      "forward   stripe → http://127.0.0.1:3000/webhooks: no answer yet; failing (the app answered 503: maintenance) for 40 s; head failed 3 of 8; next try in 4 s; delivered 0, rejected 0",
      // An agent that does not say the source's budget: the failures alone.
      "forward   stripe → http://127.0.0.1:3000/webhooks: no answer yet; failing (the app answered 503: maintenance) for 40 s; head failed 3 times; next try in 4 s; delivered 0, rejected 0",
      "forward   stripe → http://127.0.0.1:3000/webhooks: no answer yet; failing (the app answered 503: maintenance) for 40 s; head failed 1 time; next try now; delivered 0, rejected 0",
      "forward   stripe → http://127.0.0.1:3000/webhooks: no answer yet; delivered 0, rejected 0",
    ]);
  });

  it("says nothing of set-aside events any more, though an agent from before lanes reports them, nor of a next try it does not report", () => {
    // Agents before issue 30 report set_aside and no next_try_at or head_failures.
    const { next_try_at: _next, head_failures: _failures, ...older } = { ...refusing, set_aside: 97 };
    expect(forwardLines([older], NOW)).toEqual([
      "forward   stripe → http://127.0.0.1:3000/webhooks: last answer 200 20 min ago (id 41); refusing connections for 3 min; delivered 12, rejected 0",
    ]);
  });

  it("without a gateway says so, and that forwarded events go on", () => {
    const text = statusText(statusAnswer([], "no hooks.token in any OpenClaw config; enable hooks in openclaw.json (run clawrelay doctor)"), 1, NOW);
    expect(text).toContain("gateway   none to post to (no hooks.token in any OpenClaw config; enable hooks in openclaw.json (run clawrelay doctor)); messages for the gateway wait, events forwarded to local apps go on");
  });

  it("says when an agent.json edit could not be used, and which changed fields wait for a restart", () => {
    const answer = statusAnswer([]);
    const file = "/home/u/.clawrelay/agent.json";
    const text = statusText({ ...answer, gateway: { ...answer.gateway, settings_file: { path: file, error: "Unexpected token } in JSON", restart_needed: ["relay_url", "window"] } } }, 1, NOW);
    expect(text).toContain(`${file} changed but cannot be used (Unexpected token } in JSON); using the last good settings`);
    expect(text).toContain(`${file}: relay_url, window changed; they take effect after a restart of the agent`);
    const clean = statusText({ ...answer, gateway: { ...answer.gateway, settings_file: { path: file, error: null, restart_needed: [] } } }, 1, NOW);
    expect(clean).not.toContain(file);
  });
});

describe("clawrelay doctor", () => {
  const collect = () => {
    const checks: Check[] = [];
    return { checks, add: (level: Check["level"], what: string, fix?: string) => void checks.push(fix ? { level, what, fix } : { level, what }) };
  };

  it("WARNs of a target failing for more than a minute, naming it, since when, the last error and the fixes; OK otherwise", () => {
    const { checks, add } = collect();
    const briefly = target({ source: "github", target: "http://127.0.0.1:4000/gh", failing_since: NOW - 30_000, last_error: "the app answered 502" });
    forwardChecks([refusing, briefly], NOW, add);
    expect(checks[0]).toEqual({
      level: "WARN",
      what: `the app at http://127.0.0.1:3000/webhooks (source stripe) has been refusing connections for 3 min — since ${new Date(NOW - 180_000).toISOString()}; last error: connection refused by 127.0.0.1:3000 (is the app running?); last answer 200 20 min ago. Its events wait at the relay`,
      fix: "start the app at http://127.0.0.1:3000/webhooks; or forward to where it listens: clawrelay sources set stripe --forward URL; or send them to the gateway: clawrelay sources set stripe --gateway",
    });
    expect(checks[1]).toEqual({ level: "OK", what: "the running agent forwards source github to http://127.0.0.1:4000/gh: no answer yet; failing (the app answered 502) for 30 s" });
  });

  it("of a head the app keeps failing: the retries it has spent of its source's budget and when it goes to the dead shelf; no set-aside advice", () => {
    const { checks, add } = collect();
    const failingHead = target({ failing_since: NOW - 20_000, last_error: "the app answered 503: maintenance", head_failures: 3, next_try_at: NOW + 2000 });
    const budgets = new Map([["stripe", 8]]);
    forwardChecks([failingHead], NOW, add, budgets);
    forwardChecks([{ ...failingHead, head_failures: 8 }], NOW, add, budgets);
    // The agent's own word for the budget wins over the relay's listing; with neither, the failures alone.
    forwardChecks([{ ...failingHead, retries: 2, head_failures: 1 }], NOW, add, budgets);
    forwardChecks([failingHead], NOW, add);
    expect(checks.map((c) => c.what)).toEqual([
      "the running agent forwards source stripe to http://127.0.0.1:3000/webhooks: no answer yet; failing (the app answered 503: maintenance) for 20 s; its head event has spent 3 of its 8 retries: 6 more failures put it on the dead shelf (clawrelay messages --state dead) and the next event goes on; its next try is in 2 s",
      "the running agent forwards source stripe to http://127.0.0.1:3000/webhooks: no answer yet; failing (the app answered 503: maintenance) for 20 s; its head event has spent 8 of its 8 retries: one more failure puts it on the dead shelf (clawrelay messages --state dead) and the next event goes on; its next try is in 2 s",
      "the running agent forwards source stripe to http://127.0.0.1:3000/webhooks: no answer yet; failing (the app answered 503: maintenance) for 20 s; its head event has spent 1 of its 2 retries: 2 more failures put it on the dead shelf (clawrelay messages --state dead) and the next event goes on; its next try is in 2 s",
      "the running agent forwards source stripe to http://127.0.0.1:3000/webhooks: no answer yet; failing (the app answered 503: maintenance) for 20 s; its head event has failed 3 time(s); its next try is in 2 s",
    ]);

    // Failing for more than a minute: the WARN says it in place of "its events wait" (they do not: the head goes to the shelf).
    const long = collect();
    forwardChecks([{ ...failingHead, failing_since: NOW - 5 * 60_000 }], NOW, long.add, budgets);
    expect(long.checks[0]!.level).toBe("WARN");
    expect(long.checks[0]!.what).toMatch(/; no answer yet\. Its head event has spent 3 of its 8 retries: 6 more failures put it on the dead shelf \(clawrelay messages --state dead\) and the next event goes on; its next try is in 2 s$/);
    for (const check of [...checks, ...long.checks]) expect(`${check.what} ${check.fix ?? ""}`).not.toMatch(/set aside|replay/i);
  });

  it("finds the running agent through run.json beside the settings and checks its forward targets", async () => {
    const home = await mkdtemp(join(tmpdir(), "clawrelay-forward-status-"));
    cleanups.push(() => rm(home, { recursive: true, force: true }));
    const failingSince = Date.now() - 5 * 60_000;
    const answer = statusAnswer([target({ failing_since: failingSince, last_error: "connection refused by 127.0.0.1:3000 (is the app running?)" })]);
    const agent = createServer((req, res) => {
      res.writeHead(req.url === "/clawrelay/status" ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => agent.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => agent.close(resolve)));
    await writeFile(join(home, "run.json"), JSON.stringify({ pid: 4242, api_port: (agent.address() as AddressInfo).port, started_at: NOW }));
    const { checks, add } = collect();
    // A relay that does not answer: the source list is left out, the running agent is still asked.
    const access = { relayUrl: "http://127.0.0.1:9", agentId: "ag_0123456789ab", identity: {} as Identity };
    expect(await forwardingChecks(access, findRunningAgent(home, () => access.agentId), add)).toEqual([]);
    expect(checks).toHaveLength(1);
    expect(checks[0]!.level).toBe("WARN");
    expect(checks[0]!.what).toContain("has been refusing connections for 5 min");
    expect(checks[0]!.fix).toContain("clawrelay sources set stripe --gateway");

    // Another agent's run.json (another home's agent took the port): nothing is said of it.
    const other = collect();
    await forwardingChecks({ ...access, agentId: "ag_ffffffffffff" }, findRunningAgent(home, () => "ag_ffffffffffff"), other.add);
    expect(other.checks).toEqual([]);
  });
});
