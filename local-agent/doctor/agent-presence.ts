// Where this inbox's agent runs, or why none does: standalone (`clawrelay start`, run.json in the CLI's
// home) or inside the gateway (the clawrelay plugin, enabled in openclaw.json, run.json in the plugin's
// `home`, confirmed by that home's own agent.json). Shared by `clawrelay status`, `doctor` (doctor-agent.ts),
// `retry` and `listen`, so all find the same agent and give the same advice. Covered by
// test/node/doctor-agent.test.ts, status-plugin.test.ts and plugin-home-found.test.ts.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { findRunningAgent } from "../cli/running-agent.ts";
import type { RunningAgent } from "../cli/running-agent.ts";
import { gatewayOverrides, openClawEnv, portIsListening } from "../gateway/agent-gateway.ts";
import { gatewaySettingsFrom, readOpenClawConfig } from "../gateway/openclaw-config.ts";
import { pluginConfigChanges, pluginConfigOf } from "../gateway/plugin-config.ts";
import type { PluginConfig } from "../gateway/plugin-config.ts";
import type { Environment } from "../gateway/openclaw-config.ts";
import { loadSettings } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";

export const PLUGIN_ID = "clawrelay";

/** `plugins.entries.clawrelay` of openclaw.json, as the gateway would read it. */
export interface PluginEntry {
  /** False after `openclaw plugins disable clawrelay` (or `plugins.enabled: false`, a deny list naming it). */
  enabled: boolean;
  /** The plugin's settings folder: `config.home`, else the gateway's $CLAWRELAY_HOME or ~/.clawrelay (assumed to be the CLI's). */
  home: string;
  homeFromConfig: boolean;
  configPath: string;
  /** Where the gateway listens, as the plugin would post (its `gatewayPort`, else the config's port). */
  gatewayPort: number;
  /** plugins.entries.clawrelay.config as saved now (the fields the plugin reads). */
  config: PluginConfig;
}

const record = (v: unknown): Record<string, unknown> | null => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** The plugin's entry in an openclaw.json value; null when the file has none (the plugin was never installed). */
export function pluginEntryFrom(config: unknown, defaultHome: string, configPath: string, gatewayPort: number): PluginEntry | null {
  const plugins = record(record(config)?.plugins);
  const entry = record(record(plugins?.entries)?.[PLUGIN_ID]);
  if (!plugins || !entry) return null;
  const denied = Array.isArray(plugins.deny) && plugins.deny.includes(PLUGIN_ID);
  const allow = Array.isArray(plugins.allow) ? plugins.allow : null;
  const enabled = entry.enabled !== false && plugins.enabled !== false && !denied && (allow === null || allow.includes(PLUGIN_ID));
  const own = pluginConfigOf(entry.config);
  return { enabled, home: own.home ?? defaultHome, homeFromConfig: own.home !== undefined, configPath, gatewayPort: own.gatewayPort ?? gatewayPort, config: own };
}

/** The plugin's entry in the openclaw.json the CLI finds (agent.json's overrides applied); null when none or unreadable. */
export function readPluginEntry(settings: AgentSettings | null, env: Environment, defaultHome: string): PluginEntry | null {
  try {
    const file = readOpenClawConfig(openClawEnv(settings?.gateway, env));
    if (!file.exists || !file.location) return null;
    const gateway = gatewaySettingsFrom(file.config, file.env, settings ? gatewayOverrides(settings) : {}, file.location.path);
    return pluginEntryFrom(file.config, defaultHome, file.location.path, gateway.port);
  } catch {
    return null;
  }
}

/** Why the plugin's service cannot start from its home, as its start would fail; null when the home looks right. */
export function pluginHomeProblem(home: string): string | null {
  if (!existsSync(home)) return `its home ${home} does not exist`;
  const path = join(home, "agent.json");
  if (!existsSync(path)) return `its home ${home} has no agent.json`;
  try {
    loadSettings(path);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * The CLI's own settings beside the agent found: the same inbox, another one (the CLI's home holds
 * another inbox's agent.json), or none (the CLI's home holds no agent.json): with its agent id.
 */
export type CliSettings = { inbox: "same" } | { inbox: "other"; agentId: string; settingsPath: string } | { inbox: "none"; settingsPath: string };

export type Presence =
  | { running: true; agent: Extract<RunningAgent, { running: true }>; home: string; plugin: PluginEntry | null; cli: CliSettings }
  | { running: false; why: string; fix: string; plugin: PluginEntry | null; gatewayUp: boolean | null };

/** The agent id of a home's agent.json; null when it has none or it cannot be read (pluginHomeProblem says why). */
function homeAgentId(home: string): string | null {
  try {
    return loadSettings(join(home, "agent.json")).agent_id;
  } catch {
    // No agent.json there, or a broken one: no agent of that home can be confirmed.
    return null;
  }
}

/**
 * Finds the agent of `agentId`: in the CLI's home, then in the plugin's home when that differs. The
 * plugin's agent is confirmed against its own home's agent.json, not the CLI's: after the plugin's own
 * fix (`clawrelay init --home <its home>`) the CLI's default home holds no agent.json, or another
 * inbox's, and the plugin's agent still runs and delivers — found, with `cli` saying how they relate.
 * When none answers, says why in the words that fit how it is meant to run.
 */
export async function locateAgent(home: string, agentId: () => string, plugin: PluginEntry | null): Promise<Presence> {
  const own = await findRunningAgent(home, agentId);
  if (own.running) return { running: true, agent: own, home, plugin, cli: { inbox: "same" } };
  const pluginAgentId = plugin && plugin.home !== home ? homeAgentId(plugin.home) : null;
  if (plugin && pluginAgentId) {
    const inGateway = await findRunningAgent(plugin.home, () => pluginAgentId);
    if (inGateway.running) return { running: true, agent: inGateway, home: plugin.home, plugin, cli: cliSettingsBeside(home, pluginAgentId) };
  }
  if (!plugin?.enabled) {
    const fix = plugin ? `clawrelay start; or run it inside the gateway: openclaw plugins enable clawrelay` : "clawrelay start (or install the OpenClaw plugin: docs/openclaw-setup.md)";
    return { running: false, why: own.why, fix, plugin, gatewayUp: null };
  }
  const gatewayUp = await portIsListening(plugin.gatewayPort);
  if (!gatewayUp) {
    return { running: false, why: `no running agent found: the clawrelay plugin runs it inside the OpenClaw gateway (enabled in ${plugin.configPath}), and nothing listens on 127.0.0.1:${plugin.gatewayPort}`, fix: "start the gateway: openclaw gateway", plugin, gatewayUp };
  }
  const problem = pluginHomeProblem(plugin.home);
  const why = `no running agent found: the clawrelay plugin is enabled in ${plugin.configPath} and the gateway runs, but the plugin's agent is not running${problem ? ` (${problem})` : ""}`;
  return { running: false, why, fix: pluginFix(plugin, problem, home), plugin, gatewayUp };
}

/** The running agent of the inbox `settingsPath` names, wherever it runs (the CLI's home or the plugin's), or why none does. */
export async function runningAgentOf(home: string, settingsPath: string, env: Environment): Promise<RunningAgent> {
  let settings: AgentSettings | null = null;
  try {
    settings = loadSettings(settingsPath);
  } catch {
    // A home with no settings can still say whether an agent runs there.
  }
  const found = await locateAgent(home, () => settings?.agent_id ?? loadSettings(settingsPath).agent_id, readPluginEntry(settings, env, home));
  if (!found.running) return { running: false, why: found.why };
  // retry and listen act on this inbox: the plugin's agent of another inbox is not its agent.
  if (found.cli.inbox !== "same") return { running: false, why: `${otherInboxText(found.agent.status.agent_id, found.home, found.cli)}; run it with --home ${found.home} for that inbox` };
  return found.agent;
}

function cliSettingsBeside(home: string, runningAgentId: string): CliSettings {
  const settingsPath = join(home, "agent.json");
  const cliAgentId = homeAgentId(home);
  if (cliAgentId === null) return { inbox: "none", settingsPath };
  return cliAgentId === runningAgentId ? { inbox: "same" } : { inbox: "other", agentId: cliAgentId, settingsPath };
}

/** What the CLI's default settings are beside the plugin's agent of another home; "" when the same inbox. */
export function otherInboxText(runningAgentId: string, pluginHome: string, cli: CliSettings): string {
  if (cli.inbox === "same") return "";
  const delivers = `the clawrelay plugin's agent delivers ${runningAgentId} from its home ${pluginHome}`;
  if (cli.inbox === "none") return `${delivers}; this CLI's home has no agent.json (${cli.settingsPath})`;
  return `${delivers}; this CLI's settings ${cli.settingsPath} are another inbox, ${cli.agentId}, which no agent here delivers`;
}

/** What to do when the plugin's service did not start: name its home, never the CLI's default. */
export function pluginFix(plugin: PluginEntry, problem: string | null, cliHome: string): string {
  const reload = "then: openclaw plugins reload clawrelay";
  if (problem?.includes("agent.json") || problem?.includes("does not exist")) {
    const existing = plugin.home !== cliHome && existsSync(join(cliHome, "agent.json"));
    const point = existing ? `point the plugin at your settings: set plugins.entries.clawrelay.config.home to "${cliHome}" in ${plugin.configPath}; or ` : "";
    return `${point}claim an inbox in the plugin's home: clawrelay init --relay <url> --home ${plugin.home}; ${reload}`;
  }
  if (problem) return `fix ${join(plugin.home, "agent.json")} (clawrelay doctor --home ${plugin.home}); ${reload}`;
  return `the gateway's log names the cause (lines with "clawrelay"); after fixing it: openclaw plugins reload clawrelay`;
}

/**
 * The plugin's agent runs with a config other than the one openclaw.json holds: the gateway refused the
 * change (it does not replace a plugin while an agent run uses it, and does not try again). Null when
 * they agree, or when the agent is not the plugin's (or too old to report its config).
 */
export function unappliedPluginConfig(status: { runs_in: string; plugin_config?: PluginConfig }, plugin: PluginEntry | null): { text: string; fix: string } | null {
  if (status.runs_in !== "gateway plugin" || !status.plugin_config || !plugin) return null;
  const changes = pluginConfigChanges(status.plugin_config, plugin.config);
  if (changes.length === 0) return null;
  return {
    text: `the plugin's agent runs with an older plugins.entries.clawrelay.config than ${plugin.configPath} holds (${changes.join(", ")}): the gateway did not apply the change — it does not replace a plugin while an agent run is using it, and does not try again (its log says "still has active retained work")`,
    fix: "openclaw plugins reload clawrelay (if it answers \"still has active retained work\", an agent run is still going: run it again when that run ends)",
  };
}
