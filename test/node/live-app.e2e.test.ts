// Live requests end to end: the real bundled relay in Miniflare, the real agent, stand-in apps as real
// servers. A live source's GET callback with a query is answered with the app's body (the live log and
// `messages --live` keep its path without the query); a POST is answered live with the app's status,
// headers (cookies left out) and body, and nothing is stored; with the agent stopped a POST is held
// (x-clawrelay-held: offline) and delivered once when it runs again, a GET refused at once (503); a slow app
// whose answer comes after the deadline gets the request once — the held copy is acknowledged, not posted
// again; a Slack-signed slash command's reply JSON reaches the sender; `status` shows the live block.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { HELD_HEADER } from "../../protocol/index.ts";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import { listen } from "../../local-agent/cli/cli-listen.ts";
import { liveLog } from "../../local-agent/relay/live-log.ts";
import { inboxAccess, queueSummary } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { queueItems, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";
import { startStandinApp } from "./forward-app.ts";
import type { StandinApp } from "./forward-app.ts";

const fixture = relayFixture();

async function liveAgent(home: AgentHome) {
  const agent = await fixture.run(home);
  await waitUntil("the relay's socket carries live requests", () => agent.status().live?.relay === true);
  return agent;
}

async function app(): Promise<StandinApp> {
  const started = await startStandinApp();
  fixture.cleanups.push(() => started.close());
  return started;
}

describe("live requests through the relay and the agent", () => {
  it("answers a GET callback with a query with the app's body (listen), and logs its path without the query", async () => {
    const { home } = await fixture.setUp("Live GET");
    const shop = await app();
    const access = await inboxAccess(home.settings);
    const listened = await listen(access, home.env.CLAWRELAY_HOME, { port: String(shop.port), path: "/oauth", host: undefined, name: undefined, allowPublic: false, live: true }, { forward: `${shop.url}/oauth`, allowPublic: false });
    expect(listened.live_sec).toBe(10);
    const agent = await liveAgent(home);
    shop.script({ status: 200, headers: { "content-type": "text/html" }, body: "<p>signed in</p>" });
    const answer = await fetch(`${listened.url}/callback?code=one-time-123&state=s`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe("<p>signed in</p>");
    expect(answer.headers.get("content-type")).toBe("text/html");
    expect(answer.headers.get(HELD_HEADER)).toBeNull();
    expect(shop.requests.map((r) => [r.method, r.url])).toEqual([["GET", "/oauth/callback?code=one-time-123&state=s"]]);

    const log = await liveLog(access);
    expect(log.requests[0]).toMatchObject({ method: "GET", path: "/callback", status: 200, outcome: "answered" });
    const listed = await runCli(["messages", "--live"], home.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("/callback");
    expect(listed.stdout).not.toContain("one-time-123");
    const summary = await queueSummary(access);
    const text = statusText({ ...agent.status(), relay_queue: summary, relay_hub: null }, 1, Date.now());
    expect(text).toMatch(/live {6}answered 1 \(of the relay's last 1,000\), in flight 0; last \d+ s ago/);
    expect(text).toMatch(/this agent: answered 1, failed 0; last GET \/callback → 200 in \d+ ms/);
    // The inspector's feed lists it, without its query or any body.
    expect(agent.status().live?.last).toMatchObject({ method: "GET", path: "/callback", status: 200 });
  });

  it("answers a POST live with the app's status, headers and body; nothing is stored", async () => {
    const { home } = await fixture.setUp("Live POST");
    const shop = await app();
    const access = await inboxAccess(home.settings);
    const source = await addSource(access, { name: "shop", kind: "token", target: { forward: `${shop.url}/hooks`, allowPublic: false }, liveSec: 10 });
    expect(source.source.live_sec).toBe(10);
    await liveAgent(home);
    shop.script({ status: 201, headers: { "content-type": "application/json", "x-app": "yes", "set-cookie": "session=1" }, body: '{"created":true}' });
    const answer = await fetch(`${source.post_url}/orders?n=1`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"order":1}' });
    expect(answer.status).toBe(201);
    expect(await answer.json()).toEqual({ created: true });
    expect(answer.headers.get("x-app")).toBe("yes");
    expect(answer.headers.get("set-cookie")).toBeNull();
    expect(answer.headers.get("content-security-policy")).toContain("sandbox");
    expect(shop.requests.map((r) => [r.method, r.url, r.body.toString()])).toEqual([["POST", "/hooks/orders?n=1", '{"order":1}']]);
    expect(await queueItems(fixture.relay().url, home)).toEqual([]);
  });

  it("with the agent stopped holds a POST (delivered once when it runs again) and refuses a GET at once", async () => {
    const { home } = await fixture.setUp("Live offline");
    const shop = await app();
    const source = await addSource(await inboxAccess(home.settings), { name: "shop", kind: "token", target: { forward: shop.url, allowPublic: false }, liveSec: 10 });
    const first = await liveAgent(home);
    await first.close();
    const held = await fetch(`${source.post_url}/event`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"held":true}' });
    expect(held.status).toBe(200);
    expect(held.headers.get(HELD_HEADER)).toBe("offline");
    expect(await held.json()).toMatchObject({ queued: true });
    const refused = await fetch(`${source.post_url}/page`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("agent_offline");
    expect(shop.requests).toEqual([]);

    await liveAgent(home);
    await waitUntil("the held POST delivered and acknowledged", async () => shop.requests.length === 1 && (await queueItems(fixture.relay().url, home)).length === 0);
    expect(shop.requests.map((r) => [r.method, r.url, r.body.toString()])).toEqual([["POST", "/event", '{"held":true}']]);
  });

  it("a slow app answering after the deadline gets the request once — the held copy is acknowledged, not posted again", async () => {
    const { home } = await fixture.setUp("Live late");
    const shop = await app();
    const source = await addSource(await inboxAccess(home.settings), { name: "slow", kind: "token", target: { forward: shop.url, allowPublic: false }, liveSec: 1 });
    const agent = await liveAgent(home);
    shop.script({ status: 200, body: "done, late", delayMs: 2500 });
    const answer = await fetch(`${source.post_url}/work`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"job":1}' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get(HELD_HEADER)).toBe("deadline");
    // Acknowledged only once settled: a copy that had been posted would have reached the app a second time first.
    await waitUntil("the held copy acknowledged", async () => agent.status().delivery.delivered === 1 && (await queueItems(fixture.relay().url, home)).length === 0);
    expect(shop.requests.length).toBe(1);
    expect(agent.status().delivery.rejected).toBe(0);
  });

  it("returns a Slack-signed slash command's reply JSON to Slack", async () => {
    const { home } = await fixture.setUp("Live Slack");
    const bot = await app();
    const secret = "8f742231b10e8888abcd99yyyzzz85a5";
    const source = await addSource(await inboxAccess(home.settings), { name: "slash", kind: "slack", secret, target: { forward: `${bot.url}/slack/commands`, allowPublic: false }, liveSec: 3 });
    await liveAgent(home);
    bot.script({ status: 200, headers: { "content-type": "application/json" }, body: '{"response_type":"in_channel","text":"Sunny in Paris"}' });
    const body = "token=x&team_id=T1&command=%2Fweather&text=paris&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2F1&trigger_id=13345224609.738474920.8088930838d88f008e0";
    const ts = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac("sha256", secret).update(`v0:${ts}:${body}`).digest("hex")}`;
    const answer = await fetch(source.post_url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": ts, "x-slack-signature": signature }, body });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ response_type: "in_channel", text: "Sunny in Paris" });
    // The bot got Slack's request as Slack sent it, its signature with it, so it can verify it too.
    expect(bot.requests[0]?.body.toString()).toBe(body);
    expect(bot.requests[0]?.rawHeaders).toContain(signature);
  });
});
