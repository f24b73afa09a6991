// The clawrelay plugin in the REAL OpenClaw gateway (2026.9.6) with a `home` that has no agent.json: the
// install succeeds as far as the gateway is concerned (`plugins inspect` says "loaded") but the service
// fails; `clawrelay doctor` exits 1 naming the cause and the fix, `status` says the plugin's agent is not
// running (not "clawrelay start"), and the gateway's log names `--home <the plugin's home>`. Then the fix
// doctor prints (init --home, plugins reload) makes the plugin deliver, and plain `status` and `doctor`
// from the CLI's own home (another inbox) find it running (issue 32, item 1). Last, a plugin config change saved
// while an agent run holds the plugin: the gateway refuses it and never retries, doctor names the
// unapplied change, and the reload it advises applies it once the run is over. One gateway for the file.
// The plugin is built from this checkout's sources into a temporary folder (dist/, the manifest and its
// run-time dependencies): the checkout's own dist/ may be stale, and a linked folder that changes while
// the gateway loads it is refused ("Plugin source changed while preparing its reload").
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInit } from "../../local-agent/cli/init.ts";
import { loadSettings } from "../../local-agent/settings.ts";
import { ensureOpenClaw } from "../../scripts/openclaw-install.ts";
import { runCli } from "../node/cli-harness.ts";
import { NO_HUB, postHook, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";
import { startFakeModel } from "./support/fake-model.ts";
import type { FakeModel } from "./support/fake-model.ts";
import { freePort, startRealGateway } from "./support/real-gateway.ts";
import { REFUSED, refusalsLogged, reloadWhenFree } from "./support/plugin-reload.ts";
import type { RealGateway } from "./support/real-gateway.ts";

const REPO = join(import.meta.dirname, "../..");
/** What the installed package needs at run time: package.json's own list, so a dependency added there is copied too. */
/**
 * Every package an install from npm would bring (the run-time dependencies and theirs), as package-lock.json
 * lists them: each entry under node_modules/ that is not dev-only. The gateway checks a plugin's dependencies'
 * own dependencies too (the MCP SDK's ajv, zod …), so copying the direct ones alone is not an install.
 */
const RUNTIME_PACKAGES = Object.entries((JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean; link?: boolean }> }).packages)
  .filter(([path, entry]) => path.startsWith("node_modules/") && entry.dev !== true && entry.link !== true)
  .map(([path]) => path);
const nonce = crypto.randomUUID().slice(0, 8);

let model: FakeModel;
let relay: LocalRelay;
let gateway: RealGateway;
let pluginDir: string;
/** The plugin's `home` (plugins.entries.clawrelay.config.home): empty at first. */
let pluginHome: string;
/** The CLI's own home, with an inbox claimed by `clawrelay init`. */
let cliHome: string;
let apiPort: number;
const dirs: string[] = [];

const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};

/** package.json, the manifest, dist/ compiled from the sources now, and the run-time packages copied (a symlinked node_modules is refused by the gateway's install scan). */
function buildPlugin(): string {
  const dir = temp("clawrelay-plugin-build-");
  cpSync(join(REPO, "package.json"), join(dir, "package.json"));
  cpSync(join(REPO, "openclaw.plugin.json"), join(dir, "openclaw.plugin.json"));
  try {
    execFileSync(join(REPO, "node_modules/.bin/tsc"), ["-p", join(REPO, "tsconfig.build.json"), "--outDir", join(dir, "dist")], { cwd: REPO, stdio: "pipe" });
  } catch {
    // A type error elsewhere in the tree still emits; the entry must exist.
  }
  if (!existsSync(join(dir, "dist/openclaw-plugin/clawrelay-plugin.js"))) throw new Error("tsc -p tsconfig.build.json emitted no plugin entry");
  // Nested paths (node_modules/a/node_modules/b) come after their parent in the lock file, so a parent's copy never overwrites them.
  for (const path of RUNTIME_PACKAGES) {
    if (!existsSync(join(REPO, path))) continue; // An optional package for another platform is in the lock file but not installed.
    mkdirSync(join(dir, path, ".."), { recursive: true });
    cpSync(join(REPO, path), join(dir, path), { recursive: true });
  }
  return dir;
}

const cliEnv = (home: string) => ({ CLAWRELAY_HOME: home, OPENCLAW_CONFIG_PATH: gateway.configPath, HOME: gateway.home });

type PluginsConfig = { plugins?: { entries?: Record<string, Record<string, unknown>> } };

function setPluginConfig(config: Record<string, unknown>): void {
  const current = gateway.readConfig() as PluginsConfig;
  const entries = ((current.plugins ??= {}).entries ??= {});
  entries.clawrelay = { ...entries.clawrelay, config };
  gateway.writeConfig(current as Record<string, unknown>);
}

async function pluginStatus(): Promise<{ runs_in: string; agent_id: string; relay: { state: string } } | null> {
  const res = await fetch(`http://127.0.0.1:${apiPort}/clawrelay/status`).catch(() => null);
  return res?.ok ? ((await res.json()) as { runs_in: string; agent_id: string; relay: { state: string } }) : null;
}

beforeAll(async () => {
  const install = await ensureOpenClaw((line) => process.stderr.write(`[openclaw install] ${line}\n`));
  pluginDir = buildPlugin();
  model = await startFakeModel();
  relay = await startRelay();
  pluginHome = temp("clawrelay-plugin-home-");
  cliHome = temp("clawrelay-cli-home-");
  apiPort = await freePort();
  // The gateway's own CLAWRELAY_HOME is the (empty) plugin home too: the first start already fails there.
  gateway = await startRealGateway(install, { modelBaseUrl: model.baseUrl, env: { CLAWRELAY_HOME: pluginHome, SOCIETY_AI_API_PORT: String(apiPort) } });
  await runInit({ settingsPath: join(cliHome, "agent.json"), env: cliEnv(cliHome), relay: relay.url, hub: NO_HUB, name: "CLI home" });
});

afterAll(async () => {
  await gateway?.stop();
  await model?.close();
  await relay?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("doctor and the plugin in the real gateway", () => {
  it("installed with --accept-capabilities into a running gateway, the plugin is saved but its service fails for want of agent.json, while inspect says loaded", async () => {
    const installed = await gateway.cli(["plugins", "install", "-l", pluginDir, "--force", "--accept-capabilities"], 180_000);
    // The gateway applies the install at once and reports the service's failure; the install itself is saved.
    expect(`${installed.stdout}\n${installed.stderr}`).toContain("plugin services failed to start");
    expect((gateway.readConfig() as PluginsConfig).plugins?.entries?.clawrelay).toMatchObject({ enabled: true });
    setPluginConfig({ home: pluginHome, apiPort });
    await waitUntil("the service's failure in the gateway's log", () => gateway.logTail(200).includes(`clawrelay init --relay <url> --home ${pluginHome}`), 60_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${gateway.logTail(40)}`);
    });
    const inspect = await gateway.cli(["plugins", "inspect", "clawrelay", "--runtime"], 60_000);
    expect(inspect.stdout).toContain("Status: loaded");
    expect(inspect.stdout).toContain(`Source: ${join(pluginDir, "dist/openclaw-plugin/clawrelay-plugin.js")}`);
    expect(await pluginStatus()).toBeNull();
  });

  it("doctor exits 1 naming the plugin's home without agent.json and the fix; status gives the plugin's advice, not `clawrelay start`", async () => {
    const doctor = await runCli(["doctor"], cliEnv(cliHome), 60_000);
    expect(doctor.code, doctor.stdout).toBe(1);
    expect(doctor.stdout).toContain(`[FAIL] the clawrelay plugin is enabled in ${gateway.configPath}, but its home ${pluginHome} has no agent.json: its service cannot start, and nothing is delivered`);
    expect(doctor.stdout).toContain(`clawrelay init --relay <url> --home ${pluginHome}; then: openclaw plugins reload clawrelay`);
    expect(doctor.stdout).toContain(`set plugins.entries.clawrelay.config.home to "${cliHome}"`);
    expect(doctor.stdout).toContain("[FAIL] no running agent found: the clawrelay plugin is enabled");
    expect(doctor.stdout).toContain("[OK] the relay holds 0 queued, 0 sent (in flight), 0 dead");

    const status = await runCli(["status"], cliEnv(cliHome), 30_000);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(`the plugin's agent is not running (its home ${pluginHome} has no agent.json)`);
    expect(status.stderr).not.toContain("start it with: clawrelay start");
  });

  it("the printed fix works: clawrelay init --home <the plugin's home>, openclaw plugins reload clawrelay; then the plugin delivers and doctor passes", async () => {
    const init = await runCli(["init", "--relay", relay.url, "--hub", NO_HUB, "--home", pluginHome], cliEnv(cliHome), 60_000);
    expect(init.code, init.stderr).toBe(0);
    const reload = await gateway.cli(["plugins", "reload", "clawrelay"], 120_000);
    expect(reload.code, `${reload.stdout}\n${reload.stderr}\n${gateway.logTail(30)}`).toBe(0);
    await waitUntil("the plugin's agent to connect", async () => (await pluginStatus())?.relay.state === "connected", 90_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${gateway.logTail(40)}`);
    });
    const settings = loadSettings(join(pluginHome, "agent.json"));
    expect(await pluginStatus()).toMatchObject({ runs_in: "gateway plugin", agent_id: settings.agent_id });

    const home: AgentHome = { dir: pluginHome, env: cliEnv(pluginHome), settings, settingsPath: join(pluginHome, "agent.json"), cleanup: async () => {} };
    const text = `delivered-after-the-fix-${nonce}`;
    const body = JSON.stringify({ message: `ag_0123456789ab says: ${text}`, name: "ag_0123456789ab", channel: "last", sessionKey: "agentline:ag_0123456789ab" });
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", body)).status).toBe(202);
    await waitUntil("the model to see the plugin's delivery", () => model.requests.some((r) => r.messages.some((m) => m.content.includes(text))), 60_000);

    const doctor = await runCli(["doctor"], cliEnv(pluginHome), 60_000);
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).toContain(`[OK] the clawrelay plugin is enabled in ${gateway.configPath}; its home ${pluginHome} (plugins.entries.clawrelay.config.home) holds agent.json of ${settings.agent_id}`);
    expect(doctor.stdout).toMatch(/\[OK\] the agent runs inside the OpenClaw gateway \(the clawrelay plugin, pid \d+, home .*\): connected to the relay/);
    const status = await runCli(["status"], cliEnv(pluginHome), 30_000);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain("inside the OpenClaw gateway");
    expect(readFileSync(join(pluginHome, "run.json"), "utf8")).toContain(`"api_port":${apiPort}`);
  });

  it("issue 32 item 1: after that fix, plain status and doctor (the CLI's own home, another inbox) exit 0 and name the plugin's agent running", async () => {
    const settings = loadSettings(join(pluginHome, "agent.json"));
    const cli = loadSettings(join(cliHome, "agent.json"));
    const status = await runCli(["status"], cliEnv(cliHome), 30_000);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`agent     ${settings.agent_id} (inside the OpenClaw gateway`);
    expect(status.stdout).toContain(`WARNING   the clawrelay plugin's agent delivers ${settings.agent_id} from its home ${pluginHome}; this CLI's settings ${join(cliHome, "agent.json")} are another inbox, ${cli.agent_id}`);
    const doctor = await runCli(["doctor"], cliEnv(cliHome), 60_000);
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).not.toContain("the plugin's agent is not running");
    expect(doctor.stdout).toMatch(/\[OK\] the agent runs inside the OpenClaw gateway \(the clawrelay plugin, pid \d+, home .*, inbox ag_\w+\): connected to the relay/);
  });

  it("a config change saved while an agent run holds the plugin is refused and not retried; doctor names it; the advised reload applies it after the run", async () => {
    const settings = loadSettings(join(pluginHome, "agent.json"));
    const home: AgentHome = { dir: pluginHome, env: cliEnv(pluginHome), settings, settingsPath: join(pluginHome, "agent.json"), cleanup: async () => {} };
    // The fake model holds this turn's answer until the test lets it go: the gateway's agent run goes on.
    const held = `held-run-${nonce}`;
    const body = JSON.stringify({ message: `ag_0123456789ab says: ${held} [[hold:${held}]]`, name: "ag_0123456789ab", channel: "last", sessionKey: "agentline:ag_0123456789ab" });
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", body)).status).toBe(202);
    await waitUntil("the model to be asked the held turn", () => model.requests.some((r) => r.messages.some((m) => m.content.includes(held))), 60_000);

    const oldPort = apiPort;
    const movedPort = await freePort();
    const refusedBefore = refusalsLogged(gateway);
    setPluginConfig({ home: pluginHome, apiPort: movedPort });
    await waitUntil("the gateway to refuse the change", () => refusalsLogged(gateway) > refusedBefore, 30_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${gateway.logTail(30)}`);
    });
    expect(await pluginStatus()).toMatchObject({ relay: { state: "connected" } }); // still the old port

    const doctor = await runCli(["doctor"], cliEnv(pluginHome), 60_000);
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).toContain(`[WARN] the plugin's agent runs with an older plugins.entries.clawrelay.config than ${gateway.configPath} holds (apiPort ${oldPort} → ${movedPort}): the gateway did not apply the change`);
    expect(doctor.stdout).toContain("fix: openclaw plugins reload clawrelay");

    // The reload doctor advises is refused while the run goes on, and applies the saved config after it.
    const during = await gateway.cli(["plugins", "reload", "clawrelay"], 120_000);
    expect(during.code).not.toBe(0);
    expect(`${during.stdout}\n${during.stderr}`).toContain(REFUSED);
    model.release(held);
    await reloadWhenFree(gateway, "clawrelay");
    apiPort = movedPort;
    await waitUntil("the plugin's API on the new port", async () => (await pluginStatus())?.relay.state === "connected", 60_000);
    expect((await fetch(`http://127.0.0.1:${oldPort}/clawrelay/status`).catch(() => null))?.ok ?? false).toBe(false);
    const after = await runCli(["doctor"], cliEnv(pluginHome), 60_000);
    expect(after.code, after.stdout).toBe(0);
    expect(after.stdout).not.toContain("older plugins.entries.clawrelay.config");
  });
});
