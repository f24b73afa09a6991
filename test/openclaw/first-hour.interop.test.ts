// Issue 32's first hour with the REAL OpenClaw gateway (2026.9.6), items 2 and 3 (item 1, the plugin
// after its own fix seen from the CLI's default home, extends doctor-plugin.interop.test.ts, which
// already installs the plugin and applies that fix):
// - item 2: the gateway is down when npm start begins. npm start's choice (scripts/start-gateway.ts) is
//   to wait for the configured gateway, not to put the stand-in in its place; the agent runs as npm start
//   runs it, the one-liners it prints are sent, and once the same gateway (port, tokens) starts, both
//   reach the model — no restart.
// - item 3: a stale gateway.hooks_token in agent.json overriding openclaw.json's: the real gateway
//   refuses it (401) and doctor names the override (file and key) and a fix in agent.json.
// Through the real relay (workerd) and the real local agent.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { loadSettings, saveSettings } from "../../local-agent/settings.ts";
import { ensureOpenClaw } from "../../scripts/openclaw-install.ts";
import type { OpenClawInstall } from "../../scripts/openclaw-install.ts";
import { chooseGateway } from "../../scripts/start-gateway.ts";
import { DEMO_SEND_TEXT, DEMO_WEBHOOK_BODY } from "../../scripts/start-lines.ts";
import { runCli } from "../node/cli-harness.ts";
import { NO_HUB, postHook, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";
import { startFakeModel } from "./support/fake-model.ts";
import type { FakeModel } from "./support/fake-model.ts";
import { startRealGateway } from "./support/real-gateway.ts";
import type { RealGateway } from "./support/real-gateway.ts";

const nonce = crypto.randomUUID().slice(0, 8);

let install: OpenClawInstall;
let model: FakeModel;
let relay: LocalRelay;
/** The gateway as configured before npm start: its openclaw.json copied out, then the gateway stopped. */
let same: { port: number; authToken: string; hooksToken: string };
let gateway: RealGateway | null = null;
let configDir: string;
let configPath: string;
let agent: AgentHandle | undefined;
const dirs: string[] = [];

const modelSaw = (text: string) => model.requests.some((r) => r.messages.some((m) => m.content.includes(text)));

async function homeWith(name: string): Promise<AgentHome> {
  const dir = mkdtempSync(join(tmpdir(), "clawrelay-first-hour-"));
  dirs.push(dir);
  const env = { CLAWRELAY_HOME: dir, OPENCLAW_CONFIG_PATH: configPath, HOME: configDir };
  const settingsPath = join(dir, "agent.json");
  await runInit({ settingsPath, env, relay: relay.url, hub: NO_HUB, name });
  return { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: async () => {} };
}

beforeAll(async () => {
  install = await ensureOpenClaw((line) => process.stderr.write(`[openclaw install] ${line}\n`));
  model = await startFakeModel();
  relay = await startRelay();
  const first = await startRealGateway(install, { modelBaseUrl: model.baseUrl });
  same = { port: first.port, authToken: first.authToken, hooksToken: first.hooksToken };
  configDir = mkdtempSync(join(tmpdir(), "clawrelay-first-hour-openclaw-"));
  dirs.push(configDir);
  configPath = join(configDir, "openclaw.json");
  const config = first.readConfig();
  delete config.logging; // its log file lived in the stopped gateway's HOME
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  await first.stop();
});

afterAll(async () => {
  await agent?.close().catch(() => {});
  await gateway?.stop();
  await model?.close();
  await relay?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("the first hour with the real gateway", () => {
  it("item 2: the gateway down as npm start begins: it is waited for, not replaced by the stand-in; once it starts, the one-liners sent meanwhile reach the model", async () => {
    const env = { OPENCLAW_CONFIG_PATH: configPath, HOME: configDir };
    const choice = await chooseGateway(env);
    expect(choice).toMatchObject({ kind: "wait", gateway: { port: same.port, configPath } });

    // As npm start runs the agent on "wait": no gateway overrides in agent.json, openclaw.json followed.
    const home = await homeWith("First hour");
    expect(home.settings.gateway).toBeUndefined();
    agent = await runAgent(home);
    await waitUntil("connected", () => agent!.status().relay.state === "connected");

    const webhookText = `${DEMO_WEBHOOK_BODY.message} ${nonce}`;
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", JSON.stringify({ ...DEMO_WEBHOOK_BODY, message: webhookText }))).status).toBe(202);
    const sent = await runCli(["send", "--to", home.settings.agent_id, "--text", `${DEMO_SEND_TEXT} ${nonce}`], home.env, 30_000);
    expect(sent.code, sent.stderr).toBe(0);
    expect(agent.status().delivery.delivered).toBe(0);

    gateway = await startRealGateway(install, { modelBaseUrl: model.baseUrl, same });
    await waitUntil("the model to see the webhook one-liner", () => modelSaw(webhookText), 180_000);
    await waitUntil("the model to see the send one-liner", () => modelSaw(`${DEMO_SEND_TEXT} ${nonce}`), 180_000);
  }, 420_000);

  it("item 3: a stale hooks token in agent.json: the real gateway refuses it, and doctor names the override in agent.json, not openclaw.json", async () => {
    expect(gateway, "item 2's test starts the gateway").not.toBeNull();
    const home = await homeWith("Stale override");
    saveSettings(home.settingsPath, { ...home.settings, gateway: { hooks_token: `stale-${nonce}` } });
    const doctor = await runCli(["doctor"], home.env, 60_000);
    expect(doctor.code, doctor.stdout).toBe(1);
    expect(doctor.stdout).toContain(`[WARN] the hooks token is set by gateway.hooks_token in ${home.settingsPath}, and differs from openclaw.json's hooks.token`);
    expect(doctor.stdout).toContain(`[FAIL] the gateway refused the hooks token set by gateway.hooks_token in ${home.settingsPath}, which overrides openclaw.json's hooks.token (POST /hooks/wake {} answered 401)`);
    expect(doctor.stdout).toContain(`fix: remove gateway.hooks_token from ${home.settingsPath} (the agent then posts with openclaw.json's hooks.token`);
    expect(doctor.stdout).not.toContain("[OK] hooks.token is set");
    expect(doctor.stdout).not.toContain(`stale-${nonce}`);
  });
});
