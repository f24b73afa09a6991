// What `clawrelay status` prints from the running agent's status answer (GET /clawrelay/status), and the
// exit code a script reads from it (STATUS_EXIT). Every line is escaped for the terminal: the relay's, the
// gateway's and an app's error texts and a pause's reason quote what others wrote. Pure; imported by
// cli.ts, covered by test/node/cli-start-status.e2e.test.ts, forward-status.test.ts, lanes-display.test.ts,
// live-app.e2e.test.ts, terminal-output.test.ts and history-text.test.ts.
import type { LiveSummary } from "../../protocol/index.ts";
import type { AgentStatus, AgentStatusAnswer } from "../agent-status.ts";
import type { ForwardTargetStatus } from "../forward/forward-targets.ts";
import { formatAge, summaryLine } from "../relay/messages.ts";
import { historyStatusLines } from "./history-text.ts";
import { acksLine } from "./outbox-text.ts";
import { laneLines } from "./status-lanes.ts";
import { terminalCut, terminalSafe } from "./terminal-text.ts";

/**
 * `clawrelay status`'s exit codes past 0 (running and delivering), 1 (no agent running, or another
 * failure) and 2 (a usage mistake); when several hold, the one that stops the most wins: paused (nothing
 * is posted until the cause is fixed), then gateway down, then a stalled lane. docs/local-agent.md has the table.
 */
export const STATUS_EXIT = { running: 0, paused: 3, gatewayDown: 4, laneStalled: 5 } as const;

/**
 * A lane is stalled when its head failed and waits to retry (the agent's lane with a last error and a
 * next try), or a forward target is failing (its app refused or did not answer the last try).
 */
export function stalledLanes(d: AgentStatus["delivery"]): string[] {
  // An older agent reports neither lanes nor forwards.
  const lanes = (d.lanes ?? []).filter((l) => l.last_error !== null && l.next_try_at !== null).map((l) => l.lane);
  const targets = (d.forwards ?? []).filter((f) => f.failing_since !== null).map((f) => `source:${f.source}`);
  return [...new Set([...lanes, ...targets])];
}

/** The exit code for a running agent's status (STATUS_EXIT). */
export function statusExitCode(s: AgentStatusAnswer): number {
  const d = s.delivery;
  if (d.paused) return STATUS_EXIT.paused;
  if (d.gateway_down) return STATUS_EXIT.gatewayDown;
  if (stalledLanes(d).length > 0) return STATUS_EXIT.laneStalled;
  return STATUS_EXIT.running;
}

export function statusText(s: AgentStatusAnswer, pid: number, now: number): string {
  const summary = s.relay_queue;
  const last = s.delivery.last_delivery;
  const d = s.delivery;
  return [
    `agent     ${s.agent_id} (${s.runs_in === "gateway plugin" ? "inside the OpenClaw gateway, " : ""}pid ${pid}, local API 127.0.0.1:${s.api_port})`,
    `inspector http://127.0.0.1:${s.api_port}/ (messages, replay, drop; metrics at /metrics)`,
    `relay     ${s.relay.state} ${s.relay.url} since ${new Date(s.relay.since).toISOString()}${s.relay.error ? ` — ${s.relay.error}` : ""}`,
    s.gateway.problem
      ? `gateway   none to post to (${s.gateway.problem}); messages for the gateway wait, events forwarded to local apps go on`
      : `gateway   127.0.0.1:${s.gateway.port}${s.gateway.hooks_path} (${s.gateway.config_path ?? "no config file"}; gateway token: ${s.gateway.auth_source})`,
    ...(s.gateway.config_error ? [`          openclaw.json changed but cannot be read (${s.gateway.config_error}); using the last good settings`] : []),
    ...(s.gateway.settings_file?.error ? [`          ${s.gateway.settings_file.path} changed but cannot be used (${s.gateway.settings_file.error}); using the last good settings`] : []),
    ...(s.gateway.settings_file?.restart_needed.length ? [`          ${s.gateway.settings_file.path}: ${s.gateway.settings_file.restart_needed.join(", ")} changed; they take effect after a restart of the agent`] : []),
    `inbox     ${"error" in summary ? `unknown (${summary.error})` : summaryLine(summary, now)}`,
    // An older relay keeps no history and reports none: the line is left out.
    ...("error" in summary ? [] : historyStatusLines(summary.history, now)),
    `since start (${new Date(d.counted_since).toISOString()}): delivered ${d.delivered}, rejected to the dead shelf ${d.rejected}; waiting here ${d.queued}; cursor ${d.cursor}`,
    `last      ${last ? `id ${last.id} → ${last.subpath} ${last.status} in ${last.latency_ms} ms at ${new Date(last.at).toISOString()}` : "none yet"}`,
    ...(d.paused ? [`PAUSED    ${d.paused}`] : []),
    ...(d.gateway_down ? [`GATEWAY DOWN since ${new Date(d.gateway_down.since).toISOString()} (${d.gateway_down.reason}); probed ${d.gateway_down.probes} times, every conversation goes on once it answers`] : []),
    ...forwardLines(d.forwards, now),
    // An older agent reports no lanes (nor an older relay): the block is left out.
    ...laneLines("error" in summary ? undefined : summary.lanes, d.lanes, now),
    ...liveLines("error" in summary ? undefined : summary.live, s.live, now),
    ...(d.last_error ? [`last error id ${d.last_error.id} at ${new Date(d.last_error.at).toISOString()}: ${d.last_error.message}`] : []),
    ...(!("error" in summary) && summary.dead > 0 ? [`dead      ${summary.dead} message(s): clawrelay messages --state dead`] : []),
    ...(s.relay_hub ? [hubLine(s.relay_hub)] : []),
    ...(s.relay_outbox ? [`receipts  ${s.relay_outbox.total} sent message(s) in the outbox (clawrelay messages --outbox); ${acksLine(s.relay_outbox.acks)}`] : []),
    ...hubSideLines(s.hub),
  ]
    .map(terminalSafe)
    .join("\n");
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Live requests (docs/live.md): the relay's counts, and the latest this agent answered; nothing from a relay that reports none. */
export function liveLines(relay: LiveSummary | undefined, agent: AgentStatus["live"], now: number): string[] {
  if (!relay) return [];
  const last = relay.last_at === null ? "none yet" : `last ${span(now - relay.last_at)} ago`;
  const lines = [`live      answered ${relay.answered} (of the relay's last 1,000), in flight ${relay.in_flight}; ${last} — clawrelay messages --live`];
  const mine = agent?.last;
  if (mine) lines.push(`          this agent: answered ${agent.answered}, failed ${agent.failed}; last ${mine.method} ${terminalCut(mine.path, 120)} → ${mine.status ?? "no answer"} in ${mine.duration_ms} ms, ${span(now - mine.at)} ago`);
  return lines;
}

/** A span as a person says it: 12 s, 3 min, 5 h, 2 d. */
export function span(ms: number): string {
  return formatAge(ms, true);
}

/**
 * A forward target as an agent reports it: one from before lanes has no next_try_at or head_failures
 * (and may carry set_aside, which is not read any more); `retries`, the source's budget, when it says it.
 */
export type ReportedTarget = Omit<ForwardTargetStatus, "next_try_at" | "head_failures"> & { next_try_at?: number | null; head_failures?: number; retries?: number };

/** How a failing app fails, in words: "refusing connections", or what it answered (the app's text, escaped). */
export function failingText(f: ReportedTarget, now: number): string | null {
  if (f.failing_since === null) return null;
  const how = f.last_error?.startsWith("connection refused") ? "refusing connections" : `failing (${terminalCut(f.last_error ?? "", 160)})`;
  return `${how} for ${span(now - f.failing_since)}`;
}

/** Its head's retries spent ("head failed 3 of 8") and when it goes next, while it waits to retry; [] otherwise. */
export function headParts(f: ReportedTarget, now: number): string[] {
  const failures = f.head_failures ?? 0;
  const next = f.next_try_at ?? null;
  return [
    ...(failures > 0 ? [`head failed ${failures}${f.retries !== undefined ? ` of ${f.retries}` : failures === 1 ? " time" : " times"}`] : []),
    ...(next !== null ? [next > now ? `next try in ${span(next - now)}` : "next try now"] : []),
  ];
}

/** One line per source forwarded to a local app: where, the app's last answer and its age, whether it is failing, its head's retries. */
export function forwardLines(forwards: ReportedTarget[] | undefined, now: number): string[] {
  return (forwards ?? []).map((f) => {
    const last = f.last_answer ? `last answer ${f.last_answer.status} ${span(now - f.last_answer.at)} ago (id ${f.last_answer.id})` : "no answer yet";
    const failing = failingText(f, now);
    const trouble = failing ? `; ${failing}` : f.last_error ? `; last rejected: ${terminalCut(f.last_error, 160)}` : "";
    const head = headParts(f, now).map((part) => `; ${part}`).join("");
    return `forward   ${f.source} → ${f.target}: ${last}${trouble}${head}; delivered ${f.delivered}, rejected ${f.rejected}`;
  });
}

/** The hub's WebSocket (pull mode) in one line, and the credentials file when it cannot be kept in step. */
function hubSideLines(hub: AgentStatusAnswer["hub"] | undefined): string[] {
  if (!hub) return [];
  const w = hub.watch;
  const lines: string[] = [];
  if (w.state !== "off") {
    const updates = w.last_update_at ? `; last inbox_update ${iso(w.last_update_at)} (${w.updates} in all)` : "; no inbox_update yet";
    const text =
      w.state === "connected" ? `connected to ${w.url} since ${iso(w.since)}${updates}`
      : w.state === "waiting_token" ? `waiting for a hub token since ${iso(w.since)}${w.error ? ` — ${w.error}` : ""}`
      : `${w.state} since ${iso(w.since)}${w.error ? ` — ${w.error}` : ""}`;
    lines.push(`hub ws    ${text}`);
  }
  const c = hub.credentials;
  if (c?.error) lines.push(`hub token ${c.path} is not kept on the relay's token: ${c.error}`);
  return lines;
}

function hubLine(hub: NonNullable<AgentStatusAnswer["relay_hub"]>): string {
  if (hub.mode === "off") return "hub       not linked (clawrelay hub register links the inbox to its hub)";
  const r = hub.last_receipt;
  const receipt = !r ? "no receipt sent yet" : r.ok ? `last receipt accepted at ${new Date(r.at).toISOString()}` : `last receipt REFUSED (${r.status} ${r.detail}) at ${new Date(r.at).toISOString()} — see clawrelay hub status`;
  return `hub       ${hub.mode} (prefix ${hub.prefix}); ${receipt}${hub.receipts_refused > 0 ? `; ${hub.receipts_refused} refused in all` : ""}`;
}

