// Issue 24 on the REAL OpenClaw gateway (2026.9.6), configured with the per-sender mapping block of
// docs/openclaw-setup.md as written there: npm start's one-liners are delivered by it (item 6); its
// `deliver: false` makes a hook run in a gateway without a chat channel end status=ok, where a mapping
// without it logs "deliveryError=Channel is required" (item 9); and the mapping the dead shelf suggests
// for an unmapped sub-path — a hub's wake body, a `message` body, a `text`-only webhook, other JSON — is
// parsed out of the reason, written into openclaw.json (hot-reloaded), and the replayed message is
// delivered (item 3). Through the real relay (workerd) and the real local agent.
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import JSON5 from "json5";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { loadSettings } from "../../local-agent/settings.ts";
import { ensureOpenClaw } from "../../scripts/openclaw-install.ts";
import { DEMO_SEND_TEXT, startLines } from "../../scripts/start-lines.ts";
import { runCli } from "../node/cli-harness.ts";
import { NO_HUB, postHook, queueItems, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";
import { startFakeModel } from "./support/fake-model.ts";
import type { FakeModel } from "./support/fake-model.ts";
import { startRealGateway } from "./support/real-gateway.ts";
import type { RealGateway } from "./support/real-gateway.ts";

const REPO = join(import.meta.dirname, "../..");
const nonce = crypto.randomUUID().slice(0, 8);
const CONTROL_PATH = "control/without-deliver-false";

/** The hooks settings of the "Per-sender sessions" block in docs/openclaw-setup.md. */
function recommendedHooks(): { allowRequestSessionKey: boolean; allowedSessionKeyPrefixes: string[]; mappings: Record<string, unknown>[] } {
  const doc = readFileSync(join(REPO, "docs", "openclaw-setup.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Per-sender sessions"));
  const block = /```json5\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("docs/openclaw-setup.md has no json5 block under Per-sender sessions");
  return (JSON5.parse(block) as { hooks: ReturnType<typeof recommendedHooks> }).hooks;
}

let model: FakeModel;
let relay: LocalRelay;
let gateway: RealGateway;
let home: AgentHome;
let agent: AgentHandle;
const recommended = recommendedHooks();

const modelSaw = (text: string) => model.requests.some((r) => r.messages.some((m) => m.content.includes(text)));

async function directPost(subpath: string, body: unknown): Promise<{ status: number; runId?: string }> {
  const res = await fetch(`${gateway.url}/hooks/${subpath}`, {
    method: "POST",
    headers: { authorization: `Bearer ${gateway.hooksToken}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, ...((await res.json()) as { runId?: string }) };
}

/** The gateway's log line for a finished hook run. */
function runLine(runId: string): string | undefined {
  return gateway.logTail(2000).split("\n").find((line) => line.includes(`hook agent run completed runId=${runId}`));
}

const reloads = () => gateway.logTail(2000).split("\n").filter((line) => line.includes("config hot reload applied")).length;

beforeAll(async () => {
  const install = await ensureOpenClaw((line) => process.stderr.write(`[openclaw install] ${line}\n`));
  model = await startFakeModel();
  relay = await startRelay();
  gateway = await startRealGateway(install, {
    modelBaseUrl: model.baseUrl,
    extraConfig: (config) => {
      const hooks = config.hooks as Record<string, unknown>;
      Object.assign(hooks, recommended, {
        mappings: [...recommended.mappings, { match: { path: CONTROL_PATH }, action: "agent", messageTemplate: "{{message}}" }],
      });
    },
  });
  const dir = join(gateway.home, "clawrelay");
  const env = { CLAWRELAY_HOME: dir, OPENCLAW_CONFIG_PATH: gateway.configPath, HOME: gateway.home };
  const settingsPath = join(dir, "agent.json");
  await runInit({ settingsPath, env, relay: relay.url, hub: NO_HUB, name: "Mapping Fix" });
  home = { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: () => rm(dir, { recursive: true, force: true }) };
  agent = await runAgent(home);
  await waitUntil("the agent to connect", () => agent.status().relay.state === "connected");
});

afterAll(async () => {
  await agent?.close().catch(() => {});
  await gateway?.stop();
  await model?.close();
  await relay?.stop();
});

async function delivered(what: string): Promise<void> {
  await waitUntil(what, async () => (await queueItems(relay.url, home, "all")).length === 0, 60_000);
}

describe("issue 24 on the real gateway, with the recommended per-sender mapping of docs/openclaw-setup.md", () => {
  it("the recommended block is the per-sender one, with deliver: false", () => {
    const agentMapping = recommended.mappings.find((m) => (m.match as { path: string }).path === "agentgram_inbox/agent");
    expect(agentMapping).toMatchObject({ sessionKey: "{{sessionKey}}", deliver: false });
  });

  it("npm start's one-liners: the webhook body and the signed envelope are both delivered (not shelved)", async () => {
    const lines = startLines({ home: home.dir, agentId: home.settings.agent_id, hooksUrl: `${relay.url}/inbox/${home.settings.agent_id}/hooks`, webhookToken: home.settings.webhook_token ?? null, apiPort: 0 });
    const curl = lines.find((line) => line.includes("/hooks/agentgram_inbox/agent")) ?? "";
    const body = JSON.parse(/-d '([^']*)'/.exec(curl)?.[1] ?? "null") as { message: string };
    const text = `${body.message} ${nonce}`;
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", JSON.stringify({ ...body, message: text }))).status).toBe(202);
    expect(lines.some((line) => line.includes(`send --to ${home.settings.agent_id} --text "${DEMO_SEND_TEXT}"`))).toBe(true);
    const sent = await runCli(["send", "--to", home.settings.agent_id, "--text", `${DEMO_SEND_TEXT} ${nonce}`], home.env, 30_000);
    expect(sent.code, sent.stderr).toBe(0);
    await waitUntil("the model to see the webhook one-liner", () => modelSaw(text), 60_000);
    await waitUntil("the model to see the send one-liner", () => modelSaw(`${DEMO_SEND_TEXT} ${nonce}`), 60_000);
    await delivered("both one-liners acknowledged");
    expect(await queueItems(relay.url, home, "dead")).toEqual([]);
  });

  it("deliver: false: a hook run without a chat channel ends status=ok; the same body without it logs Channel is required", async () => {
    const hubBody = { message: `ag_0123456789ab says: quiet ${nonce}`, name: "ag_0123456789ab", channel: "last", sessionKey: "agentline:ag_0123456789ab" };
    const quiet = await directPost("agentgram_inbox/agent", hubBody);
    expect(quiet.status).toBe(200);
    await waitUntil("the recommended mapping's run to finish", () => runLine(quiet.runId!) !== undefined, 90_000);
    expect(runLine(quiet.runId!)).toContain("status=ok");
    expect(runLine(quiet.runId!)).not.toContain("deliveryError");
    expect(model.requests.some((r) => r.messages.some((m) => m.content.includes("Channel is required")))).toBe(false);

    const noisy = await directPost(CONTROL_PATH, { message: `control ${nonce}` });
    expect(noisy.status).toBe(200);
    await waitUntil("the control mapping's run to finish", () => runLine(noisy.runId!) !== undefined, 90_000);
    expect(runLine(noisy.runId!)).toContain("deliveryError=Channel is required");
  });

  it("unmapped sub-paths: the suggested mapping, pasted into openclaw.json, delivers the replayed message", async () => {
    const bodies: Record<string, Record<string, unknown>> = {
      "custom_inbox/wake": { text: `wake-${nonce}`, body: `wake-${nonce}`, mode: "now", sessionKey: "agentline:ag_0123456789ab" },
      "custom/message": { message: `message-body-${nonce}` },
      "custom/text": { text: `text-only-${nonce}` },
      "custom/other": { event: `deploy-${nonce}`, id: 7, data: { ok: true } },
    };
    const ids: Record<string, number> = {};
    for (const [subpath, body] of Object.entries(bodies)) {
      const answer = await postHook(relay.url, home, subpath, JSON.stringify(body));
      expect(answer.status).toBe(202);
      ids[subpath] = answer.body.id as number;
    }
    await waitUntil("all four on the dead shelf", async () => (await queueItems(relay.url, home, "dead")).length === 4, 60_000);
    const dead = await queueItems(relay.url, home, "dead");
    const suggested = Object.keys(bodies).map((subpath) => {
      const reason = dead.find((item) => item.id === ids[subpath])?.reason ?? "";
      const entry = /add (\{.*\}) to hooks\.mappings/.exec(reason)?.[1];
      expect(entry, reason).toBeDefined();
      return JSON5.parse(entry!) as Record<string, unknown>;
    });
    expect(suggested[0]).toMatchObject({ action: "wake", textTemplate: "{{text}}", sessionKey: "{{sessionKey}}" });
    expect(suggested.slice(1).map((m) => m.action)).toEqual(["agent", "agent", "agent"]);

    const before = reloads();
    const config = gateway.readConfig() as { hooks: { mappings: unknown[] } };
    config.hooks.mappings.push(...suggested);
    gateway.writeConfig(config as unknown as Record<string, unknown>);
    await waitUntil("the gateway to hot-reload the mappings", () => reloads() > before, 60_000);

    for (const id of Object.values(ids)) {
      const replay = await runCli(["messages", "replay", String(id)], home.env, 30_000);
      expect(replay.code, `${replay.stdout}${replay.stderr}`).toBe(0);
    }
    await delivered("the four replayed messages acknowledged (2xx)");
    expect(await queueItems(relay.url, home, "dead")).toEqual([]);
    for (const text of [`message-body-${nonce}`, `text-only-${nonce}`, `deploy-${nonce}`]) {
      await waitUntil(`the model to see ${text}`, () => modelSaw(text), 60_000);
    }
  });
});
