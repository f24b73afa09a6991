// The real hub flow, end to end, against a stand-in hub that sends and answers as the real hub's code
// does (test/support/node/agentline-hub.ts, held to test/fixtures/hub/): a newcomer with an Agentline
// credentials file runs `clawrelay init --import-agentline` and `clawrelay hub register`, the real local
// agent runs, and another hub agent sends five messages. Webhook era (9d900985, both sub-path
// prefixes): the hub pushes each flat body — "botcord:<uuid5 of the room>" session key, no msg_id —
// inside /hub/send and commits its record only after the push answered; each reaches the gateway once,
// in order, and ends `acked` at the hub once the relay matched it to its signed original in /hub/history.
// Today's hub (ed35a77a): the agent comes from the owner's install flow, the relay pulls.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { identityFromPrivateKey } from "../../local-agent/identity.ts";
import { signedRelayCall } from "../../local-agent/relay/relay-api.ts";
import { loadSettings } from "../../local-agent/settings.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { startAgentlineHub } from "../support/node/agentline-hub.ts";
import type { AgentlineHub, Generation, HubTestAgent } from "../support/node/agentline-hub.ts";
import { hubCall } from "../support/node/agentline-hub-client.ts";
import { sessionKey } from "../support/node/agentline-hub-wire.ts";
import { startCapture } from "../support/node/hub-fixtures.ts";
import { relayFixture, runAgent, waitUntil, writeOpenClawConfig } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

/**
 * The relay's bridge waits this long for a hub record's webhook body (30 s in production): the grace
 * case below waits it out, and nothing else here depends on it.
 */
const BRIDGE_GRACE_MS = 2000;
const fixture = relayFixture({ vars: { HUB_BRIDGE_GRACE_MS: String(BRIDGE_GRACE_MS) } });

interface Newcomer {
  hub: AgentlineHub;
  gateway: StandinGateway;
  home: AgentHome;
  bob: HubTestAgent;
  register: { code: number | null; stdout: string; stderr: string };
}

/** A hub agent with an Agentline credentials file (its key, key id and token), then init + hub register. */
async function newcomer(generation: Generation, prefix: "agentgram" | "botcord", registerArgs: string[]): Promise<Newcomer> {
  const hub = await startAgentlineHub({ generation, prefix, timings: { retryPollMs: 200 } });
  const gateway = await startStandinGateway({ mappings: [`${prefix}_inbox/agent`, `${prefix}_inbox/wake`] });
  const dir = await mkdtemp(join(tmpdir(), "clawrelay-hub-"));
  fixture.cleanups.push(() => rm(dir, { recursive: true, force: true }), () => hub.close(), () => gateway.close());
  const bob = await hub.createAgent("Bob");
  const credentials = join(dir, ".agentline", "credentials");
  await mkdir(credentials, { recursive: true });
  const expires = JSON.parse(Buffer.from(bob.token.split(".")[1]!, "base64url").toString()) as { exp: number };
  await writeFile(
    join(credentials, `${bob.agentId}.json`),
    JSON.stringify({
      hub_url: hub.url, agent_id: bob.agentId, display_name: "Bob", key_id: bob.keyId,
      private_key: Buffer.from(bob.seed).toString("base64"), public_key: bob.publicKey, token: bob.token, token_expires_at: expires.exp,
    }),
    { mode: 0o600 },
  );
  const configPath = join(dir, "openclaw", "openclaw.json");
  await writeOpenClawConfig(configPath, gateway, "", true, prefix);
  const env = { HOME: dir, CLAWRELAY_HOME: join(dir, "clawrelay"), OPENCLAW_CONFIG_PATH: configPath };
  const init = await runCli(["init", "--relay", fixture.relay().url, "--import-agentline"], env);
  expect(init.code, init.stderr).toBe(0);
  expect(init.stdout).toContain("clawrelay hub register");
  const register = await runCli(["hub", "register", ...registerArgs, "--prefix", prefix], env, 30_000);
  const settingsPath = join(env.CLAWRELAY_HOME, "agent.json");
  const home: AgentHome = { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: () => rm(dir, { recursive: true, force: true }) };
  return { hub, gateway, home, bob, register };
}

async function sendFive(hub: AgentlineHub, to: string): Promise<{ alice: HubTestAgent; ids: string[] }> {
  const alice = await hub.createAgent("Alice");
  const ids: string[] = [];
  for (let n = 1; n <= 5; n++) {
    const reply = await alice.send(to, `message ${n}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(202);
    ids.push(String((reply.body as { hub_msg_id: string }).hub_msg_id));
  }
  return { alice, ids };
}

const stateOf = (hub: AgentlineHub, id: string) => hub.records.find((r) => r.hub_msg_id === id)?.state;
const ackedAll = (hub: AgentlineHub, ids: string[]) => ids.every((id) => stateOf(hub, id) === "acked");
const runsAt = (gateway: StandinGateway, marker = "says: message ") => gateway.received.filter((r) => r.body.toString().includes(marker));

async function run(home: AgentHome): Promise<AgentHandle> {
  const agent = await runAgent(home);
  fixture.cleanups.push(() => agent.close());
  await waitUntil("the agent connected", () => agent.status().relay.state === "connected");
  return agent;
}

async function relayView(home: AgentHome): Promise<unknown> {
  const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
  return (await signedRelayCall(fixture.relay().url, identity, "GET", `/inbox/${home.settings.agent_id}/hub`)).body;
}

describe("the hub, end to end", () => {
  it.each(["agentgram", "botcord"] as const)("webhook era, prefix %s: register, five flat webhooks in order at the gateway as the hub pushed them, all five acked at the hub", async (prefix) => {
    const { hub, gateway, home, register } = await newcomer("webhook-era", prefix, ["--open"]);
    expect(register.code, register.stderr + register.stdout).toBe(0);
    expect(register.stdout).toMatch(/receipt key: added as k_[0-9a-f]{12} \(the hub's id\)/);
    expect(register.stdout).toContain(": active");
    // The hub probed the prefix it uses; the receipt key is an active key of the agent under the hub's id.
    expect(hub.probes.map((p) => p.path.split("/").slice(-2).join("/"))).toEqual(expect.arrayContaining([`${prefix}_inbox/agent`, `${prefix}_inbox/wake`]));
    const me = home.settings.agent_id;
    expect(hub.agents.get(me)!.keys.get(home.settings.receipt_key.key_id)?.state).toBe("active");
    await run(home);
    const { alice, ids } = await sendFive(hub, me);
    await waitUntil("five runs at the gateway", () => runsAt(gateway).length === 5, 20_000);
    const runs = runsAt(gateway);
    expect(runs.map((r) => r.subpath)).toEqual(Array(5).fill(`${prefix}_inbox/agent`));
    // Byte for byte what the hub pushed: the room's session key, not the sender's.
    const pushed = ids.map((id) => hub.webhooks.find((w) => w.hub_msg_id === id)!.body);
    expect(runs.map((r) => r.body.toString("utf8"))).toEqual(pushed);
    const key = sessionKey(`rm_dm_${[alice.agentId, me].sort().join("_")}`, null);
    expect(pushed.map((b) => JSON.parse(b) as Record<string, string>)).toEqual([1, 2, 3, 4, 5].map((n) => ({ message: `Alice (${alice.agentId}) says: message ${n}`, name: `Alice (${alice.agentId})`, channel: "last", sessionKey: key })));
    await waitUntil("all five acked at the hub", () => ackedAll(hub, ids), 20_000);

    const status = await runCli(["hub", "status", "--json"], home.env, 30_000);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ relay: { mode: "webhook", prefix, last_receipt: { ok: true } } });

    // The hub re-sends a flat body (as after a lost 2xx): the relay should not run it a second time.
    const resend = await fetch(`${fixture.relay().url}/inbox/${me}/hooks/${prefix}_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "application/json" },
      body: pushed[0],
    });
    expect(resend.status).toBe(202);
    const resent = (await resend.json()) as Record<string, unknown>;
    // Held (the hub's history decides; it holds no second "message 1"), so no second run at the gateway
    // once the bridge looked at the history again (1.5 s later); dropped once the grace is over
    // (hub-bridge.test.ts).
    const looked = hub.requests.filter((r) => r.path.startsWith("/hub/history")).length;
    await waitUntil("the bridge's look at the hub's history after the resend", () => hub.requests.filter((r) => r.path.startsWith("/hub/history")).length > looked);
    expect({ answer: resent, runs: runsAt(gateway, "says: message 1").length }).toEqual({ answer: { queued: true, id: 0, held: true }, runs: 1 });
  }, 90_000);

  it("today's hub (install flow, no push): register in pull mode; five messages pulled, stored, confirmed and acked", async () => {
    const { hub, gateway, home, register } = await newcomer("current", "botcord", ["--open", "--mode", "pull"]);
    expect(register.code, register.stderr + register.stdout).toBe(0);
    expect(register.stdout).toMatch(/pull/);
    // Pull every 5 s (the minimum) so the test does not wait out the default 15 s.
    const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
    const claim = await signedRelayCall(fixture.relay().url, identity, "PUT", `/inbox/${home.settings.agent_id}`, { hub: { mode: "pull", pull_interval_sec: 5 } });
    expect(claim.status).toBe(200);
    await run(home);
    const me = home.settings.agent_id;
    const { alice, ids } = await sendFive(hub, me);
    await waitUntil("five runs at the gateway", () => runsAt(gateway).length === 5, 30_000);
    const runs = runsAt(gateway);
    expect(runs.map((r) => r.subpath)).toEqual(Array(5).fill("botcord_inbox/agent"));
    // The relay writes the flat body for each record (protocol/hub-flat.ts) with the hub's session key for
    // the DM room; today's records name no sender display name, so the line names the id alone.
    const key = sessionKey(`rm_dm_${[alice.agentId, me].sort().join("_")}`, null);
    expect(runs.map((r) => JSON.parse(r.body.toString()) as { message: string; sessionKey: string })).toEqual([1, 2, 3, 4, 5].map((n) => expect.objectContaining({ message: `${alice.agentId} says: message ${n}`, sessionKey: key })));
    expect(hub.requests.some((r) => r.method === "POST" && r.path === "/hub/inbox/ack" && r.status === 200)).toBe(true);
    await waitUntil("all five acked at the hub", () => ackedAll(hub, ids), 30_000);
  }, 90_000);

  it("a receipt the hub refuses for good (no such original there) is not retried, and the relay's hub view says so", async () => {
    const { hub, home, register } = await newcomer("webhook-era", "agentgram", ["--open"]);
    expect(register.code).toBe(0);
    const agent = await run(home);
    // A 1.x-style body carrying a signed envelope the hub never recorded: its ack can only get a 404.
    const alice = await hub.createAgent("Alice");
    const envelope = alice.envelope(home.settings.agent_id, "never at the hub");
    const posted = await fetch(`${fixture.relay().url}/inbox/${home.settings.agent_id}/hooks/agentgram_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: JSON.stringify(envelope) }),
    });
    expect(posted.status).toBe(202);
    await posted.json();
    const refusals = () => hub.receipts.filter((r) => (r.body as { reply_to?: string }).reply_to === envelope.msg_id);
    await waitUntil("the hub's refusal", () => refusals().length === 1, 20_000);
    expect(refusals()[0]).toMatchObject({ status: 404, detail: "Original message not found" });
    // Refused for good: nothing left pending, so the alarm has no retry to make (they would come after 1, 2, 4 s).
    await waitUntil("the relay's record of the refusal", async () => ((await relayView(home)) as { receipts_refused?: number }).receipts_refused === 1);
    expect(await relayView(home)).toMatchObject({ last_receipt: { ok: false, status: 404, msg_id: envelope.msg_id }, receipts_refused: 1, receipts_pending: 0 });
    expect(refusals().length).toBe(1);
    // …and the agent's status (what `clawrelay status` prints) carries it too.
    const status = (await (await fetch(`http://127.0.0.1:${agent.apiPort}/clawrelay/status`)).json()) as { relay_hub: { receipts_refused: number; last_receipt: { ok: boolean } } };
    expect(status.relay_hub).toMatchObject({ receipts_refused: 1, last_receipt: { ok: false } });
  }, 90_000);

  it("a delivered hub record whose body went elsewhere is verified and acknowledged by the alarm once its grace is over", async () => {
    const { hub, home, bob, register } = await newcomer("webhook-era", "agentgram", ["--open"]);
    expect(register.code).toBe(0);
    await run(home);
    const me = home.settings.agent_id;
    const endpoint = { ...hub.agents.get(me)!.endpoint! };
    // Another client points the endpoint elsewhere for a while: the hub pushes there (2xx), so the
    // record is delivered, but the relay never sees its body.
    const elsewhere = await startCapture();
    fixture.cleanups.push(() => elsewhere.close());
    const point = (url: string) => hubCall(hub.url, "POST", `/registry/agents/${me}/endpoints`, { body: { url, webhook_token: endpoint.webhook_token }, token: bob.token });
    expect((await point(`${elsewhere.url}/hooks`)).status).toBe(200);
    const alice = await hub.createAgent("Alice");
    const sent = await alice.send(me, "held at the hub");
    expect(sent.body).toMatchObject({ status: "delivered" });
    const hubMsgId = String((sent.body as { hub_msg_id: string }).hub_msg_id);
    expect(elsewhere.hits.filter((h) => h.body.includes("held at the hub"))).toHaveLength(1);
    expect((await point(endpoint.url)).status).toBe(200);
    // A body arrives that matches no record (as if the hub had formatted it otherwise): it wakes the alarm.
    const posted = await fetch(`${fixture.relay().url}/inbox/${me}/hooks/agentgram_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: `Alice (${alice.agentId}) says: something the hub's record does not say`, name: `Alice (${alice.agentId})`, channel: "last", sessionKey: "agentline:elsewhere" }),
    });
    expect(posted.status).toBe(202);
    await posted.json();
    await waitUntil("the alarm's acknowledgement", () => stateOf(hub, hubMsgId) === "acked", 20_000);
    // Not before the grace: until then the record's own body might still have come.
    const record = hub.records.find((r) => r.hub_msg_id === hubMsgId)!;
    expect(record.acked_at! - record.created_at).toBeGreaterThanOrEqual(BRIDGE_GRACE_MS);
    expect(await relayView(home)).toMatchObject({ last_bridge: { ok: true } });
  }, 60_000);
});
