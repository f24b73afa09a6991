// `clawrelay doctor` asks the running gateway (local-agent/doctor/doctor-gateway.ts): the hooks token by
// POST {hooks.path}/wake {} (400 / 401 / 404), the gateway token by GET /v1/models, chat completions,
// and the per-sender session settings with the exact lines to add. A stand-in gateway answers as
// the real one does (test/openclaw/ checks the same against the real gateway).
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, relayFixture } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

function lines(stdout: string): string[] {
  return stdout.split("\n");
}

/** The check line starting with `start`, and its fix line (if any). */
function check(stdout: string, start: string): { line: string; fix: string } {
  const all = lines(stdout);
  const i = all.findIndex((l) => l.startsWith(start));
  if (i < 0) throw new Error(`no line starting with ${start} in:\n${stdout}`);
  const next = all[i + 1] ?? "";
  return { line: all[i]!, fix: next.trim().startsWith("fix:") ? next.trim() : "" };
}

function edit(path: string, change: (text: string) => string): void {
  writeFileSync(path, change(readFileSync(path, "utf8")));
}

describe("doctor talks to the gateway", () => {
  it("a good set-up: hooks token and gateway token accepted, chat completions on; per-sender sessions WARN with the lines to add", async () => {
    const { home } = await fixture.setUp();
    const result = await runCli(["doctor"], home.env);
    expect(result.code, result.stdout).toBe(0);
    expect(check(result.stdout, "[OK] the gateway accepts hooks.token").line).toBe("[OK] the gateway accepts hooks.token (POST /hooks/wake {} answered 400: hooks on, token right)");
    expect(result.stdout).toContain("[OK] chat completions are on");
    expect(result.stdout).toContain("[OK] gateway token found (gateway.auth.token)");
    expect(result.stdout).toContain("[OK] the gateway accepts the gateway token (GET /v1/models answered 200)");
    const sessions = check(result.stdout, "[WARN] per-sender sessions are off");
    expect(sessions.fix).toBe('fix: add on the agentgram_inbox/agent mapping: "sessionKey": "{{sessionKey}}"; and in "hooks": "allowRequestSessionKey": true');
  });

  it("per-sender sessions set up as docs/openclaw-setup.md shows: OK; a prefix list that would refuse the hub's keys is a FAIL naming them", async () => {
    const { home } = await fixture.setUp();
    const path = home.env.OPENCLAW_CONFIG_PATH;
    edit(path, (t) => t.replace('messageTemplate: "[Agentline] {{message}}" }', 'messageTemplate: "[Agentline] {{message}}", sessionKey: "{{sessionKey}}" }').replace("enabled: true,\n    token", 'enabled: true,\n    allowRequestSessionKey: true,\n    allowedSessionKeyPrefixes: ["hook:"],\n    token'));
    const narrow = await runCli(["doctor"], home.env);
    expect(narrow.code).toBe(1);
    const refused = check(narrow.stdout, "[FAIL] the agentgram_inbox/agent mapping passes the hub's sessionKey");
    expect(refused.line).toBe("[FAIL] the agentgram_inbox/agent mapping passes the hub's sessionKey, but the gateway refuses keys starting with \"botcord:\" or \"agentline:\": those messages are shelved");
    expect(refused.fix).toBe('fix: add in "hooks": "allowedSessionKeyPrefixes": ["hook:", "botcord:", "agentline:"]');
    // The list of earlier versions of the docs: the renderer's botcord: keys would be refused.
    edit(path, (t) => t.replace('["hook:"]', '["agentline:", "hook:"]'));
    expect(check((await runCli(["doctor"], home.env)).stdout, "[FAIL] the agentgram_inbox/agent mapping").fix).toBe('fix: add in "hooks": "allowedSessionKeyPrefixes": ["agentline:", "hook:", "botcord:"]');
    edit(path, (t) => t.replace('["agentline:", "hook:"]', '["botcord:", "agentline:", "hook:"]'));
    expect((await runCli(["doctor"], home.env)).stdout).toContain("[OK] per-sender sessions: each sender's messages continue one session");
  });

  it("the running gateway refuses hooks.token (401), or has hooks elsewhere (404): FAIL with the fix", async () => {
    const { gateway, home } = await fixture.setUp();
    const path = home.env.OPENCLAW_CONFIG_PATH;
    edit(path, (t) => t.replace(`token: "${gateway.token}"`, 'token: "not-the-running-one"'));
    const wrong = await runCli(["doctor"], home.env);
    expect(wrong.code).toBe(1);
    expect(check(wrong.stdout, "[FAIL] the gateway refused hooks.token").line).toBe("[FAIL] the gateway refused hooks.token (POST /hooks/wake {} answered 401)");
    expect(wrong.stdout).not.toContain("not-the-running-one");

    const elsewhere = await startStandinGateway({ hooksPath: "/other-hooks" });
    fixture.cleanups.push(() => elsewhere.close());
    const home2 = await makeAgentHome(fixture.relay(), elsewhere, "Elsewhere");
    fixture.cleanups.push(() => home2.cleanup());
    edit(home2.env.OPENCLAW_CONFIG_PATH, (t) => t.replace('path: "/other-hooks"', 'path: "/hooks"'));
    const off = await runCli(["doctor"], home2.env);
    const fail = check(off.stdout, "[FAIL] hooks are off in the running gateway or hooks.path is not /hooks");
    expect(fail.line).toContain("(POST /hooks/wake {} answered 404)");
    expect(fail.fix).toBe('fix: set "hooks": { "enabled": true, "path": "/hooks" } in openclaw.json');
  });

  it("a stale hooks token in agent.json overriding openclaw.json's: doctor names the override (file and key) as the refused token, and the fix is in agent.json", async () => {
    const { home } = await fixture.setUp();
    edit(home.settingsPath, (t) => JSON.stringify({ ...JSON.parse(t), gateway: { hooks_token: "stale-override" } }));
    const result = await runCli(["doctor"], home.env);
    expect(result.code).toBe(1);
    expect(check(result.stdout, "[WARN] the hooks token is set by").line).toBe(`[WARN] the hooks token is set by gateway.hooks_token in ${home.settingsPath}, and differs from openclaw.json's hooks.token: the agent posts with agent.json's, which the gateway refuses unless it runs with that token`);
    expect(result.stdout).not.toContain("[OK] hooks.token is set");
    const refused = check(result.stdout, "[FAIL] the gateway refused the hooks token");
    expect(refused.line).toBe(`[FAIL] the gateway refused the hooks token set by gateway.hooks_token in ${home.settingsPath}, which overrides openclaw.json's hooks.token (POST /hooks/wake {} answered 401)`);
    expect(refused.fix).toBe(`fix: remove gateway.hooks_token from ${home.settingsPath} (the agent then posts with openclaw.json's hooks.token; a running agent follows the edit), or set it to the running gateway's hooks.token`);
    expect(result.stdout).not.toContain("stale-override");
  });

  it("no gateway token in the file: FAIL naming both places; OPENCLAW_GATEWAY_TOKEN is found and checked; a wrong one is refused", async () => {
    const { gateway, home } = await fixture.setUp();
    edit(home.env.OPENCLAW_CONFIG_PATH, (t) => t.replace(`auth: { token: "${gateway.authToken}" },`, ""));
    const none = await runCli(["doctor"], home.env);
    expect(none.code).toBe(1);
    const missing = check(none.stdout, "[FAIL] gateway token not usable:");
    expect(missing.line).toContain("no gateway.auth.token in openclaw.json and no OPENCLAW_GATEWAY_TOKEN");
    expect(missing.fix).toBe("fix: set OPENCLAW_GATEWAY_TOKEN for clawrelay, or gateway.auth_token in agent.json");

    const fromEnv = await runCli(["doctor"], { ...home.env, OPENCLAW_GATEWAY_TOKEN: gateway.authToken });
    expect(fromEnv.code, fromEnv.stdout).toBe(0);
    expect(fromEnv.stdout).toContain("[OK] gateway token found (OPENCLAW_GATEWAY_TOKEN)");
    expect(fromEnv.stdout).toContain("[OK] the gateway accepts the gateway token (GET /v1/models answered 200)");
    expect(fromEnv.stdout).not.toContain(gateway.authToken);

    const wrong = await runCli(["doctor"], { ...home.env, OPENCLAW_GATEWAY_TOKEN: "wrong-gateway-token" });
    expect(check(wrong.stdout, "[FAIL] the gateway refused the gateway token").line).toBe("[FAIL] the gateway refused the gateway token from OPENCLAW_GATEWAY_TOKEN (GET /v1/models answered 401)");
  });

  it("a secret reference to a variable: found when set; chat completions off makes token trouble a WARN, not a FAIL", async () => {
    const { gateway, home } = await fixture.setUp();
    edit(home.env.OPENCLAW_CONFIG_PATH, (t) => t.replace(`auth: { token: "${gateway.authToken}" }`, 'auth: { token: { source: "env", provider: "default", id: "MY_GATEWAY_SECRET" } }'));
    const set = await runCli(["doctor"], { ...home.env, MY_GATEWAY_SECRET: gateway.authToken });
    expect(set.stdout).toContain("[OK] gateway token found (gateway.auth.token (secret reference env:MY_GATEWAY_SECRET))");
    expect(set.stdout).toContain("[OK] the gateway accepts the gateway token");
    edit(home.env.OPENCLAW_CONFIG_PATH, (t) => t.replace("chatCompletions: { enabled: true }", "chatCompletions: { enabled: false }"));
    const off = await runCli(["doctor"], home.env);
    expect(off.code, off.stdout).toBe(0);
    expect(check(off.stdout, "[WARN] chat completions are off").fix).toBe('fix: set "gateway": { "http": { "endpoints": { "chatCompletions": { "enabled": true } } } } in openclaw.json (the gateway applies it without a restart)');
    expect(off.stdout).toContain("[WARN] gateway token not usable: gateway.auth.token (secret reference env:MY_GATEWAY_SECRET): MY_GATEWAY_SECRET is not set");
  });
});
