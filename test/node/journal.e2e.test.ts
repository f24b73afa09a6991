// The delivery journal against a gateway whose Idempotency-Key memory is gone (replayWindowMs 0, as
// after a gateway restart or past its 5 minutes): the real CLI agent, SIGKILLed after the gateway ran
// a message but before the relay heard the ack, must not run it again when it comes back. The lost ack
// is made by freezing a TCP proxy between agent and relay the moment the gateway takes the message.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { fileMode, journalPath, saveSettings } from "../../local-agent/settings.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { ReceivedHook, StandinGateway } from "../../scripts/standin-gateway.ts";
import { startProxy } from "../support/node/freezable-proxy.ts";
import type { FreezableProxy } from "../support/node/freezable-proxy.ts";
import { NO_HUB, makeAgentHome, ownerCall, postHook, relayFixture, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli, spawnCli } from "./cli-harness.ts";
import type { RunningCli } from "./cli-harness.ts";

const fixture = relayFixture();

async function setUp(): Promise<{ gateway: StandinGateway; home: AgentHome }> {
  const gateway = await startStandinGateway({ replayWindowMs: 0 });
  const home = await makeAgentHome(fixture.relay(), gateway);
  fixture.cleanups.push(() => gateway.close(), () => home.cleanup());
  return { gateway, home };
}

function setRelayUrl(home: AgentHome, url: string): void {
  saveSettings(home.settingsPath, { ...home.settings, relay_url: url });
}

/** The agent's relay connection goes through a freezable proxy (saved in its settings). */
async function viaProxy(home: AgentHome): Promise<FreezableProxy> {
  const proxy = await startProxy(fixture.relay().port);
  fixture.cleanups.push(() => proxy.close());
  setRelayUrl(home, proxy.url);
  return proxy;
}

function start(home: AgentHome): RunningCli {
  const running = spawnCli(["start", "--json"], home.env);
  fixture.cleanups.push(() => running.stop());
  return running;
}

async function kill(running: RunningCli): Promise<void> {
  const exited = new Promise((r) => running.child.once("exit", r));
  running.child.kill("SIGKILL");
  await exited;
}

async function postNumbered(home: AgentHome, count: number, from = 1): Promise<number[]> {
  const ids: number[] = [];
  for (let n = from; n < from + count; n++) {
    const answer = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ n }));
    expect(answer.status).toBe(202);
    ids.push(answer.body.id as number);
  }
  return ids;
}

const numberOf = (hook: ReceivedHook) => (JSON.parse(hook.body.toString()) as { n: number }).n;
const journalFile = (home: AgentHome) => journalPath(home.env.CLAWRELAY_HOME);
const journalHas = (home: AgentHome, id: number) => existsSync(journalFile(home)) && new RegExp(`^f ${id} `, "m").test(readFileSync(journalFile(home), "utf8"));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * When the gateway runs message `n`, the proxy freezes (the agent's ack of it never reaches the relay)
 * and the gateway answers every later hook 503 until released, so nothing else runs before the kill.
 */
function lostAckTrap(gateway: StandinGateway, proxy: FreezableProxy) {
  let armed: number | null = null;
  let stalled = false;
  gateway.onReceive = (hook) => {
    if (numberOf(hook) !== armed) return;
    proxy.freeze();
    stalled = true;
  };
  gateway.refuse = () => (stalled ? 503 : null);
  return {
    arm: (n: number) => (armed = n),
    release: () => {
      stalled = false;
      armed = null;
    },
  };
}

async function backlog(home: AgentHome): Promise<number> {
  return Number((await ownerCall(fixture.relay().url, home, "GET", "/messages?ack=false")).body.backlog);
}

/** Each run the gateway accepted, per Idempotency-Key: a key seen twice is a message run twice. */
function runsPerKey(gateway: StandinGateway): Map<string | null, number> {
  const runs = new Map<string | null, number>();
  for (const hook of gateway.received) runs.set(hook.idempotencyKey, (runs.get(hook.idempotencyKey) ?? 0) + 1);
  return runs;
}

/** `after` of each relay connection the agent logged (its resume cursor when it authenticated). */
function connectedAfter(running: RunningCli): number[] {
  return running
    .stderr()
    .split("\n")
    .filter((line) => line.includes('"event":"relay connected"'))
    .map((line) => (JSON.parse(line) as { after: number }).after);
}

/** The trap fired for message `n`: it was run and journalled, its ack is stuck in the frozen proxy. */
async function killAfterJournalled(home: AgentHome, running: RunningCli, id: number): Promise<void> {
  await waitUntil(`id ${id} in the delivery journal (agent stderr: ${running.stderr().slice(-2000)})`, () => journalHas(home, id));
  await kill(running);
}

describe("delivery journal", () => {
  it("duplicates beyond the gateway's memory: a message run whose ack was lost is not run again after SIGKILL and restart", async () => {
    const { gateway, home } = await setUp();
    const proxy = await viaProxy(home);
    const trap = lostAckTrap(gateway, proxy);
    const ids = await postNumbered(home, 12);
    trap.arm(5);
    await killAfterJournalled(home, start(home), ids[4]!);
    // 5 ran at the gateway, yet the relay still holds it: its ack is stuck in the frozen proxy.
    expect(await backlog(home)).toBeGreaterThanOrEqual(8);

    trap.release();
    const second = start(home);
    await waitUntil("all 12 runs and an empty relay queue", async () => gateway.received.length >= 12 && (await backlog(home)) === 0, 20_000);
    expect(gateway.received.map(numberOf)).toEqual(range(1, 12));
    expect([...runsPerKey(gateway).values()].every((runs) => runs === 1)).toBe(true);
    expect(gateway.requests.filter((r) => r.idempotencyKey === `clawrelay:${home.settings.agent_id}:${ids[4]}`)).toHaveLength(1);
    // The journal, not the relay, stopped the repeat: the relay still held 5 and sent it again, and the
    // restarted agent acknowledged it from its journal without posting it.
    expect(second.stderr()).toContain(`"event":"already delivered; acknowledging again","id":${ids[4]}`);
  });

  it("duplicates beyond the gateway's memory: the journal still holds when the agent comes back on another URL of the same relay", async () => {
    const { gateway, home } = await setUp();
    const proxy = await viaProxy(home);
    const trap = lostAckTrap(gateway, proxy);
    const ids = await postNumbered(home, 6);
    trap.arm(3);
    await killAfterJournalled(home, start(home), ids[2]!);

    trap.release();
    setRelayUrl(home, fixture.relay().url);
    const second = start(home);
    await waitUntil("all 6 runs and an empty relay queue", async () => gateway.received.length >= 6 && (await backlog(home)) === 0, 20_000);
    const journalLog = second.stderr().split("\n").filter((line) => line.includes("delivery journal"));
    expect(gateway.received.map(numberOf), `the restarted agent logged: ${journalLog.join(" | ")}`).toEqual(range(1, 6));
  });

  it("duplicates beyond the gateway's memory: a message run above a refused one whose reject was lost is not run again", async () => {
    const { gateway, home } = await setUp();
    const proxy = await viaProxy(home);
    const ids = await postNumbered(home, 8);
    // 4 is refused and the network freezes with it (the relay never hears the reject), so 5 is
    // journalled above the resume cursor (3), not under it; then everything stalls until the kill.
    let stalled = false;
    let frozen = false;
    gateway.refuse = (hook) => {
      if (numberOf(hook) !== 4) return stalled ? 503 : null;
      if (!frozen) proxy.freeze();
      frozen = true;
      return 400;
    };
    gateway.onReceive = (hook) => (stalled ||= numberOf(hook) === 5);
    await killAfterJournalled(home, start(home), ids[4]!);
    stalled = false;
    const second = start(home);
    await waitUntil("7 runs and an empty relay queue", async () => gateway.received.length >= 7 && (await backlog(home)) === 0, 20_000);
    expect(gateway.received.map(numberOf)).toEqual([1, 2, 3, 5, 6, 7, 8]);
    // Never past the refused one, whose reject the relay never heard: it must come again.
    expect(connectedAfter(second)[0]).toBeLessThan(ids[3]!);
    expect(second.stderr()).toContain(`"event":"already delivered; acknowledging again","id":${ids[4]}`);
    expect(gateway.requests.filter((r) => r.idempotencyKey === `clawrelay:${home.settings.agent_id}:${ids[4]}`)).toHaveLength(1);
    const dead = (await ownerCall(fixture.relay().url, home, "GET", "/queue?state=dead")).body.messages as { id: number }[];
    expect(dead.map((m) => m.id)).toEqual([ids[3]]);
  });

  it("an agent killed and restarted four times in a stream of 50, keys forgotten, runs each body exactly once and in order", async () => {
    const { gateway, home } = await setUp();
    const proxy = await viaProxy(home);
    const trap = lostAckTrap(gateway, proxy);
    const ids = await postNumbered(home, 50);
    const kills = [7, 18, 29, 41];
    for (const n of kills) {
      trap.arm(n);
      await killAfterJournalled(home, start(home), ids[n - 1]!);
      // Everything up to n ran once; the relay still holds n (its ack was lost) and all after it.
      expect(gateway.received.map(numberOf)).toEqual(range(1, n));
      expect(await backlog(home)).toBeGreaterThanOrEqual(50 - n + 1);
      trap.release();
    }
    start(home);
    await waitUntil("all 50 runs and an empty relay queue", async () => gateway.received.length >= 50 && (await backlog(home)) === 0, 20_000);
    expect(gateway.received.map(numberOf)).toEqual(range(1, 50));
    expect(runsPerKey(gateway).size).toBe(50);
  });

  it("the resume cursor survives a clean restart: ready.after and status say the last delivered id; the journal is mode 600", async () => {
    const { gateway, home } = await setUp();
    const ids = await postNumbered(home, 3);
    const first = start(home);
    await waitUntil("3 runs and an empty relay queue", async () => gateway.received.length === 3 && (await backlog(home)) === 0);
    const status = async () => {
      const result = await runCli(["status", "--json"], home.env);
      expect(result.code).toBe(0);
      return JSON.parse(result.stdout) as AgentStatus & { relay_queue: { queued: number } };
    };
    await waitUntil("status to answer", async () => (await runCli(["status", "--json"], home.env)).code === 0);
    expect((await status()).delivery.cursor).toBe(ids[2]);
    expect(await first.stop()).toBe(0);

    expect(existsSync(journalFile(home))).toBe(true);
    expect(fileMode(journalFile(home))).toBe(0o600);

    const second = start(home);
    await waitUntil("the restarted agent to connect", () => connectedAfter(second).length > 0);
    expect(connectedAfter(second)[0]).toBe(ids[2]);
    await waitUntil("status of the restarted agent", async () => (await runCli(["status", "--json"], home.env)).code === 0);
    const restarted = await status();
    expect(restarted.delivery).toMatchObject({ cursor: ids[2], delivered: 0 });
    expect(restarted.relay_queue).toMatchObject({ queued: 0 });

    const [fourth] = await postNumbered(home, 1, 4);
    await waitUntil("the message after the restart", () => gateway.received.length === 4);
    await waitUntil("the cursor to move past it", async () => (await status()).delivery.cursor === fourth);
    expect(gateway.received.map(numberOf)).toEqual([1, 2, 3, 4]);
  });

  it("regression: a relay whose state was wiped (a new epoch, ids from 1 again) gets every new message, not skipped by the old cursor", async () => {
    // An in-memory relay of its own: restarting it wipes it, as deleting a local relay's state does.
    const relay = await startRelay();
    fixture.cleanups.push(() => relay.stop());
    const gateway = await startStandinGateway({ replayWindowMs: 0 });
    const home = await makeAgentHome(relay, gateway);
    fixture.cleanups.push(() => gateway.close(), () => home.cleanup());
    const journal = journalPath(home.env.CLAWRELAY_HOME);
    let agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, journalFile: journal });
    for (let n = 1; n <= 5; n++) expect((await postHook(relay.url, home, "agentgram_inbox/agent", JSON.stringify({ n }))).status).toBe(202);
    await waitUntil("the first life's 5 runs", () => gateway.received.length === 5 && agent.status().delivery.cursor === 5);
    await agent.close();

    await relay.restart();
    const reclaimed = await runInit({ settingsPath: home.settingsPath, env: home.env, relay: relay.url, hub: NO_HUB });
    const settings = reclaimed.settings;
    const fresh = { ...home, settings };
    const ids: number[] = [];
    // More than the old cursor: without the epoch, `after: 5` would acknowledge (delete) ids 1–5 unseen.
    for (let n = 6; n <= 12; n++) ids.push((await postHook(relay.url, fresh, "agentgram_inbox/agent", JSON.stringify({ n }))).body.id as number);
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7]);
    agent = await startAgent({ settings, env: home.env, logger: silentLogger, apiPort: 0, journalFile: journal });
    fixture.cleanups.push(() => agent.close());
    await waitUntil("the new life's 7 runs", () => gateway.received.length === 12);
    expect(gateway.received.map(numberOf)).toEqual(range(1, 12));
    await waitUntil("the cursor of the new life", () => agent.status().delivery.cursor === 7);
  });
});
