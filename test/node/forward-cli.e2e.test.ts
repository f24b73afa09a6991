// `clawrelay listen PORT` end to end: the real CLI makes a token source on the real relay (workerd) and
// prints its URL; with no agent running it runs one, which forwards every request sent under the URL to
// the local app — method, sub-path, query, body and the sender's headers kept. Run again it prints the
// same URL (kept in listen.json, 0600); with an agent already running it leaves the forwarding to it.
import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { startWebhookApp } from "../support/node/webhook-app.ts";
import type { WebhookApp } from "../support/node/webhook-app.ts";
import { runCli, spawnCli } from "./cli-harness.ts";

const fixture = relayFixture();
const NO_SECRETS = { stripe: "whsec_unused", github: "unused", standard: "whsec_dW51c2Vk", slack: "unused" };

async function setUp(): Promise<{ app: WebhookApp; home: AgentHome }> {
  const gateway = await startStandinGateway();
  const home = await makeAgentHome(fixture.relay(), gateway, "Listener");
  const app = await startWebhookApp(NO_SECRETS);
  fixture.cleanups.push(() => gateway.close(), () => home.cleanup(), () => app.close());
  return { app, home };
}

interface ListenJson {
  name: string;
  url: string;
  target: string;
  how: string;
}

async function listenJson(home: AgentHome, args: string[]): Promise<ListenJson> {
  const result = await runCli(["listen", ...args, "--json"], home.env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ListenJson;
}

describe("clawrelay listen", () => {
  it("prints a URL whose every request reaches the app with method, sub-path, query, body and headers; runs the agent itself", async () => {
    const { app, home } = await setUp();
    const running = spawnCli(["listen", String(app.port), "--path", "/hooks"], home.env);
    fixture.cleanups.push(() => running.stop());
    // The URL is printed first, then — once it looked for a running agent — that it runs one itself.
    await waitUntil("the URL printed and the agent started", () => /^Forwarding (\S+)$/m.test(running.stdout()) && running.stdout().includes("No agent runs"), 20_000);
    const url = /^Forwarding (\S+)$/m.exec(running.stdout())![1]!;
    expect(url).toMatch(new RegExp(`^${fixture.relay().url}/inbox/${home.settings.agent_id}/sources/listen-${app.port}/[A-Za-z0-9_-]{43}$`));
    expect(running.stdout()).toContain(`→  http://127.0.0.1:${app.port}/hooks`);
    expect(running.stdout()).toContain("No agent runs for this inbox, so this one runs it");

    const body = '{"id":"evt_1","object":"event"}';
    const sent = await fetch(`${url}/stripe/events?x=1&y=%20two`, { method: "PUT", headers: { "content-type": "application/json", "x-custom-signature": "t=1,v1=abc", "user-agent": "Sender/2" }, body });
    expect(sent.status).toBe(200);
    const plain = await fetch(url, { method: "POST", headers: { "content-type": "text/plain" }, body: "second" });
    expect(plain.status).toBe(200);
    await waitUntil("both requests at the app", () => app.received.length === 2, 20_000);
    const [first, second] = app.received;
    expect(first!.method).toBe("PUT");
    expect(first!.url).toBe("/hooks/stripe/events?x=1&y=%20two");
    expect(first!.body.toString("utf8")).toBe(body);
    expect(first!.headers["x-custom-signature"]).toBe("t=1,v1=abc");
    expect(first!.headers["user-agent"]).toBe("Sender/2");
    expect(first!.headers["content-type"]).toBe("application/json");
    expect(first!.headers["x-clawrelay-source"]).toBe(`listen-${app.port}`);
    expect(second!.url).toBe("/hooks");
    expect(second!.body.toString("utf8")).toBe("second");
    // listen answers live by default: a GET reaches the app, and the app's answer comes back.
    expect(running.stdout()).toContain("Live: while the agent runs, each request waits up to 10 s for the app's answer");
    const get = await fetch(`${url}/anything?q=1`);
    expect(get.status).toBe(200);
    expect(app.received.map((r) => [r.method, r.url])[2]).toEqual(["GET", "/hooks/anything?q=1"]);
    expect(await running.stop()).not.toBeNull();
  });

  it("run again it prints the same URL (kept in listen.json, 0600); a source made elsewhere gets a new one, said", async () => {
    const { app, home } = await setUp();
    const first = await listenJson(home, [String(app.port)]);
    expect(first).toMatchObject({ name: `listen-${app.port}`, target: `http://127.0.0.1:${app.port}/`, how: "made" });
    const again = await listenJson(home, [String(app.port)]);
    expect(again).toMatchObject({ url: first.url, how: "reused" });
    const kept = join(home.env.CLAWRELAY_HOME, "listen.json");
    expect((await stat(kept)).mode & 0o777).toBe(0o600);
    // Another machine (no listen.json) with the same inbox: the old URL cannot be shown, so a new one is made.
    await rm(kept);
    const renewed = await listenJson(home, [String(app.port), "--path", "/other"]);
    expect(renewed.how).toBe("renewed");
    expect(renewed.url).not.toBe(first.url);
    expect(renewed.target).toBe(`http://127.0.0.1:${app.port}/other`);
    expect((await fetch(first.url, { method: "POST", body: "x" })).status).toBe(401);
    expect((await fetch(renewed.url, { method: "POST", body: "x" })).status).toBe(200);
  });

  it("with an agent already running it leaves the forwarding to that agent", async () => {
    const { app, home } = await setUp();
    const agent = spawnCli(["start"], home.env);
    fixture.cleanups.push(() => agent.stop());
    await waitUntil("run.json", async () => (await stat(join(home.env.CLAWRELAY_HOME, "run.json")).catch(() => null)) !== null, 20_000);
    await waitUntil("the agent connected", async () => (await runCli(["status"], home.env)).stdout.includes("connected"), 20_000);
    const result = await runCli(["listen", String(app.port)], home.env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/The running agent \(pid \d+, standalone\) forwards them/);
    const url = /^Forwarding (\S+)$/m.exec(result.stdout)![1]!;
    expect((await fetch(`${url}/ping`, { method: "POST", body: "{}" })).status).toBe(200);
    await waitUntil("the request at the app", () => app.received.length === 1, 20_000);
    expect(app.received[0]!.url).toBe("/ping");
  });

  it("bad input says what to fix", async () => {
    const { home } = await setUp();
    const port = await runCli(["listen", "http"], home.env);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain("listen needs the app's port, 1-65535");
    const publicHost = await runCli(["listen", "3000", "--host", "8.8.8.8"], home.env);
    expect(publicHost.code).toBe(2);
    expect(publicHost.stderr).toContain("--allow-public-target");
    await runCli(["sources", "add", "listen-3001", "--kind", "github"], home.env);
    const taken = await runCli(["listen", "3001"], home.env);
    expect(taken.code).not.toBe(0);
    expect(taken.stderr).toContain('source "listen-3001" is a github source');
  });
});
