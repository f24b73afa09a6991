// For the doctor and status tests of an agent meant to run inside the gateway: openclaw.json with the
// clawrelay plugin's entry (as `openclaw plugins install`, `enable` and `disable` leave it), a throw-away
// plugin home, and the plugin's agent started in that home as the gateway's service would start it.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAgent } from "../../../local-agent/agent.ts";
import type { AgentHandle } from "../../../local-agent/agent.ts";
import { silentLogger } from "../../../local-agent/logger.ts";
import type { StandinGateway } from "../../../scripts/standin-gateway.ts";
import { waitUntil, writeOpenClawConfig } from "./stack.ts";
import type { AgentHome } from "./stack.ts";

type Cleanups = (() => Promise<unknown>)[];

export async function withPlugin(home: AgentHome, gateway: StandinGateway, entry: Record<string, unknown>): Promise<void> {
  await writeOpenClawConfig(home.env.OPENCLAW_CONFIG_PATH, gateway, `\n  plugins: { load: { paths: ["/opt/clawrelay"] }, entries: { clawrelay: ${JSON.stringify(entry)} } },`);
}

/** A fresh directory, removed by the test's clean-ups. */
export function tempPluginHome(cleanups: Cleanups): string {
  const dir = mkdtempSync(join(tmpdir(), "clawrelay-plugin-home-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The plugin enabled with its own home holding `home`'s agent.json, and its agent running there, connected. */
export async function runPluginAgent(home: AgentHome, gateway: StandinGateway, cleanups: Cleanups): Promise<{ pluginHome: string; agent: AgentHandle }> {
  const pluginHome = tempPluginHome(cleanups);
  cpSync(home.settingsPath, join(pluginHome, "agent.json"));
  await withPlugin(home, gateway, { enabled: true, config: { home: pluginHome } });
  // As the plugin's service starts it: with the config it read, which its status reports.
  const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, runDir: pluginHome, runsIn: "gateway plugin", pluginConfig: { home: pluginHome } });
  cleanups.push(() => agent.close());
  await waitUntil("connected", () => agent.status().relay.state === "connected");
  return { pluginHome, agent };
}
