// Search and delegate end to end on the real relay: two local agents, two stand-in gateways; the
// target's gateway answers chat completions from the whole conversation it was given.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import type { CardFile } from "../../local-agent/society/card-file.ts";
import { GATEWAY_DOWN } from "../../local-agent/society/task-runner.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";

const suffix = crypto.randomUUID().slice(0, 6);
const WEATHER: CardFile = {
  name: `weather-${suffix}`,
  description: "Real-time weather forecasts for any city",
  skills: [{ id: "forecast", name: "Weather Forecast", description: "Current conditions and a 7-day forecast", tags: ["weather", "forecast"], examples: ["Weather in Paris?"] }],
};

let relay: LocalRelay;
const gateways: StandinGateway[] = [];
const homes: AgentHome[] = [];
const agents: AgentHandle[] = [];
let requester: AgentHandle;
let requesterHome: AgentHome;
let target: AgentHandle;
let targetHome: AgentHome;

async function agentWith(name: string, options: { card?: CardFile; chatCompletions?: boolean; timeoutMs?: number } = {}) {
  const gateway = await startStandinGateway({ chatCompletions: options.chatCompletions ?? true });
  const home = await makeAgentHome(relay, gateway, name, options);
  if (options.timeoutMs) home.settings.delegate_timeout_ms = options.timeoutMs;
  const agent = await runAgent(home);
  gateways.push(gateway);
  homes.push(home);
  agents.push(agent);
  await waitUntil(`${name} connected`, () => agent.status().relay.state === "connected");
  return { gateway, home, agent };
}

function api(agent: AgentHandle, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return fetch(`http://127.0.0.1:${agent.apiPort}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
}

beforeAll(async () => {
  relay = await startRelay();
  ({ agent: target, home: targetHome } = await agentWith("Weather", { card: WEATHER }));
  ({ agent: requester, home: requesterHome } = await agentWith("Planner", { timeoutMs: 4000 }));
});
afterAll(async () => {
  for (const agent of agents) await agent.close();
  for (const gateway of gateways) await gateway.close();
  for (const home of homes) await home.cleanup();
  await relay.stop();
});

describe("search and delegate", () => {
  it("search from A finds B by its skills", async () => {
    const { status, body } = await api(requester, "/api/search-agents", { query: "weather forecast", limit: 10 });
    expect(status).toBe(200);
    const agentsFound = body.agents as { name: string; score: number; best_skill_id: string; description: string; skills: { id: string }[] }[];
    expect(agentsFound[0]).toMatchObject({ name: WEATHER.name, best_skill_id: "forecast", description: WEATHER.description });
    expect(agentsFound[0]!.score).toBeGreaterThan(0);
    expect(agentsFound[0]!.score).toBeLessThanOrEqual(1);
    expect(body.total).toBe(agentsFound.length);
  });

  it("delegates a task and returns B's answer; a follow-up with task_id continues the conversation", async () => {
    const first = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "Weather in Paris?" });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, status: "completed", agent: WEATHER.name, skill: "forecast", response: 'Reply 1: I have heard "Weather in Paris?"' });
    const taskId = first.body.task_id as string;
    const second = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "And tomorrow?", task_id: taskId });
    expect(second.body).toMatchObject({ success: true, task_id: taskId, response: 'Reply 2: I have heard "Weather in Paris?", "And tomorrow?"' });
    // The relay's acks of the tasks reached A's inbox too, but were not passed on to A's gateway.
    await waitUntil("A to take its acks", () => requester.status().delivery.queued === 0);
    expect(gateways[1]!.received.filter((r) => r.body.toString().includes("acknowledged your message"))).toEqual([]);
    // The target's gateway ran both in one session, keyed by requester and task.
    expect(gateways[0]!.conversations.get(`clawrelay:${requesterHome.settings.agent_id}:${taskId}`)).toEqual(["Weather in Paris?", "And tomorrow?"]);
  });

  it("reports input-required when the target asks for more", async () => {
    const res = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "Weather there? [ask]" });
    expect(res.body).toMatchObject({ success: true, status: "input-required", response: "which city do you mean?" });
  });

  it("answers unknown agents, unknown skills and bad requests with HTTP 200, success:false and a reason (curl -sf hides error statuses)", async () => {
    const unknown = await api(requester, "/api/delegate-task", { agent_id: "nobody-here", skill_id: "x", message: "hi" });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ success: false, agent: "nobody-here", skill: "x" });
    expect(String(unknown.body.error)).toContain("not found");
    const skill = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "poetry", message: "hi" });
    expect(skill.status).toBe(200);
    expect(String(skill.body.error)).toContain("forecast");
    const missing = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name });
    expect(missing).toEqual({ status: 200, body: { success: false, error: expect.stringContaining("skill_id, message are required"), agent: WEATHER.name, skill: "" } });
    const empty = await api(requester, "/api/delegate-task", {});
    expect(empty.body).toMatchObject({ success: false, agent: "", skill: "" });
    const typed = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "hi", task_id: 7 });
    expect(typed.body).toMatchObject({ success: false, error: "task_id must be a non-empty string (leave it out to start a new task)" });
    // Only a body that is not JSON at all keeps an HTTP error.
    const notJson = await fetch(`http://127.0.0.1:${requester.apiPort}/api/delegate-task`, { method: "POST", headers: { "content-type": "application/json" }, body: "agent_id=x" });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ success: false, agent: "", skill: "" });
  });

  it("names, skill and task ids are trimmed and one trailing newline leaves the message, as `jq -Rs .` sends them", async () => {
    const res = await api(requester, "/api/delegate-task", { agent_id: `${WEATHER.name}\n`, skill_id: " forecast\n", message: "Line one\nline two\n" });
    expect(res.body).toMatchObject({ success: true, agent: WEATHER.name, skill: "forecast", response: 'Reply 1: I have heard "Line one\nline two"' });
    const again = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "More?\n\n", task_id: `${String(res.body.task_id)}\n` });
    expect(again.body).toMatchObject({ success: true, task_id: res.body.task_id });
    expect(String(again.body.response)).toContain('"More?\n"');
  });

  it("a follow-up must name a task started here, with its agent and its skill", async () => {
    const never = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "hi", task_id: "never-issued" });
    expect(never.body).toMatchObject({ success: false, task_id: "never-issued", status: "failed", agent: WEATHER.name, skill: "forecast" });
    expect(String(never.body.error)).toContain('task_id "never-issued" is not a task this agent started');
    expect(String(never.body.error)).toContain("leave task_id out to start a new task");
    const first = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "Rome?" });
    expect(first.body.success).toBe(true);
    const otherSkill = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "alerts", message: "storms?", task_id: first.body.task_id });
    expect(otherSkill.body).toMatchObject({ success: false, status: "failed" });
    expect(String(otherSkill.body.error)).toBe(`task ${String(first.body.task_id)} uses the skill "forecast"; a follow-up keeps its skill — to use "alerts", leave task_id out to start a new task`);
    const otherAgent = await api(requester, "/api/delegate-task", { agent_id: "someone-else", skill_id: "forecast", message: "x", task_id: first.body.task_id });
    expect(String(otherAgent.body.error)).toContain(`is with ${WEATHER.name}, not someone-else`);
  });

  it("a target whose gateway is not running says so, not that chat completions are off", async () => {
    const card: CardFile = { ...WEATHER, name: `down-${suffix}`, skills: [{ id: "echo", name: "Echo" }] };
    const { gateway } = await agentWith("Down", { card, chatCompletions: false });
    await gateway.close();
    const res = await api(requester, "/api/delegate-task", { agent_id: card.name, skill_id: "echo", message: "anyone?" });
    expect(res).toMatchObject({ status: 200, body: { success: false, status: "failed", error: GATEWAY_DOWN } });
  });

  it("a target with chat completions disabled answers failed, naming the setting", async () => {
    const card: CardFile = { ...WEATHER, name: `mute-${suffix}`, skills: [{ id: "echo", name: "Echo" }] };
    await agentWith("Mute", { card, chatCompletions: false });
    const res = await api(requester, "/api/delegate-task", { agent_id: card.name, skill_id: "echo", message: "hello?" });
    expect(res.body.success).toBe(false);
    expect(String(res.body.error)).toContain("gateway.http.endpoints.chatCompletions.enabled");
  });

  it("B offline: A times out cleanly, and B's late result is dropped, not given to another caller", async () => {
    await target.close();
    const res = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "late question" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, error: `Delegation to ${WEATHER.name} timed out (4000ms)`, agent: WEATHER.name, skill: "forecast" });
    // B comes back, answers the queued task; A must drop that result and still serve new calls right.
    target = await runAgent(targetHome);
    agents.push(target);
    await waitUntil("B to answer the late task", () => [...gateways[0]!.conversations.values()].some((h) => h.includes("late question")));
    const fresh = await api(requester, "/api/delegate-task", { agent_id: WEATHER.name, skill_id: "forecast", message: "new question" });
    expect(fresh.body).toMatchObject({ success: true, response: 'Reply 1: I have heard "new question"' });
    await waitUntil("the late result to be dropped", () => requester.status().delegation.late_results_dropped === 1);
    const hooksAtA = gateways[1]!.received.map((r) => r.body.toString());
    expect(hooksAtA.some((b) => b.includes("late question") || b.includes("sent the result"))).toBe(false);
  });
});
