// Agent homes for the benchmarks (agent-bench.ts, delegation-bench.ts): an openclaw.json (JSON5, as users write it) pointing at a
// stand-in gateway, and an inbox claimed on the relay with `runInit` — the same steps as
// test/support/node/stack.ts (makeAgentHome), kept here so bench/ does not import test/.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runInit } from "../local-agent/cli/init.ts";
import { saveSettings } from "../local-agent/settings.ts";
import type { AgentSettings } from "../local-agent/settings.ts";
import { openClawConfigFor } from "../scripts/standin-gateway.ts";
import type { StandinGateway } from "../scripts/standin-gateway.ts";

export interface BenchHome {
  dir: string;
  agentId: string;
  webhookToken: string;
  /** The environment the agent child (and the baseline child) runs with: nothing else from the bench's. */
  env: Record<string, string>;
}

export async function writeOpenClawConfig(path: string, gateway: StandinGateway): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, openClawConfigFor(gateway));
}

/**
 * A fresh home in `dir` (which must exist and be empty): openclaw.json for `gateway`, the inbox claimed
 * on `relayUrl` (hub: `hubUrl`, never reached). The local API is set to port 0 (ephemeral) in
 * agent.json so the bench never collides with an agent already listening on 19791.
 */
export async function makeBenchHome(dir: string, relayUrl: string, hubUrl: string, gateway: StandinGateway, name: string, extra: Partial<AgentSettings> = {}): Promise<BenchHome> {
  const configPath = join(dir, "openclaw", "openclaw.json");
  await writeOpenClawConfig(configPath, gateway);
  const env = { CLAWRELAY_HOME: join(dir, "clawrelay"), OPENCLAW_CONFIG_PATH: configPath, HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const settingsPath = join(env.CLAWRELAY_HOME, "agent.json");
  const result = await runInit({ settingsPath, env, relay: relayUrl, hub: hubUrl, name });
  if (!result.webhookToken) throw new Error(`claiming ${result.settings.agent_id} returned no webhook token`);
  const settings = JSON.parse(await readFile(settingsPath, "utf8")) as AgentSettings;
  saveSettings(settingsPath, { ...settings, api_port: 0, ...extra });
  return { dir, agentId: result.settings.agent_id, webhookToken: result.webhookToken, env };
}
