// The agent follows agent.json as it follows openclaw.json (local-agent/gateway/settings-follow.ts), issue 24:
// a stale gateway.hooks_token pauses delivery on 401, the pause (status's PAUSED line) naming the override
// (file and key) as the cause; fixing it in agent.json (written atomically, as editors and saveSettings do)
// delivers the waiting message without a restart and well before the 60 s retry; a broken edit keeps the
// last good settings and says so; a field that needs a restart is named.
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import { saveSettings } from "../../local-agent/settings.ts";
import type { AgentSettings } from "../../local-agent/settings.ts";
import type { Logger } from "../../local-agent/logger.ts";
import { postHook, relayFixture, runAgent, waitUntil } from "../support/node/stack.ts";

const stack = relayFixture();
const AGENT = "agentgram_inbox/agent";

function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  return { info: log("info"), warn: log("warn"), error: log("error") };
}

const edit = (path: string, change: (s: AgentSettings) => AgentSettings) => saveSettings(path, change(JSON.parse(readFileSync(path, "utf8")) as AgentSettings));

describe("agent.json is followed without a restart", () => {
  it("a stale hooks_token: paused on 401; fixed in agent.json, the waiting message is delivered at once", async () => {
    const { gateway, home } = await stack.setUp("Stale");
    edit(home.settingsPath, (s) => ({ ...s, gateway: { ...s.gateway, hooks_token: "stale-token" } }));
    home.settings = JSON.parse(readFileSync(home.settingsPath, "utf8")) as AgentSettings;
    const lines: string[] = [];
    const agent = await runAgent(home, recordingLogger(lines));
    stack.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    expect((await postHook(stack.relay().url, home, AGENT, JSON.stringify({ message: "waiting" }))).status).toBe(202);
    await waitUntil("paused on 401", () => agent.status().delivery.paused !== null);
    expect(agent.status().delivery.paused).toContain("401");
    // The cause named as doctor names it: the override in agent.json, not openclaw.json's hooks.token.
    expect(agent.status().delivery.paused).toContain(`the hooks token set by gateway.hooks_token in ${home.settingsPath}`);
    const text = statusText({ ...agent.status(), relay_queue: { queued: 0, sent: 1, dead: 0, oldest_waiting_at: null }, relay_hub: null }, 1, Date.now());
    expect(text).toContain(`PAUSED    gateway answered 401 Unauthorized: the hooks token set by gateway.hooks_token in ${home.settingsPath}`);

    edit(home.settingsPath, (s) => ({ ...s, gateway: { ...s.gateway, hooks_token: gateway.token } }));
    // At once: the edit itself ends the paused message's minute-long wait (its own retry would come 60 s later).
    await waitUntil("delivered with the fixed token", () => agent.status().delivery.delivered === 1);
    expect(lines.filter((line) => line.startsWith("info retrying now ")).map((line) => JSON.parse(line.slice("info retrying now ".length)) as { why: string })).toContainEqual(expect.objectContaining({ why: "the gateway settings changed" }));
    expect(gateway.received).toHaveLength(1);
    expect(agent.status().delivery).toMatchObject({ paused: null, delivered: 1 });
    expect(agent.status().gateway.settings_file).toMatchObject({ error: null, restart_needed: [] });
  });

  it("a broken edit keeps delivering with the last good settings and reports it; fixing it clears the report", async () => {
    const { gateway, home } = await stack.setUp("Broken");
    const lines: string[] = [];
    const agent = await runAgent(home, recordingLogger(lines));
    stack.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const good = readFileSync(home.settingsPath, "utf8");
    writeFileSync(home.settingsPath, good.slice(0, 40));
    expect((await postHook(stack.relay().url, home, AGENT, JSON.stringify({ message: "still" }))).status).toBe(202);
    await waitUntil("delivered with the last good settings", () => gateway.received.length === 1);
    expect(agent.status().gateway.settings_file?.error).toContain("is not valid JSON");
    expect(lines.some((l) => l.startsWith("error agent.json changed but cannot be used; keeping the last good settings"))).toBe(true);

    writeFileSync(home.settingsPath, good.replace(`"agent_id"`, `"gateway": { "port": "not a number" },\n  "agent_id"`));
    await waitUntil("the wrong type reported", () => agent.status().gateway.settings_file?.error?.includes("gateway.port must be a number") === true);
    writeFileSync(home.settingsPath, good);
    await waitUntil("the report cleared", () => agent.status().gateway.settings_file?.error === null);
    expect((await postHook(stack.relay().url, home, AGENT, JSON.stringify({ message: "again" }))).status).toBe(202);
    await waitUntil("the second delivery", () => gateway.received.length === 2);
  });

  it("a changed relay_url is reported as needing a restart, not applied", async () => {
    const { gateway, home } = await stack.setUp("Mover");
    const lines: string[] = [];
    const agent = await runAgent(home, recordingLogger(lines));
    stack.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    edit(home.settingsPath, (s) => ({ ...s, relay_url: "https://elsewhere.example" }));
    await waitUntil("the restart reported", () => (agent.status().gateway.settings_file?.restart_needed ?? []).includes("relay_url"));
    expect(agent.status().relay.url).toBe(stack.relay().url);
    expect(lines.some((l) => l.includes("agent.json changed fields that apply only after a restart") && l.includes("relay_url"))).toBe(true);
    expect((await postHook(stack.relay().url, home, AGENT, JSON.stringify({ message: "same relay" }))).status).toBe(202);
    await waitUntil("delivered as before", () => gateway.received.length === 1);
  });
});
