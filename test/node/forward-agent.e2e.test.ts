// The real local agent on the real relay with no OpenClaw at all (no openclaw.json, no gateway settings),
// as a user who only forwards webhooks to a local app runs it: it starts (it used to stop at once with
// "no hooks.token"), says there is no gateway, delivers a forwarding source's events to the app, keeps a
// message for the gateway waiting — paused with the reason, never on the dead shelf — and posts it once an
// openclaw.json appears, without a restart; `clawrelay doctor` warns of the missing OpenClaw, without failing.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { journalPath, loadSettings } from "../../local-agent/settings.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import { NO_HUB, postHook, queueItems, relayFixture, waitUntil, writeOpenClawConfig } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { runCli } from "./cli-harness.ts";
import { startStandinApp } from "./forward-app.ts";

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
