// What `clawrelay status` prints from the running agent's status answer (GET /clawrelay/status).
// Pure; imported by cli.ts, covered by test/node/cli-start-status.e2e.test.ts.
import type { AgentStatusAnswer } from "../agent-status.ts";
import { summaryLine } from "../relay/messages.ts";

export function statusText(s: AgentStatusAnswer, pid: number, now: number): string {
  const summary = s.relay_queue;
  const last = s.delivery.last_delivery;
  const d = s.delivery;
  return [
    `agent     ${s.agent_id} (${s.runs_in === "gateway plugin" ? "inside the OpenClaw gateway, " : ""}pid ${pid}, local API 127.0.0.1:${s.api_port})`,
    `inspector http://127.0.0.1:${s.api_port}/ (messages, replay, drop; metrics at /metrics)`,
    `relay     ${s.relay.state} ${s.relay.url} since ${new Date(s.relay.since).toISOString()}${s.relay.error ? ` — ${s.relay.error}` : ""}`,
    `gateway   127.0.0.1:${s.gateway.port}${s.gateway.hooks_path} (${s.gateway.config_path ?? "no config file"}; gateway token: ${s.gateway.auth_source})`,
    ...(s.gateway.config_error ? [`          openclaw.json changed but cannot be read (${s.gateway.config_error}); using the last good settings`] : []),
    `inbox     ${"error" in summary ? `unknown (${summary.error})` : summaryLine(summary, now)}`,
    `since start (${new Date(d.counted_since).toISOString()}): delivered ${d.delivered}, rejected to the dead shelf ${d.rejected}; waiting here ${d.queued}; cursor ${d.cursor}`,
    `last      ${last ? `id ${last.id} → ${last.subpath} ${last.status} in ${last.latency_ms} ms at ${new Date(last.at).toISOString()}` : "none yet"}`,
    ...(d.paused ? [`PAUSED    ${d.paused}`] : []),
    ...(d.gateway_down ? [`GATEWAY DOWN since ${new Date(d.gateway_down.since).toISOString()} (${d.gateway_down.reason}); probed ${d.gateway_down.probes} times, every conversation goes on once it answers`] : []),
    ...(d.last_error ? [`last error id ${d.last_error.id} at ${new Date(d.last_error.at).toISOString()}: ${d.last_error.message}`] : []),
    ...(!("error" in summary) && summary.dead > 0 ? [`dead      ${summary.dead} message(s): clawrelay messages --state dead`] : []),
    ...(s.relay_hub ? [hubLine(s.relay_hub)] : []),
    ...hubSideLines(s.hub),
  ].join("\n");
}

const iso = (ms: number) => new Date(ms).toISOString();

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

