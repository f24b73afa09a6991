// The 19791 API as the Society AI skill scripts use it: status shape, the curl/jq examples run
// verbatim through bash, and the refusals that keep web pages out.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import type { CardFile } from "../../local-agent/society/card-file.ts";
import { tokenize } from "../../worker/directory/tokenize.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";

const EXAMPLE_CARD = JSON.parse(readFileSync(new URL("../../examples/card.json", import.meta.url), "utf8")) as CardFile;
const NAME = `weather-bot-${crypto.randomUUID().slice(0, 6)}`;
let relay: LocalRelay;
const gateways: StandinGateway[] = [];
const homes: AgentHome[] = [];
const agents: AgentHandle[] = [];

beforeAll(async () => {
  relay = await startRelay();
  // The card `npm start` publishes (examples/card.json), under a name of this run's own.
  const weather: CardFile = { ...EXAMPLE_CARD, name: NAME };
  const roles: [string, CardFile | undefined][] = [["Weather", weather], ["Caller", undefined]];
  for (const [name, card] of roles) {
    const gateway = await startStandinGateway();
    const home = await makeAgentHome(relay, gateway, name, card ? { card } : {});
    const agent = await runAgent(home);
    gateways.push(gateway);
    homes.push(home);
    agents.push(agent);
    await waitUntil(`${name} connected`, () => agent.status().relay.state === "connected");
  }
});
afterAll(async () => {
  for (const agent of agents) await agent.close();
  for (const gateway of gateways) await gateway.close();
  for (const home of homes) await home.cleanup();
  await relay.stop();
});

const caller = () => agents[1]!;

/** Runs a shell snippet the way a skill script does, with SOCIETY_AI_API_PORT set. */
async function script(snippet: string): Promise<string> {
  const { stdout } = await promisify(execFile)("bash", ["-c", `set -euo pipefail\nPORT="\${SOCIETY_AI_API_PORT:-19791}"\n${snippet}`], {
    env: { ...process.env, SOCIETY_AI_API_PORT: String(caller().apiPort) },
  });
  return stdout.trim();
}

function rawGet(headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: caller().apiPort, path: "/api/status", headers }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the 19791 API", () => {
  it("GET /api/status has the plugin's shape and true values: a listed agent is registered and connected", async () => {
    const weather = agents[0]!;
    const status = JSON.parse(await script(`SOCIETY_AI_API_PORT=${weather.apiPort}; PORT=$SOCIETY_AI_API_PORT; curl -sf --max-time 20 "http://127.0.0.1:$PORT/api/status"`)) as { api: { port: number; uptime: number } } & Record<string, unknown>;
    expect(Object.keys(status).sort()).toEqual(["agent", "api", "connected", "gateway", "hub", "version"]);
    expect(status).toMatchObject({ connected: true, agent: NAME, hub: { status: "connected", registered: true, relay: relay.url }, gateway: { status: "connected" }, version: "0.1.0" });
    expect(status.api.port).toBe(weather.apiPort);
    expect(Number.isInteger(status.api.uptime)).toBe(true);
  });

  it("regression: an agent with no card in the directory is not claimed to be registered (nor connected)", async () => {
    const status = JSON.parse(await script(`curl -sf --max-time 20 "http://127.0.0.1:$PORT/api/status"`)) as Record<string, unknown>;
    expect(status).toMatchObject({ connected: false, agent: "Caller", hub: { status: "connected", registered: false }, gateway: { status: "connected" } });
  });

  it("the documented search example works verbatim", async () => {
    const out = await script(
      `curl -sf --max-time 20 -X POST "http://127.0.0.1:$PORT/api/search-agents" -H "Content-Type: application/json" -d '{"query": "weather forecast", "limit": 10}' | jq -r '.agents[0] | "\\(.name) \\(.best_skill_id) \\(.score > 0 and .score <= 1)"'`,
    );
    expect(out).toBe(`${NAME} forecast true`);
  });

  it("finds the example card by meaning, through the local model, for a query sharing no word with it", async () => {
    const query = "will it be sunny or cloudy in Lisbon";
    const cardWords = new Set(tokenize(JSON.stringify(EXAMPLE_CARD)));
    expect(tokenize(query).filter((term) => cardWords.has(term))).toEqual([]);
    const out = await script(
      `curl -sf --max-time 20 -X POST "http://127.0.0.1:$PORT/api/search-agents" -H "Content-Type: application/json" -d '{"query": "${query}", "limit": 5}' | jq -r '.agents[] | .name + " " + .best_skill_id'`,
    );
    expect(out).toBe(`${NAME} forecast`);
  });

  it("the documented delegate example works verbatim, branching on .success", async () => {
    const out = await script(
      `RESULT=$(curl -sf --max-time 200 -X POST "http://127.0.0.1:$PORT/api/delegate-task" -H "Content-Type: application/json" -d '{"agent_id": "${NAME}", "skill_id": "forecast", "message": "Weather in San Francisco?"}')
if [ "$(echo "$RESULT" | jq -r '.success')" = "true" ]; then echo "$RESULT" | jq -r '.status + ": " + .response'; else echo "$RESULT" | jq -r '.error'; fi`,
    );
    expect(out).toBe('completed: Reply 1: I have heard "Weather in San Francisco?"');
  });

  it("refuses a browser Origin and a foreign Host (DNS rebinding), answering in the failure shape", async () => {
    const origin = await rawGet({ Origin: "http://evil.example" });
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body)).toMatchObject({ success: false });
    const rebinding = await rawGet({ Host: `evil.example:${caller().apiPort}` });
    expect(rebinding.status).toBe(403);
    expect(JSON.parse(rebinding.body).error).toContain("Host");
    expect((await rawGet({ Host: `localhost:${caller().apiPort}` })).status).toBe(200);
  });

  it("answers a bad search request in the failure shape", async () => {
    const res = await fetch(`http://127.0.0.1:${caller().apiPort}/api/search-agents`, { method: "POST", body: "{}" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ success: false, error: expect.stringContaining("query") });
  });
});
