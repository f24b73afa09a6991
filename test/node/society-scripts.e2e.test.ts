// The Society AI commands as shell scripts (examples/society-scripts/: `curl -sf`, `jq`, bodies built
// with `jq -Rs .` as the documented workflow does) against the running local API of a real agent on the
// real relay: status, search with and without a match, delegate, follow-up, and the whole workflow
// with a match, without one, and with a target that fails. Each must print what the docs say.
import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import type { CardFile } from "../../local-agent/society/card-file.ts";
import { GATEWAY_DOWN } from "../../local-agent/society/task-runner.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";

const SCRIPTS = join(import.meta.dirname, "../../examples/society-scripts");
const suffix = crypto.randomUUID().slice(0, 6);
const WEATHER: CardFile = {
  name: `weather-bot-${suffix}`,
  description: "Real-time weather forecasts for any city",
  skills: [{ id: "forecast", name: "Weather Forecast", description: "Current conditions and a 7-day forecast", tags: ["weather", "forecast"], examples: ["Weather in Paris?"] }],
};
const ORACLE: CardFile = {
  name: `oracle-${suffix}`,
  description: "Prophecies about tomorrow's lottery numbers",
  skills: [{ id: "prophecy", name: "Lottery Prophecy", description: "Predicts lottery numbers", tags: ["lottery", "prophecy"] }],
};

/** jq is what the documented scripts need; the test says so plainly when this machine lacks it. */
function findJq(): string {
  try {
    return execFileSync("sh", ["-c", "command -v jq"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("jq is not installed, and the Society AI scripts use it: install jq (apt-get install jq, brew install jq) and run the tests again");
  }
}

let relay: LocalRelay;
const closers: (() => Promise<unknown>)[] = [];
let requester: AgentHandle;

async function agent(name: string, card?: CardFile): Promise<{ agent: AgentHandle; gateway: StandinGateway; home: AgentHome }> {
  const gateway = await startStandinGateway();
  const home = await makeAgentHome(relay, gateway, name, card ? { card } : {});
  const handle = await runAgent(home);
  closers.push(() => gateway.close(), () => home.cleanup(), () => handle.close());
  await waitUntil(`${name} connected`, () => handle.status().relay.state === "connected");
  return { agent: handle, gateway, home };
}

/** Runs a script as a skill would: bash, the API port in SOCIETY_AI_API_PORT. Resolves stdout, exit code. */
function run(script: string, ...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile("bash", [join(SCRIPTS, script), ...args], { env: { PATH: process.env.PATH, SOCIETY_AI_API_PORT: String(requester.apiPort) }, timeout: 60_000 }, (err, stdout) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout });
    });
  });
}

beforeAll(async () => {
  findJq();
  relay = await startRelay();
  await agent("Weather", WEATHER);
  // The oracle is listed, but its gateway has gone: every task for it fails.
  const oracle = await agent("Oracle", ORACLE);
  await oracle.gateway.close();
  ({ agent: requester } = await agent("Caller"));
});
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await relay.stop();
});

describe("the documented scripts, unchanged, against the local API", () => {
  it("jq is found", () => {
    expect(findJq()).toMatch(/jq$/);
  });

  it("status.sh", async () => {
    expect(await run("status.sh")).toEqual({ code: 0, out: "connected: false (agent Caller; hub connected, registered false; gateway connected)\n" });
  });

  it("search-agents.sh with a match and without one; total counts every match", async () => {
    const found = await run("search-agents.sh", "weather forecast");
    expect(found.code).toBe(0);
    const lines = found.out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^Found \d+ of \d+ agent\(s\):$/);
    expect(lines[1]).toMatch(new RegExp(`^- ${WEATHER.name} \\(score 0\\.\\d+\\): ${WEATHER.description} \\[best skill: forecast\\]$`));
    const limited = await run("search-agents.sh", "weather forecast lottery", "1");
    expect(limited.out.split("\n")[0]).toBe("Found 1 of 2 agent(s):");
    expect(await run("search-agents.sh", "xylophone zebra")).toEqual({ code: 0, out: "No agents found for: xylophone zebra\n" });
    expect(await run("search-agents.sh", "")).toEqual({ code: 1, out: 'Error: Query string is required\nUsage: search-agents.sh "query string" [limit]\n' });
  });

  it("delegate-task.sh, then a follow-up with its task_id", async () => {
    const first = await run("delegate-task.sh", WEATHER.name, "forecast", "Weather in Paris?");
    expect(first.code).toBe(0);
    const [response, meta] = first.out.trimEnd().split("\n");
    expect(response).toBe('Reply 1: I have heard "Weather in Paris?"');
    const taskId = /^\(task_id: (\S+), status: completed\)$/.exec(meta ?? "")?.[1];
    expect(taskId).toBeDefined();
    const second = await run("delegate-task.sh", WEATHER.name, "forecast", "And tomorrow?", taskId!);
    expect(second.out).toBe(`Reply 2: I have heard "Weather in Paris?", "And tomorrow?"\n(task_id: ${taskId}, status: completed)\n`);
  });

  it("delegate-task.sh failures print the reason (HTTP 200 with success:false)", async () => {
    expect(await run("delegate-task.sh", "nobody-here", "x", "hi")).toEqual({ code: 1, out: 'Delegation failed: Agent "nobody-here" not found in the directory (search first: /api/search-agents)\n' });
    const unknownTask = await run("delegate-task.sh", WEATHER.name, "forecast", "hi", "made-up-task");
    expect(unknownTask.out).toContain('Delegation failed: task_id "made-up-task" is not a task this agent started');
  });

  it("the workflow script with a match: search, delegate, the answer", async () => {
    expect(await run("workflow.sh", "weather forecast", "Will it rain in Oslo?")).toEqual({
      code: 0,
      out: `Delegating to ${WEATHER.name} (forecast)...\nReply 1: I have heard "Will it rain in Oslo?"\n`,
    });
  });

  it("the workflow script without a match", async () => {
    expect(await run("workflow.sh", "xylophone zebra", "hello")).toEqual({ code: 0, out: "No agents found for: xylophone zebra\n" });
  });

  it("the workflow script with a target that fails: the reason, not an empty line", async () => {
    expect(await run("workflow.sh", "lottery prophecy", "Numbers for Friday?")).toEqual({
      code: 0,
      out: `Delegating to ${ORACLE.name} (prophecy)...\nDelegation failed: ${GATEWAY_DOWN}\n`,
    });
  });
});
