// `clawrelay send` and `clawrelay doctor` as child processes against the real relay and a stand-in
// gateway: what they print and their exit codes, on a good set-up and on broken ones.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { identityFromPrivateKey } from "../../local-agent/identity.ts";
import { loadGatewaySettings } from "../../local-agent/gateway/openclaw-config.ts";
import { signedRelayCall } from "../../local-agent/relay/relay-api.ts";
import { relayFixture, writeOpenClawConfig } from "../support/node/stack.ts";
import { closedPort, runCli, tempHome } from "./cli-harness.ts";

const fixture = relayFixture();
const { cleanups, setUp } = fixture;

/** The check lines of doctor's report, each with the line after it. */
function checks(stdout: string): { line: string; next: string }[] {
  const lines = stdout.split("\n");
  return lines.flatMap((line, i) => (line.startsWith("[") ? [{ line, next: lines[i + 1] ?? "" }] : []));
}

describe("clawrelay send", () => {
  it("--to its own agent id answers queued… and the relay holds the message", async () => {
    const { home } = await setUp();
    const id = home.settings.agent_id;
    const result = await runCli(["send", "--to", id, "--text", "hi"], home.env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^queued at ${id} as id \\d+ \\(msg_id [0-9a-f-]{36}\\)`));
    const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
    const queue = await signedRelayCall(fixture.relay().url, identity, "GET", `/inbox/${id}/messages?ack=false`);
    expect(queue.status).toBe(200);
    expect(queue.body.count).toBe(1);
  });

  it("posts a --payload in its JCS form (keys sorted, no spaces), which the relay stores as sent", async () => {
    const { home } = await setUp();
    const id = home.settings.agent_id;
    const result = await runCli(["send", "--to", id, "--payload", '{ "z": [1.5, "ü"], "a": { "y": null, "b": "x / y" } }'], home.env);
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
    const queue = await signedRelayCall(fixture.relay().url, identity, "GET", `/inbox/${id}/messages?ack=false`);
    const [message] = queue.body.messages as { body: string }[];
    expect(message!.body).toContain(',"payload":{"a":{"b":"x / y","y":null},"z":[1.5,"ü"]}}');
  });

  it("a --to that is not an agent id exits 1 with a clear message and sends nothing", async () => {
    const { home } = await setUp();
    const result = await runCli(["send", "--to", "bob", "--text", "hi"], home.env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("clawrelay: --to must be an agent id (ag_ + 12 hex)\n");
  });

  it("a --to whose inbox the relay does not hold exits 1 saying the relay refused it", async () => {
    const { home } = await setUp();
    const result = await runCli(["send", "--to", "ag_000000000000", "--text", "hi"], home.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^clawrelay: the relay refused the envelope: 4\d\d /);
  });

  it("bad --payload and --type are usage errors", async () => {
    const { home } = await setUp();
    const id = home.settings.agent_id;
    const payload = await runCli(["send", "--to", id, "--payload", "{nope"], home.env);
    expect(payload.code).toBe(1);
    expect(payload.stderr).toContain("--payload must be a JSON object");
    const type = await runCli(["send", "--to", id, "--text", "x", "--type", "shout"], home.env);
    expect(type.code).toBe(1);
    expect(type.stderr).toContain("--type must be one of");
  });

  it("without settings exits 1 pointing at init", async () => {
    const h = await tempHome();
    cleanups.push(() => h.cleanup());
    const result = await runCli(["send", "--to", "ag_000000000000", "--text", "hi"], h.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("clawrelay init --relay");
  });
});

describe("clawrelay doctor", () => {
  it("a good set-up: exit 0, only OK/WARN lines, the gateway and both mappings found", async () => {
    const { gateway, home } = await setUp();
    const result = await runCli(["doctor"], home.env);
    expect(result.code, result.stdout).toBe(0);
    const lines = checks(result.stdout).map((c) => c.line);
    expect(lines.length).toBeGreaterThanOrEqual(8);
    for (const line of lines) expect(line).toMatch(/^\[(OK|WARN)\] /);
    expect(lines).toContain(`[OK] gateway listening on 127.0.0.1:${gateway.port} (gateway.port)`);
    expect(lines).toContain("[OK] hooks.mappings has agentgram_inbox/agent");
    expect(lines).toContain("[OK] hooks.mappings has agentgram_inbox/wake");
    expect(result.stdout).toContain(`relay ${fixture.relay().url} reachable`);
    expect(result.stdout).not.toContain(gateway.token);
  });

  it("a broken openclaw.json (hooks off, no mappings, port not listening): exit 1, each FAIL with its fix", async () => {
    const { home } = await setUp();
    const port = await closedPort();
    writeFileSync(home.env.OPENCLAW_CONFIG_PATH!, `{ gateway: { port: ${port} }, hooks: { enabled: false, token: "t" }, }`);
    const result = await runCli(["doctor"], home.env);
    expect(result.code).toBe(1);
    const fails = checks(result.stdout).filter((c) => c.line.startsWith("[FAIL]"));
    expect(fails.map((f) => f.line)).toEqual([
      "[FAIL] hooks.enabled is not true",
      `[FAIL] nothing listens on 127.0.0.1:${port} (gateway.port)`,
      "[FAIL] hooks.mappings has no entry for agentgram_inbox/agent: the gateway will answer 404",
      "[FAIL] hooks.mappings has no entry for agentgram_inbox/wake: the gateway will answer 404",
    ]);
    for (const fail of fails) expect(fail.next).toMatch(/^ +fix: \S/);
  });

  it("--gateway-port overrides a wrong gateway.port for the run", async () => {
    const { gateway, home } = await setUp();
    const port = await closedPort();
    const config = readFileSync(home.env.OPENCLAW_CONFIG_PATH, "utf8").replace(`port: ${gateway.port}`, `port: ${port}`);
    writeFileSync(home.env.OPENCLAW_CONFIG_PATH, config);
    expect((await runCli(["doctor"], home.env)).code).toBe(1);
    const result = await runCli(["doctor", "--gateway-port", String(gateway.port)], home.env);
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain(`[OK] gateway listening on 127.0.0.1:${gateway.port} (flag)`);
    expect((await runCli(["doctor", "--gateway-port", "http"], home.env)).stderr).toContain("--gateway-port must be a TCP port number");
  });

  it("an openclaw.json that is not JSON5: exit 1 naming the file", async () => {
    const { home } = await setUp();
    writeFileSync(home.env.OPENCLAW_CONFIG_PATH!, "{ hooks: ");
    const result = await runCli(["doctor"], home.env);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`[FAIL] ${home.env.OPENCLAW_CONFIG_PATH!} is not valid JSON5`);
  });

  it("no settings: exit 1 with a FAIL that says to run init", async () => {
    const h = await tempHome();
    cleanups.push(() => h.cleanup());
    const result = await runCli(["doctor"], h.env);
    expect(result.code).toBe(1);
    const first = checks(result.stdout)[0];
    expect(first?.line).toMatch(/^\[FAIL\] no settings at /);
    expect(first?.next).toContain("fix: run clawrelay init --relay");
  });

  it("checks the port the agent will use: OPENCLAW_GATEWAY_PORT from the state dir's .env", async () => {
    // The agent (loadGatewaySettings) reads <state dir>/.env; doctor must judge the same port.
    const { gateway, home } = await setUp();
    const stateDir = dirname(home.env.OPENCLAW_CONFIG_PATH!);
    mkdirSync(stateDir, { recursive: true });
    const env = { HOME: home.env.HOME!, CLAWRELAY_HOME: home.env.CLAWRELAY_HOME!, OPENCLAW_STATE_DIR: stateDir };
    await writeOpenClawConfig(join(stateDir, "openclaw.json"), { ...gateway, port: await closedPort() });
    writeFileSync(join(stateDir, ".env"), `OPENCLAW_GATEWAY_PORT=${gateway.port}\n`);
    expect(loadGatewaySettings(env).port).toBe(gateway.port);
    const result = await runCli(["doctor"], env);
    expect(result.stdout).toContain(`[OK] gateway listening on 127.0.0.1:${gateway.port} (OPENCLAW_GATEWAY_PORT)`);
    expect(result.code).toBe(0);
  });
});
