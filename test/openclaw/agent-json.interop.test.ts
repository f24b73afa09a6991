// Issue 24 against the REAL OpenClaw gateway (openclaw@2026.9.6, see real-gateway.interop.test.ts for the
// set-up): a stale gateway.hooks_token in agent.json is refused (401) and pauses delivery; the token fixed
// in agent.json (written atomically, as editors do) is picked up by the running agent, and the waiting
// message is delivered without a restart — `clawrelay status` no longer says PAUSED.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { journalPath, loadSettings, saveSettings } from "../../local-agent/settings.ts";
import { ensureOpenClaw } from "../../scripts/openclaw-install.ts";
import { runCli } from "../node/cli-harness.ts";
import { NO_HUB, postHook, queueItems, recordingLogger, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";
import { startFakeModel } from "./support/fake-model.ts";
import type { FakeModel } from "./support/fake-model.ts";
import { startRealGateway } from "./support/real-gateway.ts";
import type { RealGateway } from "./support/real-gateway.ts";

let model: FakeModel;
let relay: LocalRelay;
let gateway: RealGateway;
let home: AgentHome;
let agent: AgentHandle | undefined;

beforeAll(async () => {
  const install = await ensureOpenClaw((line) => process.stderr.write(`[openclaw install] ${line}\n`));
  model = await startFakeModel();
  relay = await startRelay();
  gateway = await startRealGateway(install, { modelBaseUrl: model.baseUrl });
  const dir = await mkdtemp(join(tmpdir(), "clawrelay-interop-agent-json-"));
  const env = { CLAWRELAY_HOME: dir, OPENCLAW_CONFIG_PATH: gateway.configPath, HOME: gateway.home };
  const settingsPath = join(dir, "agent.json");
  await runInit({ settingsPath, env, relay: relay.url, hub: NO_HUB, name: "Interop agent.json" });
  home = { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: () => rm(dir, { recursive: true, force: true }) };
});

afterAll(async () => {
  await agent?.close().catch(() => {});
  await gateway?.stop();
  await model?.close();
  await relay?.stop();
  await home?.cleanup();
});

const hubBody = (text: string) => JSON.stringify({ message: `ag_0123456789ab says: ${text}`, name: "ag_0123456789ab", channel: "last", sessionKey: "agentline:ag_0123456789ab" });

describe("agent.json followed, with the real gateway", () => {
  it("a stale hooks token in agent.json: paused on 401; fixed in agent.json, delivered without a restart", async () => {
    saveSettings(home.settingsPath, { ...loadSettings(home.settingsPath), gateway: { hooks_token: "stale-hooks-token-from-before" } });
    home.settings = loadSettings(home.settingsPath);
    const logger = recordingLogger();
    agent = await startAgent({ settings: home.settings, env: home.env, logger, apiPort: 0, runDir: home.dir, journalFile: journalPath(home.dir) });
    await waitUntil("connected", () => agent!.status().relay.state === "connected");
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", hubBody("waiting out a stale token"))).status).toBe(202);
    await waitUntil("paused on 401", () => agent!.status().delivery.paused !== null, 30_000);
    expect(agent.status().delivery.paused).toContain("401");
    const paused = await runCli(["status"], home.env, 30_000);
    expect(paused.stdout).toContain("PAUSED");

    saveSettings(home.settingsPath, { ...loadSettings(home.settingsPath), gateway: { hooks_token: gateway.hooksToken } });
    await waitUntil("delivered with the fixed token", () => agent!.status().delivery.delivered === 1, 90_000);
    // Not the paused message's own 60 s retry: the changed target woke it, before it was delivered.
    const events = logger.lines.map((l) => l.event);
    const woke = logger.lines.findIndex((l) => l.event === "retrying now" && l.fields.why === "the gateway settings changed" && Number(l.fields.woken) >= 1);
    expect(woke).toBeGreaterThanOrEqual(0);
    expect(events.indexOf("delivered")).toBeGreaterThan(woke);
    await waitUntil("the relay's queue empty", async () => (await queueItems(relay.url, home, "all")).length === 0, 30_000);
    await waitUntil("the model saw it", () => model.requests.some((r) => r.messages.some((m) => m.content.includes("waiting out a stale token"))), 60_000);
    const after = await runCli(["status"], home.env, 30_000);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).not.toContain("PAUSED");
    expect(agent.status().gateway.settings_file).toMatchObject({ error: null, restart_needed: [] });
  });
});
