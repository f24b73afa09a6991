// `clawrelay doctor` answers "will my messages arrive?" (local-agent/doctor/doctor-agent.ts): the relay's
// backlog and dead shelf with the first reasons; the clawrelay plugin's entry in openclaw.json and its
// home; whether an agent runs — standalone or the plugin — and, when none does, why and what to do.
// Real relay, stand-in gateway, the CLI as a user runs it.
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { postHook, relayFixture, waitUntil, queueItems } from "../support/node/stack.ts";
import { runPluginAgent, tempPluginHome, withPlugin } from "../support/node/plugin-home.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();



const lineOf = (stdout: string, start: string) => stdout.split("\n").find((l) => l.startsWith(start)) ?? `(no line starting ${start} in:\n${stdout})`;
const fixOf = (stdout: string, start: string) => {
  const all = stdout.split("\n");
  return (all[all.findIndex((l) => l.startsWith(start)) + 1] ?? "").trim();
};

describe("doctor: is an agent running for this inbox?", () => {
  it("no plugin, no agent: a WARN (not a FAIL) saying to run clawrelay start; the relay's counts instead of 'queue empty'", async () => {
    const { home } = await fixture.setUp();
    const result = await runCli(["doctor"], home.env);
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain("[OK] the relay holds 0 queued, 0 sent (in flight), 0 dead");
    expect(result.stdout).not.toContain("queue empty");
    expect(lineOf(result.stdout, "[WARN] no running agent found")).toBe("[WARN] no running agent found; messages will wait at the relay");
    expect(fixOf(result.stdout, "[WARN] no running agent found")).toBe("fix: clawrelay start (or install the OpenClaw plugin: docs/openclaw-setup.md)");
  });

  it("the plugin enabled with a home that has no agent.json: FAIL naming that home and both fixes, and FAIL that no agent runs; exit 1", async () => {
    const { gateway, home } = await fixture.setUp();
    const pluginHome = tempPluginHome(fixture.cleanups);
    await withPlugin(home, gateway, { enabled: true, config: { home: pluginHome } });
    const result = await runCli(["doctor"], home.env);
    expect(result.code, result.stdout).toBe(1);
    const start = `[FAIL] the clawrelay plugin is enabled in ${home.env.OPENCLAW_CONFIG_PATH}, but its home ${pluginHome} has no agent.json`;
    expect(lineOf(result.stdout, start)).toBe(`${start}: its service cannot start, and nothing is delivered`);
    expect(fixOf(result.stdout, start)).toBe(
      `fix: point the plugin at your settings: set plugins.entries.clawrelay.config.home to "${home.env.CLAWRELAY_HOME}" in ${home.env.OPENCLAW_CONFIG_PATH}; or claim an inbox in the plugin's home: clawrelay init --relay <url> --home ${pluginHome}; then: openclaw plugins reload clawrelay`,
    );
    expect(lineOf(result.stdout, "[FAIL] no running agent found")).toContain(`the plugin's agent is not running (its home ${pluginHome} has no agent.json); messages will wait at the relay`);
  });

  it("the plugin's home holds another inbox's agent.json: a WARN saying which inbox the plugin delivers", async () => {
    const { gateway, home } = await fixture.setUp();
    const { home: other } = await fixture.setUp("Other");
    await withPlugin(home, gateway, { enabled: true, config: { home: other.env.CLAWRELAY_HOME } });
    const result = await runCli(["doctor"], home.env);
    expect(lineOf(result.stdout, "[WARN] the clawrelay plugin's home")).toBe(
      `[WARN] the clawrelay plugin's home ${other.env.CLAWRELAY_HOME} holds agent ${other.settings.agent_id}, these settings are agent ${home.settings.agent_id}: the plugin delivers ${other.settings.agent_id}'s inbox, not this one`,
    );
  });

  it("the plugin enabled and the gateway stopped: FAIL, start the gateway", async () => {
    const { gateway, home } = await fixture.setUp();
    await withPlugin(home, gateway, { enabled: true });
    await gateway.close();
    const result = await runCli(["doctor"], home.env);
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, "[FAIL] no running agent found")).toBe(
      `[FAIL] no running agent found: the clawrelay plugin runs it inside the OpenClaw gateway (enabled in ${home.env.OPENCLAW_CONFIG_PATH}), and nothing listens on 127.0.0.1:${gateway.port}; messages will wait at the relay`,
    );
    expect(fixOf(result.stdout, "[FAIL] no running agent found")).toBe("fix: start the gateway: openclaw gateway");
  });

  it("a standalone agent beside an enabled plugin: OK that it runs, WARN that the plugin takes the inbox back, with the switch", async () => {
    const { gateway, home } = await fixture.setUp();
    await withPlugin(home, gateway, { enabled: true });
    const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, runDir: home.env.CLAWRELAY_HOME });
    fixture.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const result = await runCli(["doctor"], home.env);
    expect(result.stdout).toMatch(/\[OK\] a standalone agent runs \(clawrelay start, pid \d+\): connected to the relay/);
    const warn = "[WARN] the clawrelay plugin is enabled in";
    expect(lineOf(result.stdout, warn)).toContain("while a standalone agent runs: when the gateway restarts or reloads the plugin, the plugin takes the inbox back and the standalone agent stops");
    expect(fixOf(result.stdout, warn)).toBe("fix: keep the standalone agent: openclaw plugins disable clawrelay; or use the plugin: stop the standalone agent, then openclaw plugins reload clawrelay");
    // After `openclaw plugins disable clawrelay` (enabled: false): no warning.
    await withPlugin(home, gateway, { enabled: false });
    const after = await runCli(["doctor"], home.env);
    expect(after.stdout).not.toContain(warn);
    expect(after.stdout).toContain("[OK] the clawrelay plugin is installed in");
  });

  it("the plugin's agent running in its own home (config.home) is found, as the plugin's", async () => {
    const { gateway, home } = await fixture.setUp();
    const { pluginHome, agent } = await runPluginAgent(home, gateway, fixture.cleanups);
    const result = await runCli(["doctor"], home.env);
    expect(result.stdout).toContain(`[OK] the agent runs inside the OpenClaw gateway (the clawrelay plugin, pid ${process.pid}, home ${pluginHome}): connected to the relay`);
    expect(result.stdout).not.toContain("no running agent found");
    expect(result.stdout).not.toContain("older plugins.entries.clawrelay.config");
  });

  it("openclaw.json's plugin config changed after the plugin's agent started (the gateway refused to apply it): WARN naming the change, and the reload", async () => {
    const { gateway, home } = await fixture.setUp();
    const { pluginHome } = await runPluginAgent(home, gateway, fixture.cleanups);
    await withPlugin(home, gateway, { enabled: true, config: { home: pluginHome, apiPort: 4999, openclawAgent: "openclaw/ops" } });
    const result = await runCli(["doctor"], home.env);
    const line = `[WARN] the plugin's agent runs with an older plugins.entries.clawrelay.config than ${home.env.OPENCLAW_CONFIG_PATH} holds (apiPort (unset) → 4999, openclawAgent (unset) → "openclaw/ops"): the gateway did not apply the change`;
    expect(lineOf(result.stdout, "[WARN] the plugin's agent runs with")).toContain(line);
    expect(fixOf(result.stdout, "[WARN] the plugin's agent runs with")).toBe(
      'fix: openclaw plugins reload clawrelay (if it answers "still has active retained work", an agent run is still going: run it again when that run ends)',
    );
    // A warning, not a failure: the agent runs and delivers, with its old settings.
    expect(result.code, result.stdout).toBe(0);
  });

  it("a message on the dead shelf: WARN with its id and reason, and how to replay it", async () => {
    const { home } = await fixture.setUp();
    const agent = await fixture.run(home);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const posted = await postHook(fixture.relay().url, home, "unmapped_inbox/agent", JSON.stringify({ message: "nobody maps me" }));
    await waitUntil("the message on the dead shelf", async () => (await queueItems(fixture.relay().url, home, "dead")).length === 1);
    const result = await runCli(["doctor"], home.env);
    expect(result.stdout).toContain("[OK] the relay holds 0 queued, 0 sent (in flight), 1 dead");
    const warn = lineOf(result.stdout, "[WARN] 1 message(s) on the relay's dead shelf");
    expect(warn).toContain(`the first: #${String(posted.body.id)} (unmapped_inbox/agent): `);
    expect(warn).toContain('no hooks.mappings entry for "unmapped_inbox/agent"');
    expect(fixOf(result.stdout, "[WARN] 1 message(s)")).toBe("fix: clawrelay messages --state dead lists them all; once the cause is fixed: clawrelay messages replay ID (or drop ID)");
  });
});
