// Issue 32, item 1: after the plugin's own printed fix (`clawrelay init --home <the plugin's home>`, then
// `openclaw plugins reload clawrelay`), plain `clawrelay status` and `doctor` — the CLI's default home,
// holding no agent.json or another inbox's — find the plugin's running agent by its own home's agent.json
// (local-agent/doctor/agent-presence.ts), exit 0 and name it running, saying how the CLI's settings
// relate; `retry`, which acts on the CLI's inbox, refuses the other inbox's agent with --home to use.
// Before, the plugin's agent was checked against the CLI's agent id and reported "not running".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { withPlugin } from "../support/node/plugin-home.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

/** The plugin's agent of `pluginSide`, running in its home as the gateway's service starts it. */
async function runPluginAgentOf(pluginSide: AgentHome): Promise<void> {
  const home = pluginSide.env.CLAWRELAY_HOME;
  const agent = await startAgent({ settings: pluginSide.settings, env: pluginSide.env, logger: silentLogger, apiPort: 0, runDir: home, runsIn: "gateway plugin", pluginConfig: { home } });
  fixture.cleanups.push(() => agent.close());
  await waitUntil("connected", () => agent.status().relay.state === "connected");
}

describe("the plugin's agent in its own home, from the CLI's default home", () => {
  it("the CLI's home holds another inbox: status and doctor exit 0 naming the plugin's agent running, and say which inbox each is; retry names --home", async () => {
    const { gateway, home } = await fixture.setUp();
    const { home: pluginSide } = await fixture.setUp("Plugin home");
    const pluginHome = pluginSide.env.CLAWRELAY_HOME;
    await withPlugin(home, gateway, { enabled: true, config: { home: pluginHome } });
    await runPluginAgentOf(pluginSide);

    const status = await runCli(["status"], home.env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`agent     ${pluginSide.settings.agent_id} (inside the OpenClaw gateway`);
    expect(status.stdout.trimEnd().split("\n").at(-1)).toBe(
      `WARNING   the clawrelay plugin's agent delivers ${pluginSide.settings.agent_id} from its home ${pluginHome}; this CLI's settings ${home.settingsPath} are another inbox, ${home.settings.agent_id}, which no agent here delivers; for the plugin's inbox run commands with: clawrelay --home ${pluginHome} … (or CLAWRELAY_HOME=${pluginHome})`,
    );

    const doctor = await runCli(["doctor"], home.env, 60_000);
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).not.toContain("no running agent found");
    expect(doctor.stdout).toMatch(new RegExp(`\\[OK\\] the agent runs inside the OpenClaw gateway \\(the clawrelay plugin, pid \\d+, home ${pluginHome}, inbox ${pluginSide.settings.agent_id}\\): connected to the relay`));
    expect(doctor.stdout).toContain(`[WARN] the clawrelay plugin's home ${pluginHome} holds agent ${pluginSide.settings.agent_id}, these settings are agent ${home.settings.agent_id}`);

    const retry = await runCli(["retry"], home.env);
    expect(retry.code).toBe(1);
    expect(retry.stderr).toContain(`run it with --home ${pluginHome} for that inbox`);
  });

  it("the CLI's home holds no agent.json: status finds the plugin's agent; doctor checks the plugin's home instead, saying so, and exits 0", async () => {
    const { gateway, home: pluginSide } = await fixture.setUp("Plugin home");
    const pluginHome = pluginSide.env.CLAWRELAY_HOME;
    await withPlugin(pluginSide, gateway, { enabled: true, config: { home: pluginHome } });
    await runPluginAgentOf(pluginSide);
    const cliHome = mkdtempSync(join(tmpdir(), "clawrelay-cli-home-"));
    fixture.cleanups.push(async () => rmSync(cliHome, { recursive: true, force: true }));
    const cliEnv = { ...pluginSide.env, CLAWRELAY_HOME: cliHome };

    const status = await runCli(["status"], cliEnv);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`agent     ${pluginSide.settings.agent_id} (inside the OpenClaw gateway`);
    expect(status.stdout).toContain(`WARNING   the clawrelay plugin's agent delivers ${pluginSide.settings.agent_id} from its home ${pluginHome}; this CLI's home has no agent.json (${join(cliHome, "agent.json")})`);

    const doctor = await runCli(["doctor"], cliEnv, 60_000);
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout.split("\n")[0]).toBe(`[OK] no agent.json in ${cliHome}: checking the clawrelay plugin's home ${pluginHome} instead (plugins.entries.clawrelay.config.home in ${pluginSide.env.OPENCLAW_CONFIG_PATH})`);
    expect(doctor.stdout).toMatch(new RegExp(`\\[OK\\] the agent runs inside the OpenClaw gateway \\(the clawrelay plugin, pid \\d+, home ${pluginHome}\\): connected to the relay`));
  });
});
