// The real OpenClaw gateway's A2A channel published through the relay (issue 31): a gateway with
// channels.a2a on and its peers' tokens given as `${VAR}` (one of them unset), the real local agent
// connected to the real relay, `clawrelay a2a enable`, and the A2A project's own JavaScript client
// (@a2a-js/sdk) resolving the card at <relay>/inbox/<id>/ and sending SendMessage through the relay: the
// reply is the fake model's answer. A wrong token, and the literal `${VAR}` text of the unset peer (which
// the gateway itself would take: it keeps an unset variable's reference as the token), are refused at the
// relay and never reach the gateway. The agent stopped: the stored card, and a JSON-RPC error saying offline.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientFactory } from "@a2a-js/sdk/client";
import type { Client } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import type { Message, Task } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { loadSettings } from "../../local-agent/settings.ts";
import { ensureOpenClaw } from "../../scripts/openclaw-install.ts";
import type { OpenClawInstall } from "../../scripts/openclaw-install.ts";
import { runCli } from "../node/cli-harness.ts";
import { NO_HUB, ownerCall, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";
import { startFakeModel } from "./support/fake-model.ts";
import type { FakeModel } from "./support/fake-model.ts";
import { startRealGateway } from "./support/real-gateway.ts";
import type { RealGateway } from "./support/real-gateway.ts";

const nonce = crypto.randomUUID().slice(0, 8);
const PEER_TOKEN = randomBytes(32).toString("hex");
/** The gateway keeps an unset variable's `${NAME}` text as the value: a bearer of exactly that text is this peer to it. */
const UNSET_REFERENCE = "${A2A_GHOST_TOKEN}";
const REPLY_TIMEOUT_MS = 30_000;

let install: OpenClawInstall;
let model: FakeModel;
let relay: LocalRelay;
let gateway: RealGateway;
let home: AgentHome;
let agent: AgentHandle | null = null;
/** The CLI's environment: the agent's home, the gateway's openclaw.json, and the peer's variable as the gateway has it. */
let cliEnv: Record<string, string>;

const inboxUrl = (): string => `${relay.url}/inbox/${home.settings.agent_id}`;

function sendRequest(text: string): Parameters<Client["sendMessage"]>[0] {
  const message: Message = {
    messageId: crypto.randomUUID(), contextId: "", taskId: "", role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
    metadata: undefined, extensions: [], referenceTaskIds: [],
  };
  return { tenant: "", message, configuration: undefined, metadata: undefined };
}

const bearer = (token: string) => ({ serviceParameters: { authorization: `Bearer ${token}` } });

function textOf(task: Task): string {
  return task.artifacts.flatMap((artifact) => artifact.parts).map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");
}

/** SendMessage as raw JSON-RPC, for the HTTP status and body the SDK turns into an exception. */
async function rawSend(token: string, text: string): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(`${inboxUrl()}/a2a/v1`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: `raw-${nonce}`, method: "SendMessage", params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } } }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** Model calls whose prompt contains `text` (the gateway wraps an A2A task in its own envelope). */
function modelSaw(text: string): number {
  return model.requests.filter((r) => r.messages.some((m) => m.content.includes(text))).length;
}

beforeAll(async () => {
  install = await ensureOpenClaw((line) => process.stderr.write(`[openclaw install] ${line}\n`));
  model = await startFakeModel();
  relay = await startRelay();
  gateway = await startRealGateway(install, {
    modelBaseUrl: model.baseUrl,
    env: { A2A_HERMES_TOKEN: PEER_TOKEN },
    extraConfig: (config) => {
      // No advertisedUrl: the gateway names its loopback origin in the card, and the relay rewrites it.
      config.channels = { a2a: { enabled: true, replyTimeoutMs: REPLY_TIMEOUT_MS, peers: { hermes: { token: "${A2A_HERMES_TOKEN}" }, ghost: { token: UNSET_REFERENCE } } } };
    },
  });
  // The channel starts after the hooks route answers: its card is the sign it is up.
  await waitUntil("the gateway's A2A card", async () => (await fetch(`${gateway.url}/.well-known/agent-card.json`).catch(() => null))?.status === 200, 60_000);
  const dir = await mkdtemp(join(tmpdir(), "clawrelay-interop-a2a-"));
  const env = { CLAWRELAY_HOME: dir, OPENCLAW_CONFIG_PATH: gateway.configPath, HOME: gateway.home };
  const settingsPath = join(dir, "agent.json");
  await runInit({ settingsPath, env, relay: relay.url, hub: NO_HUB, name: `A2A interop ${nonce}` });
  home = { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: () => rm(dir, { recursive: true, force: true }) };
  cliEnv = { ...env, A2A_HERMES_TOKEN: PEER_TOKEN };
  agent = await runAgent(home);
  const running = agent;
  await waitUntil("the agent connected", () => running.status().relay.state === "connected");
});

afterAll(async () => {
  await agent?.close().catch(() => {});
  await gateway?.stop();
  await model?.close();
  await relay?.stop();
  await home?.cleanup();
  process.stderr.write(`\n[openclaw a2a interop] model calls ${model?.requests.length ?? 0}\n`);
});

describe("the real gateway's A2A channel through the relay", () => {
  it("a2a enable publishes the channel; a2a status names the peer whose ${VAR} is unset", async () => {
    const enabled = await runCli(["a2a", "enable"], cliEnv, 60_000);
    expect(enabled.code, `${enabled.stdout}\n${enabled.stderr}`).toBe(0);
    expect(enabled.stdout + enabled.stderr).not.toContain(PEER_TOKEN);
    const status = await runCli(["a2a", "status"], cliEnv, 60_000);
    expect(status.code, `${status.stdout}\n${status.stderr}`).toBe(0);
    expect(status.stdout).toContain("hermes");
    expect(status.stdout).toMatch(/ghost[^\n]*A2A_GHOST_TOKEN/);
  });

  it("the card at <relay>/inbox/<id>/.well-known/agent-card.json names the relay's endpoint (agent.json and HEAD too)", async () => {
    const res = await fetch(`${inboxUrl()}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as { name: string; supportedInterfaces: { url: string; protocolBinding: string }[] };
    expect(card.supportedInterfaces).toEqual([expect.objectContaining({ url: `${inboxUrl()}/a2a/v1`, protocolBinding: "JSONRPC" })]);
    expect(JSON.stringify(card)).not.toContain(`127.0.0.1:${gateway.port}`);
    const legacy = await fetch(`${inboxUrl()}/.well-known/agent.json`);
    expect(legacy.status).toBe(200);
    expect(((await legacy.json()) as typeof card).supportedInterfaces[0]?.url).toBe(`${inboxUrl()}/a2a/v1`);
    expect((await fetch(`${inboxUrl()}/.well-known/agent-card.json`, { method: "HEAD" })).status).toBe(200);
  });

  it("@a2a-js/sdk resolves the card through the relay and SendMessage is answered by the gateway's agent (the fake model)", async () => {
    // The trailing slash: the SDK resolves ".well-known/agent-card.json" relative to the base it is given.
    const client = await new ClientFactory().createFromUrl(`${inboxUrl()}/`);
    const question = `what-does-the-relay-carry-${nonce}`;
    const before = model.requests.length;
    const result = await client.sendMessage(sendRequest(question), bearer(PEER_TOKEN));
    expect("status" in result, JSON.stringify(result)).toBe(true);
    const task = result as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const reply = textOf(task);
    const n = Number(/^fake reply #(\d+): /.exec(reply)?.[1]);
    expect(n, reply).toBeGreaterThan(before);
    // That numbered model call is the one that carried the question.
    expect(model.requests[n - 1]?.messages.some((m) => m.content.includes(question))).toBe(true);
  });

  it("a wrong token, and the unset peer's literal ${VAR} text, are refused at the relay: the gateway never sees them", async () => {
    const client = await new ClientFactory().createFromUrl(`${inboxUrl()}/`);
    const wrong = `wrong-token-${nonce}`;
    await expect(client.sendMessage(sendRequest(wrong), bearer("not-a-peer-token"))).rejects.toThrow(/401/);
    const ghost = `unset-reference-${nonce}`;
    const refused = await rawSend(UNSET_REFERENCE, ghost);
    expect(refused.status).toBe(401);
    // The relay's own refusal (its error shape and code, and the scheme named, which the gateway's 401 does not).
    expect(refused.headers.get("www-authenticate")).toBe("Bearer");
    expect(refused.body).toMatchObject({ error: { code: "a2a_unauthorized" } });
    const view = await ownerCall(relay.url, home, "GET", "/a2a");
    expect(view.body).toMatchObject({ enabled: true, last_refusal: { code: "unauthorized" } });
    // The relay answered both before passing anything on, so nothing of them can reach the model later.
    expect(modelSaw(wrong)).toBe(0);
    expect(modelSaw(ghost)).toBe(0);
  });

  it("the agent stopped: the stored card (x-clawrelay-card: stored), and SendMessage gets a JSON-RPC error saying offline and when to retry", async () => {
    await agent?.close();
    agent = null;
    const res = await fetch(`${inboxUrl()}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-clawrelay-card")).toBe("stored");
    expect(((await res.json()) as { supportedInterfaces: { url: string }[] }).supportedInterfaces[0]?.url).toBe(`${inboxUrl()}/a2a/v1`);
    const offline = await rawSend(PEER_TOKEN, `while-offline-${nonce}`);
    expect(offline.status).toBe(503);
    expect(offline.headers.get("retry-after")).toBe("30");
    expect(offline.body).toMatchObject({ jsonrpc: "2.0", id: `raw-${nonce}`, error: { code: -32000, data: { code: "agent_offline", retry_after_sec: 30 } } });
    const client = await new ClientFactory().createFromUrl(`${inboxUrl()}/`);
    await expect(client.sendMessage(sendRequest(`sdk-while-offline-${nonce}`), bearer(PEER_TOKEN))).rejects.toThrow(/offline/i);
  });
});
