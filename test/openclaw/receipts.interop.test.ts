// Issue 32, item 6 against the REAL OpenClaw gateway (openclaw@2026.9.6, see real-gateway.interop.test.ts
// for the set-up): a receipt is no model turn. Alice's agent runs with the real gateway; she sends to Bob, an
// inbox on the same relay; Bob's ack changes her outbox record (`messages --outbox --json`) and the fake
// model never sees it — Bob's own message after it, in the same conversation, is the model's first sight
// of him. With `--acks deliver` the next ack reaches the gateway: one model call.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutboxRecord } from "../../protocol/index.ts";
import { startAgent } from "../../local-agent/agent.ts";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { journalPath, loadSettings } from "../../local-agent/settings.ts";
import { ensureOpenClaw } from "../../scripts/openclaw-install.ts";
import { runCli } from "../node/cli-harness.ts";
import { NO_HUB, recordingLogger, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";
import { startFakeModel } from "./support/fake-model.ts";
import type { FakeModel } from "./support/fake-model.ts";
import { startRealGateway } from "./support/real-gateway.ts";
import type { RealGateway } from "./support/real-gateway.ts";

let model: FakeModel;
let relay: LocalRelay;
let gateway: RealGateway;
let alice: AgentHome;
let bob: AgentHome;
let agent: AgentHandle | undefined;

async function homeFor(name: string): Promise<AgentHome> {
  const dir = await mkdtemp(join(tmpdir(), "clawrelay-interop-receipts-"));
  const env = { CLAWRELAY_HOME: dir, OPENCLAW_CONFIG_PATH: gateway.configPath, HOME: gateway.home };
  const settingsPath = join(dir, "agent.json");
  await runInit({ settingsPath, env, relay: relay.url, hub: NO_HUB, name });
  return { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

beforeAll(async () => {
  const install = await ensureOpenClaw((line) => process.stderr.write(`[openclaw install] ${line}\n`));
  model = await startFakeModel();
  relay = await startRelay();
  gateway = await startRealGateway(install, { modelBaseUrl: model.baseUrl });
  alice = await homeFor("Interop receipts Alice");
  bob = await homeFor("Interop receipts Bob");
});

afterAll(async () => {
  await agent?.close().catch(() => {});
  await gateway?.stop();
  await model?.close();
  await relay?.stop();
  await alice?.cleanup();
  await bob?.cleanup();
});

/** Model calls that held `text` (a later run in the same session would carry it as history: none follows here). */
const modelCallsOn = (text: string) => model.requests.filter((r) => r.messages.some((m) => m.content.includes(text))).length;

async function send(from: AgentHome, to: AgentHome, text: string): Promise<string> {
  const sent = await runCli(["send", "--to", to.settings.agent_id, "--text", text], from.env, 30_000);
  expect(sent.code, sent.stderr).toBe(0);
  return /\(msg_id ([0-9a-f-]{36})\)/.exec(sent.stdout)![1]!;
}

async function outboxRecord(home: AgentHome, msgId: string): Promise<OutboxRecord | undefined> {
  const listed = await runCli(["messages", "--outbox", "--json"], home.env, 30_000);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { records: OutboxRecord[] }).records.find((r) => r.msg_id === msgId);
}

describe("receipts with the real gateway", () => {
  it("an ack sets the sent message's record and starts no agent run; with --acks deliver it is one model call", async () => {
    agent = await startAgent({ settings: alice.settings, env: alice.env, logger: recordingLogger(), apiPort: 0, runDir: alice.dir, journalFile: journalPath(alice.dir) });
    await waitUntil("connected", () => agent!.status().relay.state === "connected");

    const first = await send(alice, bob, "hello bob, from the interop");
    expect(await outboxRecord(alice, first)).toMatchObject({ to: bob.settings.agent_id, state: "acknowledged", receipt_type: "ack" });
    // Bob's message is in the same conversation, after his ack: had the ack been delivered, the model would have run on it first.
    const later = `bob-after-the-ack-${first.slice(0, 8)}`;
    await send(bob, alice, later);
    await waitUntil("the model to see bob's message", () => modelCallsOn(later) >= 1, 90_000).catch((err: unknown) => {
      throw new Error(`${String(err)}; agent: ${JSON.stringify(agent!.status().delivery)}; model saw: ${JSON.stringify(model.requests.map((r) => r.messages.map((m) => m.content.slice(0, 200))))}`);
    });
    expect(modelCallsOn(`acknowledged your message ${first}`)).toBe(0);
    expect(agent.status().delivery.delivered).toBe(1);

    const set = await runCli(["messages", "--outbox", "--acks", "deliver"], alice.env, 30_000);
    expect(set.code, set.stderr).toBe(0);
    const second = await send(alice, bob, "hello again, ack me this time");
    await waitUntil("the model to run on the ack", () => modelCallsOn(`acknowledged your message ${second}`) >= 1, 90_000);
    await waitUntil("its delivery acknowledged", () => agent!.status().delivery.delivered === 2, 30_000);
    expect(modelCallsOn(`acknowledged your message ${second}`)).toBe(1);
    expect((await outboxRecord(alice, second))?.state).toBe("acknowledged");
    const status = await runCli(["status"], alice.env, 30_000);
    expect(status.stdout).toContain("receipts  2 sent message(s) in the outbox");
  });
});
