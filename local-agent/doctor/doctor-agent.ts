// doctor's answer to "will my messages arrive?": what the relay holds (backlog, dead shelf with the first
// reasons), the clawrelay plugin's entry in openclaw.json and its home, and whether an agent — standalone
// or the plugin inside the gateway — runs for this inbox, or why none does (agent-presence.ts). Imported
// by doctor.ts; covered by test/node/doctor-agent.test.ts.
import type { QueueSummary } from "../../protocol/index.ts";
import { listMessages, queueSummary, summaryLine } from "../relay/messages.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { loadSettings } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";
import { pluginFix, pluginHomeProblem, unappliedPluginConfig } from "./agent-presence.ts";
import type { PluginEntry, Presence } from "./agent-presence.ts";
import type { AddCheck } from "./doctor-gateway.ts";

/** How many dead messages doctor names with their reasons. */
const DEAD_SHOWN = 3;
const REASON_CHARS = 160;

/** The relay's counts for the inbox, and the first dead messages with their reasons. Returns the counts, null when unreadable. */
export async function queueChecks(access: InboxAccess, add: AddCheck): Promise<QueueSummary | null> {
  let summary: QueueSummary;
  try {
    summary = await queueSummary(access);
  } catch (err) {
    add("WARN", `the relay's queue for this inbox cannot be read: ${(err as Error).message}`);
    return null;
  }
  add("OK", `the relay holds ${summaryLine(summary, Date.now())}`);
  if (summary.dead === 0) return summary;
  const dead = await listMessages(access, "dead", DEAD_SHOWN).then((l) => l.messages).catch(() => []);
  const first = dead.map((m) => `#${m.id} (${m.subpath ?? `envelope from ${m.sender ?? "?"}`}): ${(m.reason ?? "no reason given").slice(0, REASON_CHARS)}`);
  add(
    "WARN",
    `${summary.dead} message(s) on the relay's dead shelf, never delivered${first.length > 0 ? `; the first: ${first.join("; ")}` : ""}`,
    "clawrelay messages --state dead lists them all; once the cause is fixed: clawrelay messages replay ID (or drop ID)",
  );
  return summary;
}

/** The plugin's entry: disabled, or enabled with a home it can start from (agent.json there, the same inbox). */
function pluginChecks(plugin: PluginEntry, settings: AgentSettings | null, home: string, add: AddCheck): void {
  if (!plugin.enabled) return add("OK", `the clawrelay plugin is installed in ${plugin.configPath} but disabled: the agent runs standalone (clawrelay start)`);
  const where = plugin.homeFromConfig ? `its home ${plugin.home} (plugins.entries.clawrelay.config.home)` : `its home ${plugin.home} (no config.home: the gateway's $CLAWRELAY_HOME, else ~/.clawrelay; assumed the same as this CLI's)`;
  const problem = pluginHomeProblem(plugin.home);
  if (problem) {
    return add("FAIL", `the clawrelay plugin is enabled in ${plugin.configPath}, but ${problem}: its service cannot start, and nothing is delivered`, pluginFix(plugin, problem, home));
  }
  const theirs = loadSettings(`${plugin.home}/agent.json`).agent_id;
  if (settings && theirs !== settings.agent_id) {
    return add("WARN", `the clawrelay plugin's home ${plugin.home} holds agent ${theirs}, these settings are agent ${settings.agent_id}: the plugin delivers ${theirs}'s inbox, not this one`,
      `check that inbox with: clawrelay doctor --home ${plugin.home}; or set plugins.entries.clawrelay.config.home to "${home}" in ${plugin.configPath}`);
  }
  add("OK", `the clawrelay plugin is enabled in ${plugin.configPath}; ${where} holds agent.json of ${theirs}`);
}

const waiting = (s: QueueSummary | null) => (s === null ? "" : s.queued + s.sent > 0 ? `; ${s.queued + s.sent} message(s) wait at the relay` : "; messages will wait at the relay");

/**
 * Which agent runs for this inbox, if any. No agent with the plugin enabled is a FAIL (nothing will
 * arrive); with no plugin, a WARN (doctor is also run before the first `clawrelay start`).
 */
export async function agentChecks(home: string, settings: AgentSettings | null, plugin: PluginEntry | null, located: Promise<Presence> | null, summary: QueueSummary | null, add: AddCheck): Promise<void> {
  if (plugin) pluginChecks(plugin, settings, home, add);
  if (!settings || !located) return;
  const found = await located;
  if (!found.running) return add(plugin?.enabled ? "FAIL" : "WARN", `${found.why}${waiting(summary)}`, found.fix);
  const { agent } = found;
  const relay = agent.status.relay;
  const connection = relay.state === "connected" ? "connected to the relay" : `${relay.state} to the relay${relay.error ? ` (${relay.error})` : ""}`;
  // Another inbox than these settings' (the plugin's home after its own fix): the plugin check above WARNs about that.
  const inbox = found.cli.inbox === "same" ? "" : `, inbox ${agent.status.agent_id}`;
  const who = agent.status.runs_in === "gateway plugin" ? `the agent runs inside the OpenClaw gateway (the clawrelay plugin, pid ${agent.pid}, home ${found.home}${inbox})` : `a standalone agent runs (clawrelay start, pid ${agent.pid})`;
  add(relay.state === "connected" ? "OK" : "WARN", `${who}: ${connection}`);

  const stale = unappliedPluginConfig(agent.status, plugin);
  if (stale) add("WARN", stale.text, stale.fix);
  if (agent.status.runs_in !== "gateway plugin" && plugin?.enabled) {
    add("WARN", `the clawrelay plugin is enabled in ${plugin.configPath} while a standalone agent runs: when the gateway restarts or reloads the plugin, the plugin takes the inbox back and the standalone agent stops`,
      "keep the standalone agent: openclaw plugins disable clawrelay; or use the plugin: stop the standalone agent, then openclaw plugins reload clawrelay");
  }
}
