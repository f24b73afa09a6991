// Today's hub, where an owner makes the agent on the dashboard: `clawrelay hub register --bind-code …
// --bind-nonce …` and `clawrelay init --import-botcord`, run as a user runs them (the real CLI) against
// the real relay and a small hub (test/support/node/registry-hub.ts) whose /openclaw/install-claim checks
// both proofs with node:crypto. Proves: the claim is made with agent.json's key and a distinct host key,
// each signing the decoded nonce; the hub's key id is saved, pull mode is chosen without trying webhooks,
// and the claim's token goes to the relay, which never refreshes its own; the code is not spent twice;
// refusals say what to do; a BotCord identity keeps its id, and its credentials file is linked and
// given the relay's token when its own expires earlier, every other field kept.
import { chmodSync, lstatSync, mkdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newIdentity, settingsIdentity } from "../../local-agent/identity.ts";
import type { Identity } from "../../local-agent/identity.ts";
import { signedRelayCall } from "../../local-agent/relay/relay-api.ts";
import { saveSettings } from "../../local-agent/settings.ts";
import type { AgentSettings } from "../../local-agent/settings.ts";
import { signedBy, startRegistryHub } from "../support/node/registry-hub.ts";
import type { RegistryHub, RegistryHubOptions } from "../support/node/registry-hub.ts";
import { relayFixture } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();
const hubs: RegistryHub[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

const TODAY: RegistryHubOptions = { registration: "closed", webhooks: "deprecated", prefix: "botcord" };
const read = (home: AgentHome): AgentSettings => JSON.parse(readFileSync(home.settingsPath, "utf8")) as AgentSettings;
const register = (home: AgentHome, ...args: string[]) => runCli(["hub", "register", ...args], home.env, 30_000);

async function agentWithHub(options: RegistryHubOptions = TODAY): Promise<{ home: AgentHome; hub: RegistryHub }> {
  const hub = await startRegistryHub(options);
  hubs.push(hub);
  const { home } = await fixture.setUp("Bob");
  saveSettings(home.settingsPath, { ...home.settings, hub_url: hub.url });
  return { home, hub };
}

/** GET /inbox/{id}/hub for the inbox agent.json names now (an import changes it). */
async function relayView(home: AgentHome): Promise<Record<string, unknown>> {
  const settings = read(home);
  const answer = await signedRelayCall(fixture.relay().url, await settingsIdentity(settings), "GET", `/inbox/${settings.agent_id}/hub`);
  expect(answer.status).toBe(200);
  return answer.body;
}

describe("hub register --bind-code", () => {
  it("claims the dashboard's agent with agent.json's key and a fresh host key; saves the hub's key id; pulls; the relay holds the claim's token; a second run leaves the code alone", async () => {
    const { home, hub } = await agentWithHub();
    const before = home.settings;

    const refused = await register(home);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("does not register agents itself");
    expect(refused.stderr).toContain("clawrelay hub register --bind-code bd_… --bind-nonce …");

    const bind = hub.addBindCode("Alice");
    const result = await register(home, "--bind-code", bind.code, "--bind-nonce", bind.nonce);
    expect(result.stderr).toBe("");
    expect(result.code, result.stdout).toBe(0);

    // The hub took the two proofs: both over the decoded nonce, by two different keys, the agent's being agent.json's.
    expect(hub.claims.map((c) => c.status)).toEqual([201]);
    const body = hub.claims[0]!.body as { host: { pubkey: string; proof: { nonce: string; sig: string } }; agent: { pubkey: string; proof: { nonce: string; sig: string } } };
    expect(body.agent.pubkey).toBe(before.key.public_key);
    expect(body.host.pubkey).not.toBe(before.key.public_key);
    expect(body.host.pubkey).not.toBe(before.receipt_key.public_key);
    for (const side of [body.host, body.agent]) {
      expect(side.proof.nonce).toBe(bind.nonce);
      expect(signedBy(side.pubkey, Buffer.from(bind.nonce, "base64"), side.proof.sig)).toBe(true);
    }

    const after = read(home);
    const agent = hub.agents.get(before.agent_id)!;
    const [mainKeyId] = [...agent.keys.keys()];
    expect(after.key.key_id).toBe(mainKeyId);
    expect(after.key.key_id).not.toBe(before.key.key_id);
    expect(agent.keys.get(after.receipt_key.key_id)).toMatchObject({ pubkey: before.receipt_key.public_key, state: "active" });
    expect(after.hub).toMatchObject({ mode: "pull", prefix: "botcord", prefix_source: "default for a pulling link" });
    expect(hub.calls.some((c) => c.includes("/endpoints"))).toBe(false);

    expect(result.stdout).toContain(`[1/7] hub token: from claiming the dashboard's agent with the bind code (the main key is ${after.key.key_id})`);
    expect(result.stdout).toContain(`the hub knows the main key as ${after.key.key_id} (settings had ${before.key.key_id}); saved`);
    expect(result.stdout).toContain("[4/7] endpoint: skipped (--bind-code: today's hub pushes nothing; the relay pulls from the hub's inbox)");
    expect(result.stdout).toContain("the relay: took it");
    for (const secret of ["host-access-secret", "host-refresh-secret", before.key.private_key, ...hub.issued()]) expect(result.stdout).not.toContain(secret);

    expect(await relayView(home)).toMatchObject({ mode: "pull", prefix: "botcord", token: { source: "owner" } });
    expect(hub.refreshes).toEqual([]);

    const again = await register(home, "--bind-code", bind.code, "--bind-nonce", bind.nonce);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain("[1/7] hub token: from the relay's token (got by hub register)");
    expect(again.stdout).toContain(`the bind code was not used: ${before.agent_id} is at the hub already`);
    expect(hub.claims).toHaveLength(1);
    expect(hub.refreshes).toEqual([]);
  });

  it("refusals say what to do: a wrong nonce, a used code, a hub that names another agent; the flags come in pairs", async () => {
    const { home, hub } = await agentWithHub();
    const bind = hub.addBindCode();
    const otherNonce = Buffer.alloc(32, 7).toString("base64");

    const wrongNonce = await register(home, "--bind-code", bind.code, "--bind-nonce", otherNonce);
    expect(wrongNonce.code).toBe(1);
    expect(wrongNonce.stderr).toContain("the hub refused the proofs (401 INVALID_PROOF): --bind-nonce must be the nonce shown with this bind code");

    const unknown = await register(home, "--bind-code", "bd_000000000000", "--bind-nonce", bind.nonce);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("the hub refused the bind code (400 INVALID_BIND_CODE): it is unknown, used or expired — make a new one on the dashboard");

    hub.answerClaimsAs("ag_000000000000");
    const mismatch = await register(home, "--bind-code", bind.code, "--bind-nonce", bind.nonce);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toContain(`the hub claimed the agent as ag_000000000000, but this inbox is ${home.settings.agent_id}`);
    expect(read(home).key.key_id).toBe(home.settings.key.key_id);

    const half = await register(home, "--bind-code", bind.code);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain("--bind-code and --bind-nonce go together");
    const badCode = await register(home, "--bind-code", "xx_nope", "--bind-nonce", bind.nonce);
    expect(badCode.code).toBe(2);
    expect(badCode.stderr).toContain('--bind-code must be the dashboard\'s code, bd_… (not "xx_nope")');
  });
});

/** A BotCord client's files for `identity` (known to the hub): credentials/<id>.json and the default.json symlink. */
function botcordFiles(home: AgentHome, identity: Identity, keyId: string, hubUrl: string, token: { agent_token: string; expires_at: number }): string {
  const dir = join(home.dir, ".botcord", "credentials");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${identity.agentId}.json`);
  const credentials = {
    version: 1,
    hubUrl,
    agentId: identity.agentId,
    keyId,
    privateKey: identity.privateKey,
    publicKey: identity.publicKey.slice("ed25519:".length),
    displayName: "Botty",
    savedAt: "2026-11-30T10:00:00.000Z",
    token: token.agent_token,
    tokenExpiresAt: token.expires_at,
    runtime: "openclaw-acp",
    openclawGateway: "default",
  };
  writeFileSync(path, JSON.stringify(credentials, null, 2) + "\n", { mode: 0o600 });
  symlinkSync(path, join(home.dir, ".botcord", "default.json"));
  // As the agent names it: resolved (macOS's temp directory is behind a symlink).
  return realpathSync(path);
}

describe("init --import-botcord, then hub register", () => {
  it("keeps the BotCord id, key id, hub and name; links the file; pulls with the file's token; later writes the relay's newer token into it, every other field kept", async () => {
    const hub = await startRegistryHub(TODAY);
    hubs.push(hub);
    const { home } = await fixture.setUp("ignored");
    const identity = await newIdentity();
    hub.addAgent(identity.publicKey, "k_b07c0dd1d000");
    const path = botcordFiles(home, identity, "k_b07c0dd1d000", hub.url, hub.mint(identity.agentId));

    const init = await runCli(["init", "--relay", fixture.relay().url, "--import-botcord", "--force"], home.env);
    expect(init.code, init.stdout + init.stderr).toBe(0);
    const settings = read(home);
    expect(settings).toMatchObject({ agent_id: identity.agentId, hub_url: hub.url, display_name: "Botty", key: { key_id: "k_b07c0dd1d000", public_key: identity.publicKey }, hub_credentials: { path, format: "botcord" } });

    const result = await register(home);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`[1/7] hub token: from ${path}`);
    expect(result.stdout).toContain("endpoint: skipped (a BotCord identity: today's hub pushes nothing;");
    expect(result.stdout).toContain(`credentials file: ${path} holds this token already`);
    expect(hub.calls.some((c) => c.includes("/endpoints"))).toBe(false);
    expect(hub.refreshes).toEqual([]);
    expect(await relayView(home)).toMatchObject({ mode: "pull", token: { source: "owner" } });

    // The agent handed the relay a newer token (as the running agent does): the file's is older now.
    const newer = hub.mint(identity.agentId, 86_400 + 60);
    const put = await signedRelayCall(fixture.relay().url, await settingsIdentity(settings), "PUT", `/inbox/${identity.agentId}/hub/token`, { token: newer.agent_token, expires_at: newer.expires_at });
    expect(put.body).toMatchObject({ taken: true });
    const before = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    const again = await register(home);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain("[1/7] hub token: from the relay's token (got by hub register)");
    expect(again.stdout).toContain(`credentials file: wrote it into ${path} (its token expired earlier), so your BotCord client uses it too`);
    const after = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    expect(after).toEqual({ ...before, token: newer.agent_token, tokenExpiresAt: newer.expires_at });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(home.dir, ".botcord", "default.json")).isSymbolicLink()).toBe(true);
    expect(again.stdout).not.toContain(newer.agent_token);
    expect(hub.refreshes).toEqual([]);

    // doctor checks the linked file: there, for this hub, private.
    expect((await runCli(["doctor"], home.env)).stdout).toContain(`[OK] hub credentials file ${path} (botcord) is kept on the relay's hub token while the agent runs`);
    chmodSync(path, 0o644);
    const loose = await runCli(["doctor"], home.env);
    expect(loose.stdout).toContain(`[WARN] hub credentials file ${path} is readable by others (mode 644)\n       fix: chmod 600 ${path}`);
  });

  it("the hub: --hub, then $BOTCORD_HUB, then the file's hubUrl", async () => {
    const { home } = await fixture.setUp("ignored");
    const identity = await newIdentity();
    botcordFiles(home, identity, "k_b07c0dd1d001", "http://127.0.0.1:9", { agent_token: "a.b.c", expires_at: 1 });
    const hubOf = async (args: string[], env: Record<string, string> = {}) => {
      const run = await runCli(["init", "--relay", fixture.relay().url, "--import-botcord", "--force", ...args], { ...home.env, ...env });
      expect(run.code, run.stderr).toBe(0);
      return read(home).hub_url;
    };
    expect(await hubOf([])).toBe("http://127.0.0.1:9");
    expect(await hubOf([], { BOTCORD_HUB: "http://127.0.0.1:10" })).toBe("http://127.0.0.1:10");
    expect(await hubOf(["--hub", "http://127.0.0.1:11"], { BOTCORD_HUB: "http://127.0.0.1:10" })).toBe("http://127.0.0.1:11");
    const both = await runCli(["init", "--relay", fixture.relay().url, "--import-botcord", "--import-agentline", "--force"], home.env);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain("import one identity: --import-botcord or --import-agentline, not both");
  });
});
