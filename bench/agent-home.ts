// A fresh agent home (agent and directory scenarios): an openclaw.json for a stand-in gateway and an inbox
// claimed with `runInit`, as test/support/node/stack.ts's makeAgentHome does (bench/ does not import test/);
// and its key as the owner's signer of relay calls (homeOwner).
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fromBase64, importSigningKey } from "../protocol/index.ts";
import { runInit } from "../local-agent/cli/init.ts";
import { saveSettings } from "../local-agent/settings.ts";
import type { AgentSettings } from "../local-agent/settings.ts";
import { openClawConfigFor } from "../scripts/standin-gateway.ts";
import type { StandinGateway } from "../scripts/standin-gateway.ts";
import { LOOPBACK_HUB_URL, benchAgent } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";

// `env` is all an agent child (and a baseline child) runs with; the local API on port 0, never colliding with an agent on 19791.
export async function makeBenchHome(dir: string, relayUrl: string, gateway: StandinGateway, name: string) {
  const configPath = join(dir, "openclaw", "openclaw.json");
  await mkdir(join(dir, "openclaw"), { recursive: true });
  await writeFile(configPath, openClawConfigFor(gateway));
  const env = { CLAWRELAY_HOME: join(dir, "clawrelay"), OPENCLAW_CONFIG_PATH: configPath, HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const settingsPath = join(env.CLAWRELAY_HOME, "agent.json");
  const { settings, webhookToken } = await runInit({ settingsPath, env, relay: relayUrl, hub: LOOPBACK_HUB_URL, name });
  if (!webhookToken) throw new Error(`claiming ${settings.agent_id} returned no webhook token`);
  saveSettings(settingsPath, { ...(JSON.parse(await readFile(settingsPath, "utf8")) as AgentSettings), api_port: 0 });
  return { agentId: settings.agent_id, webhookToken, env };
}
export type BenchHome = Awaited<ReturnType<typeof makeBenchHome>>;

/** The home's own key as the signer of the owner's calls (sources, queue, a2a), as the CLI signs them. */
export async function homeOwner(settings: AgentSettings): Promise<BenchAgent> {
  return benchAgent(settings.key.public_key, await importSigningKey(fromBase64(settings.key.private_key)!), { key_id: settings.receipt_key.key_id, private_key: settings.receipt_key.private_key });
}
