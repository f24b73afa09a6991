// `clawrelay start` and `clawrelay status` as child processes: status finds the running agent through
// run.json and its local API, says when none runs, and `start --json` never logs a secret.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
import { saveSettings } from "../../local-agent/settings.ts";
import { relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { closedPort, runCli, spawnCli } from "./cli-harness.ts";
import type { RunningCli } from "./cli-harness.ts";

const fixture = relayFixture();
const { cleanups, setUp } = fixture;

function start(home: AgentHome): RunningCli {
  const running = spawnCli(["start", "--json"], home.env);
  cleanups.push(() => running.stop());
  return running;
}

const runFile = (home: AgentHome) => join(home.env.CLAWRELAY_HOME!, "run.json");

async function waitConnected(home: AgentHome, running: RunningCli): Promise<void> {
  await waitUntil(`run.json (agent stderr: ${running.stderr()})`, () => existsSync(runFile(home)));
  await waitUntil("status to show the relay connected", async () => {
    const result = await runCli(["status", "--json"], home.env);
    return result.code === 0 && (JSON.parse(result.stdout) as AgentStatus).relay.state === "connected";
  });
}

describe("clawrelay status", () => {
  it("with no agent running: exit 1 saying how to start one", async () => {
    const { home } = await setUp();
    const result = await runCli(["status"], home.env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("clawrelay: no running agent found (start it with: clawrelay start)\n");
  });

  it("while start runs: shows the agent id and the relay connected; after SIGTERM, not running again", async () => {
    const { gateway, home } = await setUp();
    const running = start(home);
    await waitConnected(home, running);
    const run = JSON.parse(readFileSync(runFile(home), "utf8")) as { pid: number; api_port: number };
    expect(run.pid).toBe(running.child.pid);

    const result = await runCli(["status"], home.env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`agent     ${home.settings.agent_id} (pid ${run.pid}, local API 127.0.0.1:${run.api_port})`);
    expect(result.stdout).toContain(`inspector http://127.0.0.1:${run.api_port}/`);
    expect(result.stdout).toMatch(new RegExp(`^relay     connected ${fixture.relay().url} since `, "m"));
    expect(result.stdout).toContain(`gateway   127.0.0.1:${gateway.port}/hooks`);
    expect(result.stdout).toContain("inbox     0 queued, 0 sent (in flight), 0 dead");
    expect(result.stdout).toMatch(/^since start \(.+\): delivered 0, rejected to the dead shelf 0/m);

    const json = JSON.parse((await runCli(["status", "--json"], home.env)).stdout) as AgentStatus;
    expect(json).toMatchObject({ agent_id: home.settings.agent_id, relay: { state: "connected", url: fixture.relay().url }, api_port: run.api_port });
    expect(json).toMatchObject({ relay_queue: { queued: 0, sent: 0, dead: 0, oldest_waiting_at: null } });

    expect(await running.stop()).toBe(0);
    expect(existsSync(runFile(home))).toBe(false);
    expect((await runCli(["status"], home.env)).code).toBe(1);
  });

  it("after the agent was killed (stale run.json): exit 1 saying it may have crashed", async () => {
    const { home } = await setUp();
    const running = start(home);
    await waitConnected(home, running);
    running.child.kill("SIGKILL");
    await new Promise((resolve) => running.child.once("exit", resolve));
    expect(existsSync(runFile(home))).toBe(true);
    const result = await runCli(["status"], home.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("may have crashed");
  });

  it("a stale run.json is not answered by another agent that now holds its port", async () => {
    const first = await setUp();
    // An ephemeral port rather than the shared default 19791, so no other test's agent takes it meanwhile.
    saveSettings(first.home.settingsPath, { ...first.home.settings, api_port: await closedPort() });
    const firstRun = start(first.home);
    await waitConnected(first.home, firstRun);
    const { api_port: port } = JSON.parse(readFileSync(runFile(first.home), "utf8")) as { api_port: number };
    firstRun.child.kill("SIGKILL");
    await new Promise((resolve) => firstRun.child.once("exit", resolve));
    // A second agent (another CLAWRELAY_HOME) takes the port the first one left behind.
    const second = await setUp();
    saveSettings(second.home.settingsPath, { ...second.home.settings, api_port: port });
    const secondRun = start(second.home);
    await waitConnected(second.home, secondRun);
    expect((JSON.parse(readFileSync(runFile(second.home), "utf8")) as { api_port: number }).api_port).toBe(port);

    const result = await runCli(["status"], first.home.env);
    expect(result.stdout).not.toContain(second.home.settings.agent_id);
    expect(result.code).toBe(1);
  });
});

describe("clawrelay start --json", () => {
  it("logs JSON lines without the hooks token, the private keys or the webhook token while delivering", async () => {
    const { gateway, home } = await setUp();
    const running = start(home);
    await waitConnected(home, running);
    // One refusal first, so the error path is logged too.
    gateway.script({ status: 503 });
    const hook = await fetch(`${fixture.relay().url}/inbox/${home.settings.agent_id}/hooks/agentgram_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "application/json" },
      body: '{"message":"secret-free body"}',
    });
    expect(hook.status).toBe(202);
    const sent = await runCli(["send", "--to", home.settings.agent_id, "--text", "hello from send"], home.env);
    expect(sent.code).toBe(0);
    await waitUntil("both messages delivered", () => gateway.received.length === 2);
    await waitUntil("the delivered log lines", () => (running.stderr().match(/"event":"delivered"/g) ?? []).length === 2);
    expect(await running.stop()).toBe(0);

    const log = running.stderr() + running.stdout();
    const lines = running.stderr().trim().split("\n");
    const events = lines.map((line) => (JSON.parse(line) as { event: string }).event);
    expect(events).toContain("agent started");
    expect(events).toContain("relay connected");
    expect(events).toContain("gateway refused");
    expect(events).toContain("agent stopped");
    const secrets = {
      hooksToken: gateway.token,
      privateKey: home.settings.key.private_key,
      receiptPrivateKey: home.settings.receipt_key.private_key,
      webhookToken: home.settings.webhook_token!,
    };
    for (const [name, secret] of Object.entries(secrets)) {
      expect(secret.length, name).toBeGreaterThan(8);
      expect(log.includes(secret), `${name} appears in the log`).toBe(false);
    }
  });
});
