// Processes die and come back: the local agent killed mid-stream, stopped with SIGTERM, and the relay
// restarted on its persisted state. Every message arrives, once as a gateway run.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { identityFromPrivateKey } from "../../local-agent/identity.ts";
import { signedRelayCall } from "../../local-agent/relay/relay-api.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";

const CLI = join(import.meta.dirname, "../../local-agent/cli.ts");
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function stack(options: { persist?: boolean } = {}): Promise<{ relay: LocalRelay; gateway: StandinGateway; home: AgentHome }> {
  const persistDir = options.persist ? await mkdtemp(join(tmpdir(), "clawrelay-state-")) : undefined;
  const relay = await startRelay(persistDir ? { persistDir } : {});
  const gateway = await startStandinGateway();
  const home = await makeAgentHome(relay, gateway);
  cleanups.push(() => relay.stop(), () => gateway.close(), () => home.cleanup());
  if (persistDir) cleanups.push(() => rm(persistDir, { recursive: true, force: true }));
  return { relay, gateway, home };
}

function spawnAgent(home: AgentHome): ChildProcess {
  const child = spawn(process.execPath, [CLI, "start", "--json"], { env: { ...process.env, ...home.env }, stdio: ["ignore", "ignore", "pipe"] });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
    }
  });
  return child;
}

async function postHooks(relay: LocalRelay, home: AgentHome, from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n++) {
    const res = await fetch(`${relay.url}/inbox/${home.settings.agent_id}/hooks/agentgram_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}` },
      body: JSON.stringify({ n }),
    });
    expect(res.status).toBe(202);
  }
}

async function relayQueue(relay: LocalRelay, home: AgentHome): Promise<number> {
  const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
  const answer = await signedRelayCall(relay.url, identity, "GET", `/inbox/${home.settings.agent_id}/messages?ack=false`);
  return Number(answer.body.count);
}

const bodies = (gateway: StandinGateway) => gateway.received.map((r) => (JSON.parse(r.body.toString()) as { n: number }).n);

describe("restarts", () => {
  it("agent killed with SIGKILL mid-stream: after a restart every message arrives once, the redelivered one with the same key", async () => {
    const { relay, gateway, home } = await stack();
    await postHooks(relay, home, 1, 12);
    // The 4th run is recorded by the gateway but its answer held back: the agent dies before it can ack.
    gateway.onReceive = () => {
      if (gateway.received.length === 4) gateway.answerDelayMs = 5000;
    };
    let first = spawnAgent(home);
    await waitUntil("the 4th to reach the gateway", () => gateway.received.length === 4);
    first.kill("SIGKILL");
    await new Promise((r) => first.once("exit", r));
    gateway.answerDelayMs = 0;
    first = spawnAgent(home);
    await waitUntil("all 12 messages", () => gateway.received.length === 12 && gateway.requests.length >= 13, 20_000);
    expect(bodies(gateway)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const keys = gateway.requests.map((r) => r.idempotencyKey);
    const repeated = keys.filter((k, i) => keys.indexOf(k) !== i);
    expect(repeated).toEqual([gateway.received[3]!.idempotencyKey]);
    await waitUntil("the relay queue to drain", async () => (await relayQueue(relay, home)) === 0);
  });

  it("SIGTERM: exits 0 promptly, leaving the message in flight unacknowledged on the relay", async () => {
    const { relay, gateway, home } = await stack();
    // The gateway never answers within the test's life: an agent that waited for the post would not exit.
    gateway.answerDelayMs = 120_000;
    await postHooks(relay, home, 1, 1);
    const child = spawnAgent(home);
    await waitUntil("the message to reach the gateway", () => gateway.received.length === 1);
    const exited = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    child.kill("SIGTERM");
    let code: number | null | undefined;
    void exited.then((c) => (code = c));
    await waitUntil("the agent's exit after SIGTERM (not waiting for the post in flight)", () => code !== undefined);
    expect(code).toBe(0);
    expect(await relayQueue(relay, home)).toBe(1);
  });

  it("relay restarted on its persisted state: queued messages survive and the agent reconnects and resumes", async () => {
    const { relay, gateway, home } = await stack({ persist: true });
    await postHooks(relay, home, 1, 2);
    await relay.restart();
    let agent: AgentHandle | null = await runAgent(home);
    cleanups.push(async () => agent?.close());
    await waitUntil("the messages queued before the restart", () => gateway.received.length === 2);
    await relay.restart();
    await waitUntil("the agent to notice", () => agent!.status().relay.state !== "connected" || gateway.received.length > 2, 5000).catch(() => undefined);
    await postHooks(relay, home, 3, 4);
    await waitUntil("messages after the second restart", () => gateway.received.length === 4, 20_000);
    expect(bodies(gateway)).toEqual([1, 2, 3, 4]);
    expect(agent.status().relay.state).toBe("connected");
    await agent.close();
    agent = null;
  });
});
