// Issue 32, item 2: `npm start` with the gateway down at its start (scripts/start-gateway.ts). A gateway
// configured in openclaw.json (hooks on, a token) is waited for, never replaced by the stand-in; with
// none configured, the stand-in hands over to the first configured gateway that answers — the running
// agent posts there from then on, without a restart; and doctor, asked while the stand-in takes the
// messages, says so instead of OK. Real relay and agent; stand-in gateways play the real one.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSettings, saveSettings } from "../../local-agent/settings.ts";
import { chooseGateway, dropGatewayOverrides, whenGatewayUp } from "../../scripts/start-gateway.ts";
import { openClawConfigFor, startStandinGateway } from "../../scripts/standin-gateway.ts";
import { postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

const hubBody = (text: string) => JSON.stringify({ message: text, name: "curl", sessionKey: "agentline:curl" });
const bodies = (received: { body: Buffer }[]) => received.map((h) => h.body.toString("utf8"));

describe("npm start's gateway", () => {
  it("configured and down at the start: waited for (not the stand-in); configured and up: used; none, or hooks off: the stand-in", async () => {
    const { gateway } = await fixture.setUp();
    const dir = mkdtempSync(join(tmpdir(), "clawrelay-start-gateway-"));
    fixture.cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const env = { OPENCLAW_CONFIG_PATH: join(dir, "openclaw.json") };
    expect(await chooseGateway(env)).toEqual({ kind: "standin" });
    writeFileSync(env.OPENCLAW_CONFIG_PATH, openClawConfigFor(gateway));
    expect(await chooseGateway(env)).toMatchObject({ kind: "real", gateway: { port: gateway.port } });
    await gateway.close();
    expect(await chooseGateway(env)).toMatchObject({ kind: "wait", gateway: { port: gateway.port, configPath: env.OPENCLAW_CONFIG_PATH } });
    writeFileSync(env.OPENCLAW_CONFIG_PATH, openClawConfigFor(gateway).replace("enabled: true,\n    token", "enabled: false,\n    token"));
    expect(await chooseGateway(env)).toEqual({ kind: "standin" });
  });

  it("the stand-in in use, then a configured gateway comes up: the running agent's next message reaches it, not the stand-in; doctor WARNs about the stand-in meanwhile", async () => {
    const { gateway: real, home } = await fixture.setUp();
    const { port, token, authToken } = real;
    await real.close();
    // As npm start leaves it with no gateway answering: agent.json points at its announced stand-in.
    const standin = await startStandinGateway({ announceAs: "npm start" });
    fixture.cleanups.push(() => standin.close());
    saveSettings(home.settingsPath, { ...loadSettings(home.settingsPath), gateway: { port: standin.port, hooks_token: standin.token, hooks_path: standin.hooksPath, auth_token: standin.authToken, chat_completions: true } });
    home.settings = loadSettings(home.settingsPath);

    const doctor = await runCli(["doctor"], home.env, 60_000);
    expect(doctor.stdout).toContain(`[WARN] 127.0.0.1:${standin.port} is the stand-in gateway of npm start, not OpenClaw: it only prints what it receives, and no OpenClaw agent sees these messages`);
    expect(doctor.stdout).not.toContain("[OK] the gateway accepts hooks.token");

    const agent = await fixture.run(home);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", hubBody("before the gateway"))).status).toBe(202);
    await waitUntil("the stand-in got the first", () => standin.received.length === 1, 30_000);

    let handedOver = false;
    const watch = whenGatewayUp(home.env, () => {
      dropGatewayOverrides(home.settingsPath);
      handedOver = true;
    }, 50);
    fixture.cleanups.push(async () => watch.stop());
    const cameUp = await startStandinGateway({ port, token, authToken });
    fixture.cleanups.push(() => cameUp.close());
    await waitUntil("the handover", () => handedOver, 30_000);
    expect(loadSettings(home.settingsPath).gateway).toBeUndefined();

    // The agent looks at agent.json on every post (and every second): no restart.
    await waitUntil("the agent to follow", () => agent.status().gateway.port === port, 30_000);
    expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", hubBody("after the gateway came up"))).status).toBe(202);
    await waitUntil("the real gateway got the second", () => cameUp.received.length === 1, 30_000);
    expect(bodies(cameUp.received)[0]).toContain("after the gateway came up");
    expect(bodies(standin.received)).toEqual([hubBody("before the gateway")]);
  });
});
