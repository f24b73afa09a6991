// `clawrelay status` when the agent is meant to run inside the gateway (local-agent/doctor/status-advice.ts):
// the advice fits how it runs (gateway stopped → start it; the plugin's service down → its home and the
// fix, never `clawrelay start`), the relay's backlog when no agent runs, the plugin's agent found in its
// own home, and a warning when a standalone agent runs beside an enabled plugin.
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import { runPluginAgent, tempPluginHome, withPlugin } from "../support/node/plugin-home.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();



describe("clawrelay status and the plugin", () => {
  it("no agent and nothing waiting: the same one line as before; with a message waiting, the relay's backlog", async () => {
    const { home } = await fixture.setUp();
    const empty = await runCli(["status"], home.env);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toBe("clawrelay: no running agent found (start it with: clawrelay start)\n");
    expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "hi" }))).status).toBe(202);
    const waiting = await runCli(["status"], home.env);
    expect(waiting.code).toBe(1);
    expect(waiting.stderr).toMatch(/^clawrelay: no running agent found \(start it with: clawrelay start\); the relay holds 1 queued, 0 sent \(in flight\), 0 dead; oldest waiting \d+s \(clawrelay messages\)\n$/);
  });

  it("the plugin enabled and the gateway stopped: start the gateway, not clawrelay start", async () => {
    const { gateway, home } = await fixture.setUp();
    await withPlugin(home, gateway, { enabled: true });
    await gateway.close();
    const result = await runCli(["status"], home.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `clawrelay: no running agent found: the clawrelay plugin runs it inside the OpenClaw gateway (enabled in ${home.env.OPENCLAW_CONFIG_PATH}), and nothing listens on 127.0.0.1:${gateway.port} (start the gateway: openclaw gateway)\n`,
    );
  });

  it("the plugin enabled, the gateway up, the plugin's home without agent.json: names that home and init --home", async () => {
    const { gateway, home } = await fixture.setUp();
    const pluginHome = tempPluginHome(fixture.cleanups);
    await withPlugin(home, gateway, { enabled: true, config: { home: pluginHome } });
    const result = await runCli(["status"], home.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the plugin's agent is not running (its home ${pluginHome} has no agent.json)`);
    expect(result.stderr).toContain(`clawrelay init --relay <url> --home ${pluginHome}; then: openclaw plugins reload clawrelay`);
    expect(result.stderr).not.toContain("start it with: clawrelay start");
  });

  it("the plugin disabled (openclaw plugins disable clawrelay): clawrelay start, or enable the plugin", async () => {
    const { gateway, home } = await fixture.setUp();
    await withPlugin(home, gateway, { enabled: false });
    const result = await runCli(["status"], home.env);
    expect(result.stderr).toBe("clawrelay: no running agent found (clawrelay start; or run it inside the gateway: openclaw plugins enable clawrelay)\n");
  });

  it("the plugin's agent in its own home (config.home) is found and shown as inside the gateway", async () => {
    const { gateway, home } = await fixture.setUp();
    const { pluginHome, agent } = await runPluginAgent(home, gateway, fixture.cleanups);
    const result = await runCli(["status"], home.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`agent     ${home.settings.agent_id} (inside the OpenClaw gateway, pid ${process.pid}, local API 127.0.0.1:${agent.apiPort})`);
    expect(result.stdout).not.toContain("WARNING");
  });

  it("the plugin's agent runs with a config openclaw.json no longer holds: status warns, naming the change and the reload", async () => {
    const { gateway, home } = await fixture.setUp();
    const { pluginHome } = await runPluginAgent(home, gateway, fixture.cleanups);
    await withPlugin(home, gateway, { enabled: true, config: { home: pluginHome, gatewayPort: 18790 } });
    const result = await runCli(["status"], home.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe(
      `WARNING   the plugin's agent runs with an older plugins.entries.clawrelay.config than ${home.env.OPENCLAW_CONFIG_PATH} holds (gatewayPort (unset) → 18790): the gateway did not apply the change — it does not replace a plugin while an agent run is using it, and does not try again (its log says "still has active retained work"); apply it: openclaw plugins reload clawrelay (if it answers "still has active retained work", an agent run is still going: run it again when that run ends)`,
    );
  });

  it("a standalone agent beside an enabled plugin: status warns, naming the switch", async () => {
    const { gateway, home } = await fixture.setUp();
    await withPlugin(home, gateway, { enabled: true });
    const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, runDir: home.env.CLAWRELAY_HOME });
    fixture.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const result = await runCli(["status"], home.env);
    expect(result.code).toBe(0);
    expect(result.stdout.trimEnd().split("\n").at(-1)).toBe(
      `WARNING   the clawrelay plugin is enabled in ${home.env.OPENCLAW_CONFIG_PATH}: when the gateway restarts it takes this inbox back and this agent stops (keep this one: openclaw plugins disable clawrelay)`,
    );
  });
});
