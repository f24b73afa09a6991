// The real local agent on the real relay with no OpenClaw at all (no openclaw.json, no gateway settings),
// as a user who only forwards webhooks to a local app runs it: it starts (it used to stop at once with
// "no hooks.token"), says there is no gateway, delivers a forwarding source's events to the app, keeps a
// message for the gateway waiting — paused with the reason, never on the dead shelf — and posts it once an
// openclaw.json appears, without a restart; `clawrelay doctor` warns of the missing OpenClaw, without failing.
// A sender's Authorization and Cookie through a token source's forward target, on a relay with
// RECEIPT_KEY_SECRET set (persisted, so its SQLite files can be read): the app gets them unchanged (again
// on a replay from the dead shelf), while `messages show` (text and --json) and the queue API show
// [redacted] and no byte of the relay's storage holds a clear value.
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { journalPath, loadSettings } from "../../local-agent/settings.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import { REDACTED_VALUE } from "../../protocol/index.ts";
import type { StoredRequest } from "../../protocol/index.ts";
import { NO_HUB, makeAgentHome, ownerCall, postHook, queueItems, relayFixture, runAgent, startRelay, waitUntil, writeOpenClawConfig } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { runCli } from "./cli-harness.ts";
import { startStandinApp } from "./forward-app.ts";
import type { AppRequestSeen } from "./forward-app.ts";

const fixture = relayFixture();

/** An agent home claimed on the relay, with no OpenClaw anywhere: OPENCLAW_CONFIG_PATH names a file that is not there. */
async function homeWithoutOpenClaw(): Promise<AgentHome> {
  const dir = await mkdtemp(join(tmpdir(), "clawrelay-no-gateway-"));
  const env = { CLAWRELAY_HOME: join(dir, "clawrelay"), OPENCLAW_CONFIG_PATH: join(dir, "openclaw", "openclaw.json"), HOME: dir };
  const settingsPath = join(env.CLAWRELAY_HOME, "agent.json");
  await runInit({ settingsPath, env, relay: fixture.relay().url, hub: NO_HUB, name: "Forwarder" });
  const home = { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: () => rm(dir, { recursive: true, force: true }) };
  fixture.cleanups.push(() => home.cleanup());
  return home;
}

describe("the agent without OpenClaw", () => {
  it("starts, forwards a source's events to its app, keeps a gateway-bound message waiting (not dead), and posts it once openclaw.json appears", async () => {
    const home = await homeWithoutOpenClaw();
    const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, runDir: home.env.CLAWRELAY_HOME, journalFile: journalPath(home.env.CLAWRELAY_HOME) });
    fixture.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    expect(agent.status().gateway.problem).toMatch(/^no hooks\.token in any OpenClaw config/);

    const sent = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "for the gateway" }));
    expect(sent.status).toBe(202);
    await waitUntil("the message paused for want of a gateway", () => agent.status().delivery.paused !== null);

    // A token source forwarding to a local app: its events go while the gateway's message waits.
    const shop = await startStandinApp();
    fixture.cleanups.push(() => shop.close());
    const access = await inboxAccess(home.settings);
    const source = await addSource(access, { name: "shop", kind: "token", target: { forward: `${shop.url}/webhooks`, allowPublic: false } });
    for (const n of [1, 2]) {
      const posted = await fetch(`${source.post_url}/orders?n=${n}`, { method: "PUT", headers: { "content-type": "application/json", "x-shop-signature": `sig-${n}` }, body: `{"order":${n}}` });
      expect(posted.status).toBe(200);
    }
    await waitUntil("both events at the app", () => shop.requests.length === 2);
    expect(shop.requests.map((r) => [r.method, r.url, r.body.toString()])).toEqual([["PUT", "/webhooks/orders?n=1", '{"order":1}'], ["PUT", "/webhooks/orders?n=2", '{"order":2}']]);
    expect(shop.requests[1]!.rawHeaders).toContain("sig-2");
    await waitUntil("both acknowledged", () => agent.status().delivery.forwards[0]?.delivered === 2);

    const status = agent.status();
    expect(status.delivery.paused).toContain("no gateway to post to: no hooks.token");
    expect(status.delivery.paused).toContain("events forwarded to local apps go on");
    expect(status.delivery.rejected).toBe(0);
    expect(status.delivery.forwards).toEqual([expect.objectContaining({ source: "shop", target: `${shop.url}/webhooks`, failing_since: null, last_answer: expect.objectContaining({ status: 200 }) })]);
    expect((await queueItems(fixture.relay().url, home, "dead")).length).toBe(0);
    const text = statusText({ ...status, relay_queue: { queued: 0, sent: 1, dead: 0, oldest_waiting_at: null }, relay_hub: null }, 1, Date.now());
    expect(text).toContain("gateway   none to post to (no hooks.token");
    expect(text).toContain("PAUSED    no gateway to post to");
    expect(text).toMatch(new RegExp(`forward   shop → ${shop.url}/webhooks: last answer 200 \\d+ s ago \\(id \\d+\\); delivered 2, rejected 0`));
    // doctor: no OpenClaw is a WARN, not a FAIL, for an inbox that forwards; the running agent's view of the app is OK.
    const doctor = await runCli(["doctor"], home.env);
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).toContain(`[OK] 1 source(s) forward to local apps: shop → ${shop.url}/webhooks`);
    expect(doctor.stdout).toContain(`[OK] the running agent forwards source shop to ${shop.url}/webhooks: last answer 200`);
    expect(doctor.stdout).toContain("[WARN] no OpenClaw config found at");

    const gateway = await startStandinGateway();
    fixture.cleanups.push(() => gateway.close());
    await writeOpenClawConfig(home.env.OPENCLAW_CONFIG_PATH, gateway);
    await waitUntil("the message at the gateway", () => gateway.received.length === 1, 15_000);
    expect(gateway.received[0]!.body.toString()).toBe('{"message":"for the gateway"}');
    // Counted with the two forwarded events.
    await waitUntil("acknowledged, the pause over", () => agent.status().delivery.delivered === 3 && agent.status().delivery.paused === null);
    expect(agent.status().delivery.last_delivery).toMatchObject({ subpath: "agentgram_inbox/agent", status: 200 });
    expect(agent.status().gateway.problem).toBeNull();
  });
});

describe("a sender's credentials through a forward target (RECEIPT_KEY_SECRET set on the relay)", () => {
  const CREDENTIALS = { authorization: "Bearer sk_live_e2e0a1b2c3d4e5f6", cookie: "session=e2e-7f3e9a0b1c2d; theme=dark", "x-api-key": "key-e2e-5566778899aabb" };

  /** Every byte of the relay's persisted storage (its Durable Objects' SQLite files, WAL included). */
  async function storedBytes(dir: string): Promise<Buffer> {
    const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
    return Buffer.concat(await Promise.all(files.map((entry) => readFile(join(entry.parentPath, entry.name)))));
  }

  it("reach the app unchanged (and again on replay), while messages show (text and --json), the queue API and the relay's SQLite hold no clear value", async () => {
    const persistDir = await mkdtemp(join(tmpdir(), "clawrelay-sealed-"));
    fixture.cleanups.push(() => rm(persistDir, { recursive: true, force: true }));
    const relay = await startRelay({ persistDir, vars: { RECEIPT_KEY_SECRET: "an-operator-secret-of-sufficient-length" } });
    fixture.cleanups.push(() => relay.stop());
    const gateway = await startStandinGateway();
    const home = await makeAgentHome(relay, gateway, "Keeper");
    fixture.cleanups.push(() => gateway.close(), () => home.cleanup());
    const shop = await startStandinApp();
    fixture.cleanups.push(() => shop.close());
    const agent = await runAgent(home);
    fixture.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");

    const access = await inboxAccess(home.settings);
    const source = await addSource(access, { name: "shop", kind: "token", target: { forward: `${shop.url}/webhooks`, allowPublic: false } });
    // The app refuses it once: the event goes to the dead shelf, where the owner looks at it.
    shop.script({ status: 400, body: "no such order" });
    const posted = await fetch(`${source.post_url}/orders`, { method: "POST", headers: { "content-type": "application/json", "x-note": "kept-in-clear-0451", ...CREDENTIALS }, body: '{"order":"o-0451"}' });
    expect(posted.status).toBe(200);
    await waitUntil("the event at the app", () => shop.requests.length === 1);
    const sentHeaders = (seen: AppRequestSeen) => Object.fromEntries(Object.keys(CREDENTIALS).map((name) => [name, seen.rawHeaders[seen.rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === name) + 1]]));
    expect(sentHeaders(shop.requests[0]!)).toEqual(CREDENTIALS);
    await waitUntil("on the dead shelf", async () => (await queueItems(relay.url, home, "dead")).length === 1);
    const [dead] = await queueItems(relay.url, home, "dead");

    const shown = await runCli(["messages", "show", String(dead!.id)], home.env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^authorization: +\[redacted\]$/m);
    expect(shown.stdout).toMatch(/^cookie: +\[redacted\]$/m);
    expect(shown.stdout).toMatch(/^x-note: +kept-in-clear-0451$/m);
    const json = await runCli(["messages", "show", String(dead!.id), "--json"], home.env);
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { request: StoredRequest }).request.headers).toEqual(expect.arrayContaining(Object.keys(CREDENTIALS).map((name) => [name, REDACTED_VALUE])));
    const api = await ownerCall(relay.url, home, "GET", `/queue/${dead!.id}`);
    expect(api.status).toBe(200);
    expect((api.body as { request: StoredRequest }).request.headers).toEqual(expect.arrayContaining(Object.keys(CREDENTIALS).map((name) => [name, REDACTED_VALUE])));
    const stored = await storedBytes(persistDir);
    // What the relay keeps in clear is there to be found (the check can see a stored header), the credentials are not.
    expect(stored.includes("kept-in-clear-0451")).toBe(true);
    for (const text of [shown.stdout, json.stdout, JSON.stringify(api.body), stored.toString("latin1")]) {
      for (const value of [...Object.values(CREDENTIALS), "sk_live_e2e0a1b2c3d4e5f6", "e2e-7f3e9a0b1c2d"]) expect(text.includes(value), value).toBe(false);
    }

    // Replayed from the shelf, the sealed copy opens again: the app gets them unchanged a second time.
    expect((await runCli(["messages", "replay", String(dead!.id)], home.env)).code).toBe(0);
    await waitUntil("the replay at the app", () => shop.requests.length === 2);
    expect(sentHeaders(shop.requests[1]!)).toEqual(CREDENTIALS);
    await waitUntil("delivered", () => agent.status().delivery.forwards[0]?.delivered === 1);
  });
});
