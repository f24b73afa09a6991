// The running agent's side of the hub link, end to end: the real agent and relay, and a small hub with
// /hub/ws (test/support/node/registry-hub.ts), for a BotCord identity registered in pull mode. Proves:
// the relay's newer token reaches the BotCord credentials file; the agent holds the hub's socket with
// it, and an inbox_update makes the relay pull at once (not at its backed-off schedule); a token the
// user's BotCord client refreshed into the file goes up to the relay; `clawrelay status` shows the socket.
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import { newIdentity, settingsIdentity } from "../../local-agent/identity.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { signedRelayCall } from "../../local-agent/relay/relay-api.ts";
import { journalPath, loadSettings } from "../../local-agent/settings.ts";
import type { AgentSettings } from "../../local-agent/settings.ts";
import { startRegistryHub } from "../support/node/registry-hub.ts";
import type { RegistryHub } from "../support/node/registry-hub.ts";
import { relayFixture, waitUntil } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();
const hubs: RegistryHub[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

const relayView = async (settings: AgentSettings) =>
  (await signedRelayCall(fixture.relay().url, await settingsIdentity(settings), "GET", `/inbox/${settings.agent_id}/hub`)).body as { token: { source: string; expires_at: number } | null; last_pull: { at: number } | null; next_pull_at: number | null };

describe("the running agent and the hub (pull mode, a BotCord identity)", () => {
  it("keeps the credentials file and the relay on the newest token both ways, and turns the hub's inbox_update into a pull at once", async () => {
    const hub = await startRegistryHub({ registration: "closed", webhooks: "deprecated", prefix: "botcord" });
    hubs.push(hub);
    const { home } = await fixture.setUp("ignored");
    const identity = await newIdentity();
    hub.addAgent(identity.publicKey, "k_b07c0dd1d0e2");
    const first = hub.mint(identity.agentId);
    mkdirSync(join(home.dir, ".botcord", "credentials"), { recursive: true });
    const path = join(home.dir, ".botcord", "credentials", `${identity.agentId}.json`);
    const data = { version: 1, hubUrl: hub.url, agentId: identity.agentId, keyId: "k_b07c0dd1d0e2", privateKey: identity.privateKey, publicKey: identity.publicKey.slice(8), displayName: "Botty", savedAt: "2026-11-30T10:00:00.000Z", token: first.agent_token, tokenExpiresAt: first.expires_at, runtime: "openclaw-acp" };
    writeFileSync(path, JSON.stringify(data, null, 2), { mode: 0o600 });
    expect((await runCli(["init", "--relay", fixture.relay().url, "--import-botcord", "--force"], home.env)).code).toBe(0);
    const registered = await runCli(["hub", "register"], home.env, 30_000);
    expect(registered.code, registered.stdout + registered.stderr).toBe(0);
    const settings = loadSettings(home.settingsPath);
    expect(settings.hub_credentials).toEqual({ path: realpathSync(path), format: "botcord" });

    // The relay holds a newer token than the file (handed over by another run): the agent writes it into the file.
    const newer = hub.mint(identity.agentId, 86_400 + 60);
    await signedRelayCall(fixture.relay().url, await settingsIdentity(settings), "PUT", `/inbox/${identity.agentId}/hub/token`, { token: newer.agent_token, expires_at: newer.expires_at });
    const agent = await startAgent({ settings, env: home.env, logger: silentLogger, apiPort: 0, journalFile: journalPath(home.env.CLAWRELAY_HOME), hubTiming: { pollMs: 200 } });
    fixture.cleanups.push(() => agent.close());
    const file = () => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    await waitUntil("the relay's token in the BotCord file", () => file().token === newer.agent_token);
    expect(file()).toEqual({ ...data, token: newer.agent_token, tokenExpiresAt: newer.expires_at });

    // The agent holds the hub's socket with that token.
    await waitUntil("the hub socket", () => agent.status().hub.watch.state === "connected");
    expect(hub.wsAuths.at(-1)).toEqual({ token: newer.agent_token, ok: true });
    expect(agent.status().hub).toMatchObject({ mode: "pull", credentials: { path: realpathSync(path), format: "botcord", error: null } });
    // `clawrelay status` gives the socket one line.
    const text = statusText({ ...agent.status(), relay_queue: { error: "not asked" }, relay_hub: null }, 1, Date.now());
    expect(text).toMatch(new RegExp(`\\nhub ws {4}connected to ws://127\\.0\\.0\\.1:\\d+/hub/ws since \\S+; no inbox_update yet(\\n|$)`));

    // Mail at the hub: the relay pulls at once, not at its schedule (15 s or more after its last pull).
    // The pull counts only if it came before the next one the relay had scheduled when the mail came.
    const pulls = () => hub.calls.filter((c) => c === "GET /hub/inbox").length;
    await waitUntil("the relay's pull schedule", async () => ((await relayView(settings)).next_pull_at ?? 0) > Date.now());
    const before = pulls();
    const scheduledAt = (await relayView(settings)).next_pull_at!;
    hub.inboxUpdate(identity.agentId);
    await waitUntil("a pull after the inbox_update", () => pulls() > before);
    expect(Date.now()).toBeLessThan(scheduledAt);
    expect(agent.status().hub.watch.updates).toBe(1);

    // The user's BotCord CLI refreshes and writes its file in place: the agent hands that token to the relay.
    const cli = hub.mint(identity.agentId, 86_400 + 120);
    writeFileSync(path, JSON.stringify({ ...file(), token: cli.agent_token, tokenExpiresAt: cli.expires_at }, null, 2));
    await waitUntil("the relay to hold the CLI's token", async () => (await relayView(settings)).token?.expires_at === cli.expires_at, 5000);
    expect((await relayView(settings)).token?.source).toBe("agent");
    expect(hub.refreshes).toEqual([]);
  });
});
