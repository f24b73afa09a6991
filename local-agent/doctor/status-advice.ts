// What `clawrelay status` says about where the agent runs: the running agent (in the CLI's home, or the
// plugin's, found by its own home's agent.json even when the CLI's home holds none or another inbox's),
// with a warning when the plugin is enabled beside a standalone agent, runs with a config change the
// gateway did not apply, or delivers another inbox than the CLI's settings; or one line saying why none runs, what to do — fitting how it is
// meant to run — and what waits at the relay meanwhile.
// cli.ts loads it; covered by test/node/status-plugin.test.ts.
import type { RunningAgent } from "../cli/running-agent.ts";
import type { Environment } from "../gateway/openclaw-config.ts";
import { inboxAccess, queueSummary, summaryLine } from "../relay/messages.ts";
import { loadSettings } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";
import { credentialKeepingWarning } from "./doctor-credentials.ts";
import { locateAgent, otherInboxText, readPluginEntry, unappliedPluginConfig } from "./agent-presence.ts";

export type AgentStatusFound =
  | { running: true; agent: Extract<RunningAgent, { running: true }>; warnings: string[] }
  | { running: false; text: string };

/** How long `status` waits on the relay for the backlog when no agent runs. */
const BACKLOG_WAIT_MS = 5_000;

/**
 * `clawrelay status`: the running agent (in the CLI's home, or the plugin's), with a warning when the
 * plugin is enabled beside a standalone agent; or one line saying why none runs, what to do — fitting
 * how it is meant to run — and what waits at the relay meanwhile.
 */
export async function agentStatus(home: string, settingsPath: string, env: Environment): Promise<AgentStatusFound> {
  let settings: AgentSettings | null = null;
  let unusable: string | null = null;
  try {
    settings = loadSettings(settingsPath);
  } catch (err) {
    // A home with no settings can still say whether an agent runs there (findRunningAgent asks later);
    // when none does, the advice is this error's (run init), since `start` would only fail with it.
    unusable = (err as Error).message;
  }
  const plugin = readPluginEntry(settings, env, home);
  const found = await locateAgent(home, () => settings?.agent_id ?? loadSettings(settingsPath).agent_id, plugin);
  if (found.running) {
    const both = found.agent.status.runs_in !== "gateway plugin" && plugin?.enabled;
    const warnings = both ? [`WARNING   the clawrelay plugin is enabled in ${plugin.configPath}: when the gateway restarts it takes this inbox back and this agent stops (keep this one: openclaw plugins disable clawrelay)`] : [];
    const stale = unappliedPluginConfig(found.agent.status, plugin);
    if (stale) warnings.push(`WARNING   ${stale.text}; apply it: ${stale.fix}`);
    const clear = credentialKeepingWarning(found.agent.status);
    if (clear) warnings.push(clear);
    if (found.cli.inbox !== "same") warnings.push(`WARNING   ${otherInboxText(found.agent.status.agent_id, found.home, found.cli)}; for the plugin's inbox run commands with: clawrelay --home ${found.home} … (or CLAWRELAY_HOME=${found.home})`);
    return { running: true, agent: found.agent, warnings };
  }
  const startFix = found.fix === "clawrelay start (or install the OpenClaw plugin: docs/openclaw-setup.md)";
  if (startFix && unusable !== null) return { running: false, text: `${found.why}: ${unusable}, then start it with: clawrelay start` };
  const fix = startFix ? "start it with: clawrelay start" : found.fix;
  const backlog = settings ? await relayBacklog(settings) : "";
  return { running: false, text: `${found.why} (${fix})${backlog}` };
}

/** "; the relay holds …" when it holds anything for the inbox; "" when empty or unreachable. */
async function relayBacklog(settings: AgentSettings): Promise<string> {
  const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), BACKLOG_WAIT_MS).unref());
  const summary = await Promise.race([inboxAccess(settings).then(queueSummary).catch(() => null), timeout]);
  if (!summary || summary.queued + summary.sent + summary.dead === 0) return "";
  return `; the relay holds ${summaryLine(summary, Date.now())} (clawrelay messages)`;
}
