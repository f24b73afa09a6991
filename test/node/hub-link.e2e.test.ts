// The real hub flow, end to end: a newcomer with an Agentline credentials file runs `clawrelay init
// --import-agentline` and `clawrelay hub register`, the real local agent runs, and another hub agent
// sends five messages through a stand-in hub that follows the Agentline protocol (flat 2.x webhooks,
// history, the pull inbox with its two-phase ack, hub-assigned key ids, receipts that check key id and
// signature). Each message reaches the gateway once and in order, and ends `acked` at the hub — in both
// delivery modes and with both sub-path prefixes. Prints the send → acked times it measured.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { identityFromPrivateKey } from "../../local-agent/identity.ts";
import { signedRelayCall } from "../../local-agent/relay/relay-api.ts";
import { loadSettings } from "../../local-agent/settings.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { startAgentlineHub } from "../support/node/agentline-hub.ts";
import { signEnvelope } from "../support/node/agentline-hub-wire.ts";
import type { AgentlineHub } from "../support/node/agentline-hub.ts";
import { relayFixture, runAgent, waitUntil, writeOpenClawConfig } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

interface Newcomer {
  hub: AgentlineHub;
  gateway: StandinGateway;
  home: AgentHome;
  register: { code: number | null; stdout: string; stderr: string };
}

/** A hub agent with a credentials file, as the Agentline tools leave it, then init + hub register. */
async function newcomer(prefix: "agentgram" | "botcord", delivery: "webhook" | "pull"): Promise<Newcomer> {
  const hub = await startAgentlineHub({ prefix, delivery });
  const gateway = await startStandinGateway({ mappings: [`${prefix}_inbox/agent`, `${prefix}_inbox/wake`] });
  fixture.cleanups.push(() => hub.close(), () => gateway.close());
  const bob = await hub.createAgent("Bob");
  const dir = join((await import("node:os")).tmpdir(), `clawrelay-hub-${Math.random().toString(36).slice(2)}`);
  const credentials = join(dir, ".agentline", "credentials");
  await mkdir(credentials, { recursive: true });
  await writeFile(
    join(credentials, `${bob.agentId}.json`),
    JSON.stringify({
      hub_url: hub.url, agent_id: bob.agentId, display_name: "Bob", key_id: bob.keyId,
      private_key: Buffer.from(bob.seed).toString("base64"), public_key: bob.publicKey,
      token: bob.token, token_expires_at: Math.floor(Date.now() / 1000) + 3600,
    }),
    { mode: 0o600 },
  );
  const configPath = join(dir, "openclaw", "openclaw.json");
  await writeOpenClawConfig(configPath, gateway, "", true, prefix);
  const env = { HOME: dir, CLAWRELAY_HOME: join(dir, "clawrelay"), OPENCLAW_CONFIG_PATH: configPath };
  const init = await runCli(["init", "--relay", fixture.relay().url, "--import-agentline"], env);
  expect(init.code, init.stderr).toBe(0);
  expect(init.stdout).toContain("clawrelay hub register");
  const register = await runCli(["hub", "register", "--open", "--prefix", prefix], env, 30_000);
  const settingsPath = join(env.CLAWRELAY_HOME, "agent.json");
  const home: AgentHome = { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: async () => undefined };
  return { hub, gateway, home, register };
}

async function sendFive(hub: AgentlineHub, to: string): Promise<{ sentAt: number[]; ids: string[] }> {
  const alice = await hub.createAgent("Alice");
  const sentAt: number[] = [];
  const ids: string[] = [];
  for (let n = 1; n <= 5; n++) {
    sentAt.push(Date.now());
    const reply = await alice.send(to, `message ${n}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    ids.push(String((reply.body as { hub_msg_id: string }).hub_msg_id));
  }
  return { sentAt, ids };
}

function ackedAll(hub: AgentlineHub, ids: string[]): boolean {
  return ids.every((id) => hub.records.find((r) => r.hub_msg_id === id)?.state === "acked");
}

function report(label: string, hub: AgentlineHub, ids: string[], sentAt: number[]): void {
  const times = ids.map((id, i) => hub.records.find((r) => r.hub_msg_id === id)!.acked_at! - sentAt[i]!);
  console.log(`hub link ${label}: send -> acked at the hub: ${times.map((t) => `${t} ms`).join(", ")} (max ${Math.max(...times)} ms)`);
}

async function run(home: AgentHome): Promise<AgentHandle> {
  const agent = await runAgent(home);
  fixture.cleanups.push(() => agent.close());
  await waitUntil("the agent connected", () => agent.status().relay.state === "connected");
  return agent;
}

describe("the hub, end to end", () => {
  it.each(["agentgram", "botcord"] as const)("webhook mode, prefix %s: register, five flat webhooks in order at the gateway, all five acked at the hub", async (prefix) => {
    const { hub, gateway, home, register } = await newcomer(prefix, "webhook");
    expect(register.code, register.stderr + register.stdout).toBe(0);
    expect(register.stdout).toMatch(/receipt key: added as k_[0-9a-f]{12} \(the hub's id\)/);
    expect(register.stdout).toContain(": active");
    // The hub probed the prefix it uses; the receipt key is an active key of the agent under the hub's id.
    expect(hub.probes.map((p) => p.path.split("/").slice(-2).join("/"))).toEqual(expect.arrayContaining([`${prefix}_inbox/agent`, `${prefix}_inbox/wake`]));
    const bob = hub.agents.get(home.settings.agent_id)!;
    expect(bob.keys.get(home.settings.receipt_key.key_id)?.state).toBe("active");
    await run(home);
    const { sentAt, ids } = await sendFive(hub, home.settings.agent_id);
    await waitUntil("five runs at the gateway", () => gateway.received.filter((r) => r.body.toString().includes("message ")).length === 5, 20_000);
    const runs = gateway.received.filter((r) => r.body.toString().includes("message "));
    expect(runs.map((r) => r.subpath)).toEqual(Array(5).fill(`${prefix}_inbox/agent`));
    expect(runs.map((r) => (JSON.parse(r.body.toString()) as { message: string }).message)).toEqual([1, 2, 3, 4, 5].map((n) => expect.stringContaining(`says: message ${n}`)));
    await waitUntil("all five acked at the hub", () => ackedAll(hub, ids), 20_000);
    report(`webhook/${prefix}`, hub, ids, sentAt);

    // The hub re-sends a flat body (as after a lost 2xx): the relay drops it as the duplicate it is.
    const first = hub.webhooks.find((w) => w.body.includes("message 1"))!;
    const resend = await fetch(`${fixture.relay().url}/inbox/${home.settings.agent_id}/hooks/${prefix}_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "application/json" },
      body: first.body,
    });
    expect(await resend.json()).toMatchObject({ duplicate: true });
    await new Promise((r) => setTimeout(r, 500));
    expect(gateway.received.filter((r) => r.body.toString().includes("message 1")).length).toBe(1);

    const status = await runCli(["hub", "status", "--json"], home.env, 30_000);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ relay: { mode: "webhook", prefix, last_receipt: { ok: true } } });
  }, 90_000);

  it("pull mode (a hub without webhooks): register falls back to pull; five messages pulled, stored, confirmed and acked", async () => {
    const { hub, gateway, home, register } = await newcomer("botcord", "pull");
    expect(register.code, register.stderr + register.stdout).toBe(0);
    expect(register.stdout).toMatch(/pull/);
    // Pull every 5 s (the minimum) so the test does not wait out the default 15 s.
    const identity = identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
    const claim = await signedRelayCall(fixture.relay().url, identity, "PUT", `/inbox/${home.settings.agent_id}`, { hub: { mode: "pull", pull_interval_sec: 5 } });
    expect(claim.status).toBe(200);
    await run(home);
    const { sentAt, ids } = await sendFive(hub, home.settings.agent_id);
    await waitUntil("five runs at the gateway", () => gateway.received.filter((r) => r.body.toString().includes("message ")).length === 5, 30_000);
    const runs = gateway.received.filter((r) => r.body.toString().includes("message "));
    // Envelopes the relay formats itself go to the prefix the inbox was told (botcord here).
    expect(runs.map((r) => r.subpath)).toEqual(Array(5).fill("botcord_inbox/agent"));
    expect(runs.map((r) => (JSON.parse(r.body.toString()) as { message: string }).message)).toEqual([1, 2, 3, 4, 5].map((n) => expect.stringMatching(new RegExp(`^ag_[0-9a-f]{12} says: message ${n}$`))));
    await waitUntil("all five acked at the hub", () => ackedAll(hub, ids), 30_000);
    expect(hub.requests.some((r) => r.method === "POST" && r.path.startsWith("/hub/inbox/ack"))).toBe(true);
    report("pull/botcord", hub, ids, sentAt);
  }, 90_000);

  it("a receipt the hub refuses for good (no such original there) is not retried, and the relay's hub view says so", async () => {
    const { hub, home, register } = await newcomer("agentgram", "webhook");
    expect(register.code).toBe(0);
    const agent = await run(home);
    // A 1.x-style body carrying a signed envelope the hub never recorded: its ack can only get a 404.
    const alice = await hub.createAgent("Alice");
    const envelope = signEnvelope(alice.seed, alice.keyId, {
      v: "a2a/0.1", msg_id: crypto.randomUUID(), ts: Math.floor(Date.now() / 1000), from: alice.agentId, to: home.settings.agent_id,
      type: "message", reply_to: null, ttl_sec: 3600, payload: { text: "never at the hub" },
    });
    const posted = await fetch(`${fixture.relay().url}/inbox/${home.settings.agent_id}/hooks/agentgram_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: JSON.stringify(envelope) }),
    });
    expect(posted.status).toBe(202);
    await posted.json();
    const refusals = () => hub.receipts.filter((r) => (r.body as { reply_to?: string }).reply_to === envelope.msg_id);
    await waitUntil("the hub's refusal", () => refusals().length === 1, 20_000);
    expect(refusals()[0]!.status).toBe(404);
    // The alarm's retries would come after 1, 2, 4 s: none does.
    await new Promise((r) => setTimeout(r, 4000));
    expect(refusals().length).toBe(1);
    const identity = identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
    const view = await signedRelayCall(fixture.relay().url, identity, "GET", `/inbox/${home.settings.agent_id}/hub`);
    expect(view.body).toMatchObject({ last_receipt: { ok: false, status: 404, msg_id: envelope.msg_id }, receipts_refused: 1, receipts_pending: 0 });
    // …and the agent's status (what `clawrelay status` prints) carries it too.
    const status = (await (await fetch(`http://127.0.0.1:${agent.apiPort}/clawrelay/status`)).json()) as { relay_hub: { receipts_refused: number; last_receipt: { ok: boolean } } };
    expect(status.relay_hub).toMatchObject({ receipts_refused: 1, last_receipt: { ok: false } });
  }, 90_000);

  it("a hub record no webhook body claimed is verified and acknowledged by the alarm after its 30 s grace", async () => {
    const { hub, home, register } = await newcomer("agentgram", "webhook");
    expect(register.code).toBe(0);
    await run(home);
    // The hub holds the message without pushing it; a body arrives that matches no record (as if the hub
    // had formatted it otherwise), so intake stores it as it came and leaves the record to the alarm.
    hub.setDelivery("pull");
    const alice = await hub.createAgent("Alice");
    const sent = await alice.send(home.settings.agent_id, "held at the hub");
    expect(sent.status).toBe(202);
    const hubMsgId = String((sent.body as { hub_msg_id: string }).hub_msg_id);
    const posted = await fetch(`${fixture.relay().url}/inbox/${home.settings.agent_id}/hooks/agentgram_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "Alice says something the hub's record does not", sessionKey: `agentline:${alice.agentId}` }),
    });
    expect(posted.status).toBe(202);
    await posted.json();
    expect(hub.records.find((r) => r.hub_msg_id === hubMsgId)?.state).not.toBe("acked");
    await waitUntil("the alarm's acknowledgement", () => hub.records.find((r) => r.hub_msg_id === hubMsgId)?.state === "acked", 50_000);
    const identity = identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
    const view = await signedRelayCall(fixture.relay().url, identity, "GET", `/inbox/${home.settings.agent_id}/hub`);
    expect(view.body).toMatchObject({ last_bridge: { ok: true, acked: 1 } });
  }, 90_000);
});
