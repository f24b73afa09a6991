// The agent follows openclaw.json as the gateway does (local-agent/gateway/gateway-source.ts): a changed
// hooks token, port or chat completions switch takes effect on the next message without a restart;
// the gateway token may come from OPENCLAW_GATEWAY_TOKEN; a refused task keeps the gateway's words.
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import type { CardFile } from "../../local-agent/society/card-file.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, postHook, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";

const suffix = crypto.randomUUID().slice(0, 6);
const CARD: CardFile = {
  name: `followed-${suffix}`,
  description: "Answers questions about followed settings",
  skills: [{ id: "answer", name: "Answer", description: "Answers a question", tags: ["answer"], examples: ["Why?"] }],
};

let relay: LocalRelay;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await relay.stop();
});

async function agentFor(gateway: StandinGateway, name: string, options: { card?: CardFile; env?: Record<string, string> } = {}): Promise<{ home: AgentHome; agent: AgentHandle }> {
  const home = await makeAgentHome(relay, gateway, name, options.card ? { card: options.card } : {});
  closers.push(() => home.cleanup());
  Object.assign(home.env, options.env ?? {});
  const agent = await runAgent(home);
  closers.push(() => agent.close());
  await waitUntil(`${name} connected`, () => agent.status().relay.state === "connected");
  return { home, agent };
}

async function gateway(options: Parameters<typeof startStandinGateway>[0] = {}): Promise<StandinGateway> {
  const g = await startStandinGateway(options);
  closers.push(() => g.close());
  return g;
}

function api(agent: AgentHandle, path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return fetch(`http://127.0.0.1:${agent.apiPort}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then(async (res) => ({
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
  }));
}

describe("openclaw.json changes are followed without a restart", () => {
  it("a new port and hooks token: the next message goes to the new gateway, status shows it", async () => {
    const first = await gateway();
    const second = await gateway();
    const { home, agent } = await agentFor(first, "Mover");
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", JSON.stringify({ message: "one" }))).status).toBe(202);
    await waitUntil("the first gateway to get it", () => first.received.length === 1);

    const path = home.env.OPENCLAW_CONFIG_PATH;
    writeFileSync(path, readFileSync(path, "utf8").replace(`port: ${first.port}`, `port: ${second.port}`).replace(`token: "${first.token}"`, `token: "${second.token}"`));
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", JSON.stringify({ message: "two" }))).status).toBe(202);
    await waitUntil("the second gateway to get it", () => second.received.length === 1);
    expect(JSON.parse(second.received[0]!.body.toString())).toEqual({ message: "two" });
    expect(first.received).toHaveLength(1);
    expect(agent.status().gateway).toMatchObject({ port: second.port, config_error: null });
  });

  it("a broken edit keeps the last good settings and says so; fixing it is picked up", async () => {
    const g = await gateway();
    const { home, agent } = await agentFor(g, "Careful");
    const path = home.env.OPENCLAW_CONFIG_PATH;
    const good = readFileSync(path, "utf8");
    writeFileSync(path, "{ hooks: ");
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", JSON.stringify({ message: "still" }))).status).toBe(202);
    await waitUntil("delivery with the last good settings", () => g.received.length === 1);
    expect(agent.status().gateway.config_error).toContain("is not valid JSON5");
    writeFileSync(path, good + "\n");
    expect((await postHook(relay.url, home, "agentgram_inbox/agent", JSON.stringify({ message: "again" }))).status).toBe(202);
    await waitUntil("the second delivery", () => g.received.length === 2);
    expect(agent.status().gateway.config_error).toBeNull();
  });
});

describe("the gateway token and the gateway's own words", () => {
  it("chat completions switched on in openclaw.json and the token from OPENCLAW_GATEWAY_TOKEN: a delegated task runs", async () => {
    const targetGateway = await gateway();
    const { home: targetHome } = await agentFor(targetGateway, "Target", { card: CARD, env: { OPENCLAW_GATEWAY_TOKEN: targetGateway.authToken } });
    const path = targetHome.env.OPENCLAW_CONFIG_PATH;
    // No token in the file, and the endpoint switched off: the token comes from the environment.
    writeFileSync(path, readFileSync(path, "utf8").replace(`auth: { token: "${targetGateway.authToken}" },`, "").replace("chatCompletions: { enabled: true }", "chatCompletions: { enabled: false }"));
    const { agent: requester } = await agentFor(await gateway(), "Asker");

    const off = await api(requester, "/api/delegate-task", { agent_id: CARD.name, skill_id: "answer", message: "Are you on?" });
    expect(off.body).toMatchObject({ success: false });
    expect(String(off.body.error)).toContain("chat completions are disabled");

    writeFileSync(path, readFileSync(path, "utf8").replace("chatCompletions: { enabled: false }", "chatCompletions: { enabled: true }"));
    const on = await api(requester, "/api/delegate-task", { agent_id: CARD.name, skill_id: "answer", message: "Now?" });
    expect(on.body).toMatchObject({ success: true, status: "completed", response: 'Reply 1: I have heard "Now?"' });
  });

  it("a gateway that refuses the task: the requester sees the gateway's status and error text", async () => {
    const targetGateway = await gateway();
    await agentFor(targetGateway, "Refuser", { card: { ...CARD, name: `${CARD.name}-r` } });
    const { agent: requester } = await agentFor(await gateway(), "Asker2");
    targetGateway.script({ status: 503 });
    const answer = await api(requester, "/api/delegate-task", { agent_id: `${CARD.name}-r`, skill_id: "answer", message: "Busy?" });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: false, status: "failed" });
    expect(String(answer.body.error)).toBe("the agent's gateway answered 503: scripted");
  });
});
