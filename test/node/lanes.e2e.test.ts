// Lanes on the real relay (the bundled Worker) with the real agent: a down, hanging or failing app holds
// only its own source's lane. The agent is SIGKILLed while an app is down with more than a window of its
// events waiting and nothing goes to the dead shelf; a hanging app's backlog does not hold up the gateway;
// a head the app keeps answering with 5xx goes to the dead shelf after its source's retry budget and the
// lane goes on; events an older agent set aside come back in their lane, in order, to an agent whose
// cursor is past them. The older-protocol pairing (either side without lanes) is in lanes-compat.e2e.test.ts.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { connectSigningInput, toBase64 } from "../../protocol/index.ts";
import type { DeliveryFrame, ServerFrame } from "../../protocol/index.ts";
import { identityFromPrivateKey } from "../../local-agent/identity.ts";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { signedRelayCall } from "../../local-agent/relay/relay-api.ts";
import { DeliveryJournal } from "../../local-agent/delivery/delivery-journal.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { journalPath, loadSettings, saveSettings } from "../../local-agent/settings.ts";
import { postHook, queueItems, relayFixture, waitUntil, waitWhileProgressing } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { spawnCli } from "./cli-harness.ts";
import type { RunningCli } from "./cli-harness.ts";
import { startStandinApp } from "./forward-app.ts";
import type { StandinApp } from "./forward-app.ts";

const fixture = relayFixture();
const WINDOW = 8;

function withWindow(home: AgentHome, window: number): void {
  saveSettings(home.settingsPath, { ...loadSettings(home.settingsPath), window });
}

/** `clawrelay start` as users run it, in its own process, killed after the test if still running. */
async function startCliAgent(home: AgentHome): Promise<RunningCli> {
  const agent = spawnCli(["start", "--json"], home.env);
  fixture.cleanups.push(async () => {
    if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill("SIGKILL");
  });
  await waitUntil("the agent's relay connected line", () => agent.stderr().includes('"event":"relay connected"'), 30_000);
  return agent;
}

async function sigkill(agent: RunningCli): Promise<void> {
  const exited = new Promise((resolve) => agent.child.once("exit", resolve));
  agent.child.kill("SIGKILL");
  await exited;
}

/** Adds a token source forwarding to `target` with the given policy fields, straight through the owner API. */
async function forwardingSource(home: AgentHome, name: string, target: string, policy: Record<string, unknown> = {}): Promise<string> {
  if (Object.keys(policy).length === 0) return (await addSource(await inboxAccess(home.settings), { name, kind: "token", target: { forward: target, allowPublic: false } })).post_url;
  const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
  const added = await signedRelayCall(fixture.relay().url, identity, "POST", `/inbox/${home.settings.agent_id}/sources`, { name, kind: "token", forward: target, ...policy });
  expect(added.status).toBe(201);
  return String(added.body.post_url);
}

async function postEvents(url: string, from: number, to: number): Promise<number[]> {
  const ids: number[] = [];
  for (let n = from; n <= to; n++) {
    const answer = await fetch(`${url}/orders?n=${n}`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"n":${n}}` });
    expect(answer.status).toBe(200);
    ids.push(((await answer.json()) as { id: number }).id);
  }
  return ids;
}

const numbers = (app: StandinApp) => app.requests.map((r) => (JSON.parse(r.body.toString()) as { n: number }).n);

/** Watches the relay's dead shelf for the whole test: the most it ever held. */
function watchDeadShelf(home: AgentHome): { most(): number; stop(): Promise<void> } {
  let most = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      most = Math.max(most, (await queueItems(fixture.relay().url, home, "dead")).length);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return { most: () => most, stop: async () => ((running = false), await loop) };
}

describe("lanes on the real relay with the real agent", () => {
  it("an agent SIGKILLed while an app is down with more than a window of its events waiting: once the app is back and the agent restarted, every event arrives once, in order, and none ever sat on the dead shelf", async () => {
    const { gateway, home } = await fixture.setUp("Killed");
    withWindow(home, WINDOW);
    const shop = await startStandinApp();
    fixture.cleanups.push(() => shop.close());
    await shop.down();
    const url = await forwardingSource(home, "shop", `${shop.url}/hooks`);
    const dead = watchDeadShelf(home);
    fixture.cleanups.push(() => dead.stop());
    await postEvents(url, 1, 3 * WINDOW);
    let agent = await startCliAgent(home);
    // The gateway's lane goes on while the shop's waits.
    expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", '{"message":"while the shop is down"}')).status).toBe(202);
    await waitUntil("the gateway's message delivered while the app is down", () => gateway.received.length === 1, 30_000);
    await waitUntil("the shop's head in the agent's hands", async () => (await queueItems(fixture.relay().url, home, "sent")).length > 0);
    await sigkill(agent);
    expect(shop.requests).toHaveLength(0);

    await shop.up();
    agent = await startCliAgent(home);
    await waitWhileProgressing("every event at the shop", () => shop.requests.length >= 3 * WINDOW, () => shop.requests.length);
    await waitUntil("the relay holding nothing", async () => (await queueItems(fixture.relay().url, home, "all")).length === 0);
    expect(numbers(shop)).toEqual(Array.from({ length: 3 * WINDOW }, (_, i) => i + 1));
    await dead.stop();
    expect(dead.most()).toBe(0);
    await agent.stop();
  });

  it("a hanging app with a backlog holds only its lane: the gateway's messages are delivered while its first post is still unanswered", async () => {
    const { gateway, home } = await fixture.setUp("Hanging");
    withWindow(home, WINDOW);
    const held: ServerResponse[] = [];
    const hanging = createServer((_req: IncomingMessage, res: ServerResponse) => void held.push(res));
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    fixture.cleanups.push(() => new Promise((resolve) => (hanging.closeAllConnections(), hanging.close(resolve))));
    const port = (hanging.address() as { port: number }).port;
    const url = await forwardingSource(home, "slow", `http://127.0.0.1:${port}/hooks`, { timeout_sec: 300 });
    await postEvents(url, 1, 4 * WINDOW);
    const agent = await fixture.run(loadHome(home));
    await waitUntil("the hanging app holding the lane's head", () => held.length === 1, 30_000);
    for (let n = 1; n <= 5; n++) expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", `{"message":"gateway ${n}"}`)).status).toBe(202);
    await waitWhileProgressing("the gateway's five messages", () => gateway.received.length === 5, () => gateway.received.length);
    expect(gateway.received.map((r) => r.body.toString())).toEqual([1, 2, 3, 4, 5].map((n) => `{"message":"gateway ${n}"}`));
    // Still the first post, unanswered: the gateway did not wait for it to time out.
    expect(held).toHaveLength(1);
    expect(held[0]!.writableEnded).toBe(false);
    // The relay sent the slow lane no more than its share.
    const sent = await queueItems(fixture.relay().url, home, "sent");
    expect(sent.filter((m) => m.lane === "source:slow").length).toBeLessThanOrEqual(WINDOW / 4);
    for (const res of held) res.writeHead(200).end("ok");
    await agent.close();
  });

  it("a head the app keeps answering with 500 goes to the dead shelf after the source's retry budget, with its reason, and the lane goes on in order", async () => {
    const { home } = await fixture.setUp("Poisoned");
    const shop = await startStandinApp();
    fixture.cleanups.push(() => shop.close());
    shop.script({ status: 500, body: "boom" }, { status: 500, body: "boom" }, { status: 500, body: "boom" });
    const url = await forwardingSource(home, "shop", `${shop.url}/hooks`, { retries: 2 });
    const [head] = await postEvents(url, 1, 5);
    const agent = await fixture.run(loadHome(home));
    await waitWhileProgressing("the four after the head at the shop", () => shop.requests.length === 7, () => shop.requests.length);
    expect(numbers(shop)).toEqual([1, 1, 1, 2, 3, 4, 5]);
    await waitUntil("the head on the dead shelf", async () => (await queueItems(fixture.relay().url, home, "dead")).length === 1);
    const [shelved] = await queueItems(fixture.relay().url, home, "dead");
    expect(shelved).toMatchObject({ id: head, attempts: 3, last_status: 500 });
    expect(shelved!.reason).toMatch(/500/);
    expect(shelved!.reason).toContain(`clawrelay messages replay ${head}`);
    await agent.close();
  });

  it("events an older agent set aside come back in their lane at their place: an agent whose cursor is past them gets every event once, in original order", async () => {
    const { home } = await fixture.setUp("Upgraded");
    const shop = await startStandinApp();
    fixture.cleanups.push(() => shop.close());
    const url = await forwardingSource(home, "shop", `${shop.url}/hooks`);
    const ids = await postEvents(url, 1, 6);
    // The older agent (no lanes): took 1, set 2–4 aside as it did, and was stopped holding 5 and 6.
    const cursor = await olderAgentSetsAside(home, ids, [ids[0]!], ids.slice(1, 4));
    expect(cursor).toBe(ids[3]);
    expect((await queueItems(fixture.relay().url, home, "dead")).map((m) => m.id)).toEqual(ids.slice(1, 4));
    // The upgraded agent starts with that agent's cursor in its journal.
    const agent = await fixture.run(withJournalCursor(home, cursor));
    await waitWhileProgressing("events 2–6 at the shop", () => shop.requests.length >= 5, () => shop.requests.length);
    await waitUntil("the relay holding nothing", async () => (await queueItems(fixture.relay().url, home, "all")).length === 0);
    expect(numbers(shop)).toEqual([2, 3, 4, 5, 6]);
    await agent.close();
  });
});

function loadHome(home: AgentHome): AgentHome {
  return { ...home, settings: loadSettings(home.settingsPath) };
}

/**
 * Plays an agent from before lanes on the raw socket: authenticates without features, acks `acked`,
 * rejects `aside` with the reason an older agent gave set-aside events, and closes holding the rest.
 * Returns the cursor it would resume with (every id it finished or saw confirmed rejected).
 */
async function olderAgentSetsAside(home: AgentHome, ids: number[], acked: number[], aside: number[]): Promise<number> {
  const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
  const ws = new WebSocket(`${fixture.relay().url.replace(/^http/, "ws")}/inbox/${home.settings.agent_id}/connect`);
  const frames: ServerFrame[] = [];
  ws.on("message", (data: Buffer) => {
    const frame = JSON.parse(data.toString()) as ServerFrame;
    frames.push(frame);
    if (frame.type === "challenge") {
      const signature = toBase64(identity.sign(connectSigningInput(home.settings.agent_id, frame.nonce)));
      ws.send(JSON.stringify({ type: "auth", key: identity.publicKey, signature, after: 0, window: 16 }));
    }
  });
  await waitUntil("the older agent holding all six", () => frames.filter((f) => f.type === "message").length === ids.length);
  const messages = frames.filter((f): f is DeliveryFrame => f.type === "message");
  expect(messages.some((m) => "lane" in m)).toBe(false);
  for (const id of acked) ws.send(JSON.stringify({ type: "ack", id }));
  for (const id of aside) ws.send(JSON.stringify({ type: "reject", id, reason: `set aside: the app has not taken an event; clawrelay messages replay ${id}`, status: 0, attempts: 0 }));
  await waitUntil("the relay confirming the set-aside events", () => frames.filter((f) => f.type === "rejected").length === aside.length);
  ws.close();
  await new Promise((resolve) => ws.once("close", resolve));
  return Math.max(...acked, ...aside);
}

/** The home's journal as an agent that finished every id up to `cursor` left it (its inbox's life not yet named: kept on connecting). */
function withJournalCursor(home: AgentHome, cursor: number): AgentHome {
  const journal = DeliveryJournal.open(journalPath(home.env.CLAWRELAY_HOME), { agentId: home.settings.agent_id });
  journal.finish(cursor, cursor);
  journal.close();
  return loadHome(home);
}
