// The inspector's HTTP side against a real agent, relay and stand-in gateway: the page and its security
// headers, the loopback rules (foreign Host, foreign Origin, the per-process token for the API and the
// event stream, replay and drop included), the event stream's deliveries, and /metrics in the Prometheus
// text format with figures that match what happened.
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { TOKEN_HEADER } from "../../local-agent/inspector/inspector-routes.ts";
import { postHook, queueItems, relayFixture, waitUntil } from "../support/node/stack.ts";

const fixture = relayFixture();

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with exactly these headers (fetch cannot set Host). */
function raw(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function pageToken(agent: AgentHandle): Promise<string> {
  const page = await raw(agent.apiPort, "GET", "/");
  return /name="clawrelay-token" content="([^"]+)"/.exec(page.body)![1]!;
}

describe("the inspector over HTTP", () => {
  it("serves the page with its token and strict headers; its script and style from the agent itself", async () => {
    const { home } = await fixture.setUp();
    const agent = await fixture.run(home);
    const page = await raw(agent.apiPort, "GET", "/");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(page.headers["x-frame-options"]).toBe("DENY");
    expect(page.body).not.toContain("{{TOKEN}}");
    expect((await pageToken(agent)).length).toBeGreaterThanOrEqual(32);
    expect(page.body).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    const script = await raw(agent.apiPort, "GET", "/inspector/inspector.js");
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(script.body).toContain("EventSource");
    expect((await raw(agent.apiPort, "GET", "/inspector/inspector.css")).status).toBe(200);
    expect((await raw(agent.apiPort, "GET", "/favicon.ico")).status).toBe(204);
  });

  it("refuses a foreign Host, a foreign Origin and a missing or wrong token; the Society API still refuses any Origin", async () => {
    const { gateway, home } = await fixture.setUp();
    gateway.refuse = () => 400;
    const agent = await fixture.run(home);
    const token = await pageToken(agent);
    const dead = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", '{"message":"dead on arrival"}');
    await waitUntil("the message dead", async () => (await queueItems(fixture.relay().url, home, "dead")).length === 1);
    const port = agent.apiPort;
    const origin = `http://127.0.0.1:${port}`;
    expect((await raw(port, "GET", "/", { host: `evil.example:${port}` })).status).toBe(403);
    expect((await raw(port, "GET", "/metrics", { host: "attacker.test" })).status).toBe(403);
    expect((await raw(port, "GET", "/inspector/api/state")).status).toBe(403);
    expect((await raw(port, "GET", "/inspector/api/state", { [TOKEN_HEADER]: `${token}x` })).status).toBe(403);
    expect((await raw(port, "GET", "/inspector/events")).status).toBe(403);
    expect((await raw(port, "GET", "/inspector/api/state", { [TOKEN_HEADER]: token, origin: "https://attacker.test" })).status).toBe(403);
    const replayPath = `/inspector/api/messages/${String(dead.body.id)}/replay`;
    expect((await raw(port, "POST", replayPath, { origin: "https://attacker.test" })).status).toBe(403);
    expect((await raw(port, "POST", replayPath, { origin })).status).toBe(403);
    expect((await raw(port, "POST", replayPath, { origin: "https://attacker.test", [TOKEN_HEADER]: token })).status).toBe(403);
    expect((await queueItems(fixture.relay().url, home, "dead")).map((m) => m.id)).toEqual([dead.body.id]);
    expect((await raw(port, "GET", "/api/status", { origin })).status).toBe(403);
    // The page's own origin with its token may act.
    const state = await raw(port, "GET", "/inspector/api/state", { [TOKEN_HEADER]: token, origin });
    expect(state.status).toBe(200);
    expect(JSON.parse(state.body)).toMatchObject({ status: { agent_id: home.settings.agent_id }, totals: { rejected: 1 } });
    const shown = JSON.parse((await raw(port, "GET", `/inspector/api/messages/${String(dead.body.id)}`, { [TOKEN_HEADER]: token })).body) as { message: { state: string }; body: string };
    expect(shown).toMatchObject({ message: { state: "dead" }, body: '{"message":"dead on arrival"}' });
    const dropped = await raw(port, "POST", `/inspector/api/messages/${String(dead.body.id)}/drop`, { [TOKEN_HEADER]: token, origin });
    expect(JSON.parse(dropped.body)).toEqual({ dropped: dead.body.id, was: "dead" });
    expect(await queueItems(fixture.relay().url, home, "dead")).toEqual([]);
    expect((await raw(port, "POST", replayPath, { [TOKEN_HEADER]: token })).status).toBe(404);
  });

  it("streams each delivery as it happens; /metrics counts them in the Prometheus text format", async () => {
    const { gateway, home } = await fixture.setUp();
    gateway.refuse = (hook) => (hook.body.toString().includes("bad") ? 400 : null);
    const agent = await fixture.run(home);
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const token = await pageToken(agent);
    const events: string[] = [];
    const stream = request({ host: "127.0.0.1", port: agent.apiPort, path: `/inspector/events?token=${token}`, headers: { host: `127.0.0.1:${agent.apiPort}` } }, (res) => {
      res.on("data", (chunk: Buffer) => events.push(chunk.toString("utf8")));
    });
    stream.end();
    await waitUntil("the first state event", () => events.join("").includes("event: state"));
    const ok = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", '{"message":"one"}');
    await postHook(fixture.relay().url, home, "agentgram_inbox/agent", '{"message":"two"}');
    await postHook(fixture.relay().url, home, "agentgram_inbox/agent", '{"message":"bad"}');
    await waitUntil("three deliveries streamed", () => (events.join("").match(/event: delivery/g) ?? []).length === 3);
    const first = events.join("").split("\n\n").find((block) => block.startsWith("event: delivery"))!;
    expect(JSON.parse(first.split("\ndata: ")[1]!)).toMatchObject({ outcome: "delivered", id: ok.body.id, subpath: "agentgram_inbox/agent", status: 200 });
    expect(first).not.toContain('"message"');
    stream.destroy();

    const metrics = await raw(agent.apiPort, "GET", "/metrics");
    expect(metrics.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
    const value = (line: string) => Number(metrics.body.split("\n").find((l) => l.startsWith(`${line} `))?.slice(line.length + 1));
    expect(value('clawrelay_deliveries_total{outcome="delivered"}')).toBe(2);
    expect(value('clawrelay_deliveries_total{outcome="rejected"}')).toBe(1);
    expect(value("clawrelay_delivery_latency_seconds_count")).toBe(2);
    expect(value('clawrelay_delivery_latency_seconds_bucket{le="+Inf"}')).toBe(2);
    expect(value("clawrelay_dead_messages")).toBe(1);
    expect(value('clawrelay_queued_messages{state="queued"}')).toBe(0);
    expect(value("clawrelay_relay_connected")).toBe(1);
    expect(value("clawrelay_relay_reconnects_total")).toBe(0);
    const buckets = metrics.body.split("\n").filter((l) => l.startsWith("clawrelay_delivery_latency_seconds_bucket")).map((l) => Number(l.split(" ")[1]));
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    for (const line of metrics.body.trim().split("\n")) expect(line).toMatch(/^(# (HELP|TYPE) clawrelay_[a-z_]+ .+|clawrelay_[a-z_]+(\{[a-z]+="[^"]*"\})? -?[0-9.e+-]+)$/);
  });
});
