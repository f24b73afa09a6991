// `clawrelay doctor`: the checks a new user needs, each OK/WARN/FAIL with the fix: settings, relay, what
// the relay holds (doctor-agent.ts), the hub link's other clients (doctor-hub.ts), forward targets and
// the running agent's view of them (doctor-forward.ts), openclaw.json and the running gateway
// (doctor-gateway.ts), and last whether an agent — standalone or the plugin — runs (doctor-agent.ts).
// Covered by test/node/cli-send-doctor.e2e.test.ts, doctor-gateway.e2e.test.ts, doctor-agent.test.ts,
// plugin-home-found.test.ts (the plugin's home checked when the CLI's has no agent.json) and
// config-file-bounds.test.ts.
import { isAgentId } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { gatewayOverrides, openClawEnv, portIsListening } from "../gateway/agent-gateway.ts";
import { settingsIdentity } from "../identity.ts";
import type { Identity } from "../identity.ts";
import { gatewaySettingsFrom, readOpenClawConfig } from "../gateway/openclaw-config.ts";
import type { Environment, GatewaySettings } from "../gateway/openclaw-config.ts";
import { relayErrorText, relayHealth, signedRelayCall } from "../relay/relay-api.ts";
import type { RelayAnswer } from "../relay/relay-api.ts";
import type { QueueSummary } from "../../protocol/index.ts";
import { locateAgent, readPluginEntry } from "./agent-presence.ts";
import type { Presence } from "./agent-presence.ts";
import { agentChecks, queueChecks } from "./doctor-agent.ts";
import { credentialKeepingCheck } from "./doctor-credentials.ts";
import { forwardingChecks } from "./doctor-forward.ts";
import { gatewayChecks } from "./doctor-gateway.ts";
import { hubChecks } from "./doctor-hub.ts";
import type { AddCheck, HooksTokenOverride, Level } from "./doctor-gateway.ts";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileMode, loadSettings } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";

export type { Level } from "./doctor-gateway.ts";

export interface Check {
  level: Level;
  what: string;
  fix?: string;
}

/** `flags` (clawrelay doctor --gateway-port …) override the settings' gateway section for this run. */
export async function runDoctor(cliSettingsPath: string, env: Environment, flags: AgentSettings["gateway"] = {}): Promise<Check[]> {
  const checks: Check[] = [];
  const add = (level: Level, what: string, fix?: string) => checks.push(fix ? { level, what, fix } : { level, what });
  const settingsPath = pluginSettingsInstead(cliSettingsPath, openClawEnv(flags, env), add) ?? cliSettingsPath;

  let settings: AgentSettings | null = null;
  let identity: Identity | null = null;
  try {
    const loaded = loadSettings(settingsPath);
    settings = { ...loaded, gateway: { ...loaded.gateway, ...flags } };
    const mode = fileMode(settingsPath);
    if (mode & 0o077) add("WARN", `settings ${settingsPath} are readable by others (mode ${mode.toString(8)})`, `chmod 600 ${settingsPath}`);
    else add("OK", `settings ${settingsPath} (mode 600)`);
    identity = await settingsIdentity(settings);
    if (!isAgentId(settings.agent_id)) add("FAIL", `agent_id ${settings.agent_id} is not an ag_ id`, "run clawrelay init --force");
    else add("OK", `key ${identity.keyId} for ${settings.agent_id}${identity.agentId === settings.agent_id ? "" : " (an authorised key)"}`);
  } catch (err) {
    add("FAIL", (err as Error).message, notAFile(err) ? `put your agent.json back at ${settingsPath} (a regular file), or claim again: clawrelay init --relay <url> --force` : "run clawrelay init --relay <url>");
  }

  const overrides = settings?.gateway ?? flags ?? {};
  const lookupEnv = openClawEnv(overrides, env);
  const home = dirname(settingsPath);
  const usable = settings && identity ? settings : null;
  const plugin = readPluginEntry(usable, lookupEnv, home);
  // The running agent (standalone or the plugin's) is looked for once: its status asks the relay too.
  let located: Promise<Presence> | null = null;
  const locate = () => (located ??= locateAgent(home, () => usable!.agent_id, plugin));

  /** The inbox's sources that forward to local apps: they are delivered without a gateway. */
  let forwarding: string[] = [];
  let summary: QueueSummary | null = null;
  if (settings && identity) {
    const health: RelayAnswer = await relayHealth(settings.relay_url).catch((err: Error) => ({ status: 0, body: { error: { code: "unreachable", message: err.message } } }));
    if (health.status !== 200) add("FAIL", `relay ${settings.relay_url} not reachable (${relayErrorText(health)})`, "check relay_url in the settings and your network");
    else {
      add("OK", `relay ${settings.relay_url} reachable (version ${String(health.body.version)})`);
      const probe = await signedRelayCall(settings.relay_url, identity, "GET", `/inbox/${settings.agent_id}/messages?ack=false&limit=1`);
      if (probe.status === 200) {
        add("OK", `inbox ${settings.agent_id} claimed`);
        const access = { relayUrl: settings.relay_url, agentId: settings.agent_id, identity };
        summary = await queueChecks(access, add);
        await hubChecks(settings, add);
        forwarding = await forwardingChecks(access, locate().then((p) => (p.running ? p.agent : null)), add);
        credentialKeepingCheck(summary, forwarding, add);
      } else add("FAIL", `inbox ${settings.agent_id} not usable: ${relayErrorText(probe)}`, "run clawrelay init to claim it");
    }
  }

  let gateway: GatewaySettings | null = null;
  try {
    const file = readOpenClawConfig(lookupEnv);
    const where = file.location ? ` at ${file.location.path} (${file.location.source})` : "";
    if (!file.exists && forwarding.length > 0) {
      // Forwarding needs no gateway: the agent runs, and only messages for the gateway wait.
      add("WARN", `no OpenClaw config found${where}: the events of ${forwarding.join(", ")} go to their apps, but messages for the gateway (envelopes, the hub's, other sources') wait`, "if this inbox is to reach an OpenClaw agent: install OpenClaw, or set OPENCLAW_CONFIG_PATH to your openclaw.json");
    } else if (!file.exists) {
      add("FAIL", `no OpenClaw config found${where}`, "install OpenClaw, or set OPENCLAW_CONFIG_PATH to your openclaw.json");
    } else {
      gateway = gatewaySettingsFrom(file.config, file.env, settings ? gatewayOverrides(settings) : {}, file.location!.path);
      add("OK", `OpenClaw config ${file.location!.path} (found by ${file.location!.source})`);
    }
  } catch (err) {
    add("FAIL", (err as Error).message, notAFile(err) ? "point OPENCLAW_CONFIG_PATH (or agent.json gateway.config_path) at the gateway's real openclaw.json" : "fix the syntax; the gateway will not start either");
  }

  if (gateway) await gatewayChecks(gateway, settings?.hub?.prefix, await portIsListening(gateway.port), add, hooksTokenOverride(settings, settingsPath, lookupEnv));
  await agentChecks(home, usable, plugin, usable ? locate() : null, summary, add);
  return checks;
}

/**
 * No agent.json in the CLI's home, and the enabled clawrelay plugin has its own home with one (the
 * plugin's printed fix, `clawrelay init --home <its home>`, leaves exactly this): doctor checks that
 * inbox, saying so, rather than failing on the CLI's empty home while the plugin delivers.
 */
function pluginSettingsInstead(settingsPath: string, lookupEnv: Environment, add: AddCheck): string | null {
  if (existsSync(settingsPath)) return null;
  const home = dirname(settingsPath);
  const plugin = readPluginEntry(null, lookupEnv, home);
  // Without config.home the plugin's home is taken to be this one (pluginEntryFrom): nothing else to look at.
  if (!plugin?.enabled || plugin.home === home || !existsSync(join(plugin.home, "agent.json"))) return null;
  add("OK", `no agent.json in ${home}: checking the clawrelay plugin's home ${plugin.home} instead (plugins.entries.clawrelay.config.home in ${plugin.configPath})`);
  return join(plugin.home, "agent.json");
}

/** agent.json's gateway.hooks_token, with openclaw.json's own token to compare; null when agent.json sets none. */
function hooksTokenOverride(settings: AgentSettings | null, settingsPath: string, lookupEnv: Environment): HooksTokenOverride | null {
  if (!settings?.gateway?.hooks_token) return null;
  const file = readOpenClawConfig(lookupEnv);
  return { settingsPath, configToken: gatewaySettingsFrom(file.config, file.env).hooksToken };
}

/** A settings file refused as a FIFO, a device, a directory or too large (gateway/config-file.ts), not as bad JSON. */
const notAFile = (err: unknown) => err instanceof AgentError && err.code === "config_file_unreadable";

export function doctorReport(checks: Check[]): string {
  return checks.map((c) => `[${c.level}] ${c.what}${c.fix ? `\n       fix: ${c.fix}` : ""}`).join("\n");
}
