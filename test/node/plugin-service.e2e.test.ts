// The OpenClaw plugin's service (openclaw-plugin/relay-service.ts) driven the way the gateway drives
// it — register, start(ctx), stop — against the real relay and a stand-in gateway. Its settings come
// from the gateway's live config object, never from an openclaw.json file; the real gateway loading
// the plugin is test/openclaw/.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { OpenClawPluginApi, OpenClawPluginService, OpenClawPluginServiceContext } from "openclaw/plugin-sdk/plugin-entry";
import { portIsListening } from "../../local-agent/gateway/agent-gateway.ts";
import { relayService } from "../../openclaw-plugin/relay-service.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { postHook, relayFixture, waitUntil } from "../support/node/stack.ts";

const fixture = relayFixture();
const services: { service: OpenClawPluginService; ctx: OpenClawPluginServiceContext }[] = [];
afterEach(async () => {
  for (const { service, ctx } of services.splice(0)) await service.stop?.(ctx);
});

/** The gateway config a real gateway would hand the plugin, for a stand-in gateway. */
function gatewayConfig(gateway: StandinGateway): Record<string, unknown> {
  return {
    gateway: { port: gateway.port, auth: { token: gateway.authToken }, http: { endpoints: { chatCompletions: { enabled: true } } } },
    hooks: { enabled: true, token: gateway.token, path: gateway.hooksPath, mappings: [{ match: { path: "agentgram_inbox/agent" }, action: "agent" }] },
  };
}

function fakeHost(pluginConfig: Record<string, unknown>, config: { current: Record<string, unknown> }) {
  const lines: string[] = [];
  const logger = { info: (m: string) => lines.push(`info ${m}`), warn: (m: string) => lines.push(`warn ${m}`), error: (m: string) => lines.push(`error ${m}`) };
  const registered: OpenClawPluginService[] = [];
  const api: OpenClawPluginApi = { pluginConfig, logger, registerService: (s) => registered.push(s), runtime: { config: { current: () => config.current } } };
  const ctx: OpenClawPluginServiceContext = { config: config.current, stateDir: "/nonexistent", logger };
  return { api, ctx, lines, registered };
}

describe("the clawrelay gateway service", () => {
  it("starts from the plugin config, delivers with the gateway's hooks settings, follows a live config change, stops cleanly", async () => {
    // The home's openclaw.json points at a gateway the service must not use: the live config wins.
    const { home } = await fixture.setUp("Plugged");
    const first = await startStandinGateway();
    const other = await startStandinGateway();
    fixture.cleanups.push(() => first.close(), () => other.close());
    const config = { current: gatewayConfig(first) };
    const host = fakeHost({ home: home.env.CLAWRELAY_HOME, apiPort: 0, unknown: true }, config);
    const service = relayService(host.api, {});
    await service.start(host.ctx);
    services.push({ service, ctx: host.ctx });

    const run = join(home.env.CLAWRELAY_HOME, "run.json");
    expect(existsSync(run)).toBe(true);
    const { api_port } = JSON.parse(readFileSync(run, "utf8")) as { api_port: number };
    const status = (await (await fetch(`http://127.0.0.1:${api_port}/clawrelay/status`)).json()) as { runs_in: string; gateway: { port: number; config_path: string }; plugin_config: unknown };
    expect(status).toMatchObject({ runs_in: "gateway plugin", gateway: { port: first.port, config_path: "the gateway's own config (clawrelay plugin)" } });
    // The config it started with, as it read it: what doctor compares with openclaw.json.
    expect(status.plugin_config).toEqual({ home: home.env.CLAWRELAY_HOME, apiPort: 0 });
    await waitUntil("the log to say it started", () => host.lines.some((l) => l.startsWith("info clawrelay: agent started")));

    expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "via plugin" }))).status).toBe(202);
    await waitUntil("the gateway to get it", () => first.received.length === 1);

    config.current = gatewayConfig(other);
    expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "after reload" }))).status).toBe(202);
    await waitUntil("the other gateway to get it", () => other.received.length === 1);
    expect(first.received).toHaveLength(1);

    await service.stop?.(host.ctx);
    services.length = 0;
    expect(existsSync(run)).toBe(false);
    expect(await portIsListening(api_port)).toBe(false);
    expect(host.lines.some((l) => l.startsWith("info clawrelay: agent stopped"))).toBe(true);
    // Nothing secret reaches the gateway's log.
    expect(host.lines.join("\n")).not.toContain(first.token);
    expect(host.lines.join("\n")).not.toContain(home.settings.key.private_key);
  });

  it("without agent.json the start fails with the step to take, naming the plugin's home (not the CLI's default)", async () => {
    const gateway = await startStandinGateway();
    fixture.cleanups.push(() => gateway.close());
    const host = fakeHost({ home: "/nonexistent/clawrelay-home" }, { current: gatewayConfig(gateway) });
    const start = relayService(host.api, {}).start(host.ctx);
    await expect(start).rejects.toThrow("no agent.json in the plugin's home /nonexistent/clawrelay-home (plugins.entries.clawrelay.config.home)");
    await expect(start).rejects.toThrow("clawrelay init --relay <url> --home /nonexistent/clawrelay-home");
    await expect(start).rejects.toThrow("then: openclaw plugins reload clawrelay");
  });

  it("without a hooks token in the gateway's config the start fails naming it", async () => {
    const { gateway, home } = await fixture.setUp("NoHooks");
    const config = gatewayConfig(gateway);
    (config.hooks as Record<string, unknown>).token = "";
    const host = fakeHost({ home: home.env.CLAWRELAY_HOME, apiPort: 0 }, { current: config });
    await expect(relayService(host.api, {}).start(host.ctx)).rejects.toThrow(/no hooks\.token/);
  });
});
