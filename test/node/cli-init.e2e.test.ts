// `clawrelay init` as a user runs it, against the real relay: what it prints, the settings file it
// writes, re-running it (same id, same token unless --rotate-token), and importing an Agentline identity.
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { newIdentity } from "../../local-agent/identity.ts";
import type { Identity } from "../../local-agent/identity.ts";
import type { AgentSettings } from "../../local-agent/settings.ts";
import { NO_HUB, startRelay } from "../support/node/stack.ts";
import type { LocalRelay } from "../support/node/stack.ts";
import { runCli, tempHome } from "./cli-harness.ts";
import type { TempHome } from "./cli-harness.ts";

let relay: LocalRelay;
const homes: TempHome[] = [];
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.stop();
});
afterEach(async () => {
  for (const home of homes.splice(0)) await home.cleanup();
});

async function home(): Promise<TempHome> {
  const h = await tempHome();
  homes.push(h);
  return h;
}

const settingsOf = (h: TempHome): AgentSettings => JSON.parse(readFileSync(join(h.env.CLAWRELAY_HOME!, "agent.json"), "utf8")) as AgentSettings;

function postHook(agentId: string, token: string): Promise<number> {
  return fetch(`${relay.url}/inbox/${agentId}/hooks/agentgram_inbox/agent`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: '{"message":"probe"}',
  }).then(async (res) => {
    await res.body?.cancel();
    return res.status;
  });
}

function writeAgentlineCredentials(h: TempHome, identity: Identity): void {
  const dir = join(h.dir, ".agentline", "credentials");
  mkdirSync(dir, { recursive: true });
  const data = {
    hub_url: NO_HUB,
    agent_id: identity.agentId,
    display_name: "Imported Alice",
    key_id: identity.keyId,
    private_key: identity.privateKey,
    public_key: identity.publicKey,
    token: "agentline.jwt.value",
    token_expires_at: 1_900_000_000,
  };
  writeFileSync(join(dir, `${identity.agentId}.json`), JSON.stringify(data), { mode: 0o600 });
}

describe("clawrelay init", () => {
  it("claims an inbox and prints the public webhook URL, the token and the next step (hub register); agent.json is mode 600", async () => {
    const h = await home();
    const result = await runCli(["init", "--relay", `${relay.url}/`, "--hub", NO_HUB, "--name", "Bob"], h.env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const settings = settingsOf(h);
    const id = settings.agent_id;
    expect(id).toMatch(/^ag_[0-9a-f]{12}$/);
    expect(settings).toMatchObject({ relay_url: relay.url, hub_url: NO_HUB, display_name: "Bob" });
    expect(settings.webhook_token).toBeTruthy();
    const token = settings.webhook_token!;
    const hooksUrl = `${relay.url}/inbox/${id}/hooks`;
    expect(result.stdout).toContain(`Claimed inbox ${id}`);
    expect(result.stdout).toContain(`public webhook URL: ${hooksUrl}`);
    expect(result.stdout).toMatch(new RegExp(`webhook token: +${token}\\n`));
    // The hub's side is one command now (test/node/hub-link.test.ts), not requests with a JWT by hand.
    expect(result.stdout).toContain("clawrelay hub register                                   an agent the hub already knows");
    expect(result.stdout).toContain("clawrelay hub register --bind-code bd_… --bind-nonce …   a new agent made on the hub's dashboard");
    expect(result.stdout).toContain("clawrelay hub register --mode pull");
    expect(result.stdout).toContain("403 NOT_IN_CONTACTS");
    expect(result.stdout).toContain("the hub keeps one token per agent: a new one ends the others");
    expect(result.stdout).not.toContain("curl");
    expect(statSync(join(h.env.CLAWRELAY_HOME!, "agent.json")).mode & 0o777).toBe(0o600);
    // The printed URL and token really are the inbox's.
    expect(await postHook(id, token)).toBe(202);
  });

  it("run again: same agent id, same token; --rotate-token mints a new one and retires the old", async () => {
    const h = await home();
    expect((await runCli(["init", "--relay", relay.url, "--hub", NO_HUB], h.env)).code).toBe(0);
    const first = settingsOf(h);

    const again = await runCli(["init", "--relay", relay.url], h.env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Updated inbox ${first.agent_id}`);
    const second = settingsOf(h);
    expect(second.agent_id).toBe(first.agent_id);
    expect(second.key).toEqual(first.key);
    expect(second.webhook_token).toBe(first.webhook_token);
    expect(await postHook(first.agent_id, first.webhook_token!)).toBe(202);

    const rotated = await runCli(["init", "--relay", relay.url, "--rotate-token"], h.env);
    expect(rotated.code).toBe(0);
    const third = settingsOf(h);
    expect(third.agent_id).toBe(first.agent_id);
    expect(third.webhook_token).toBeTruthy();
    expect(third.webhook_token).not.toBe(first.webhook_token);
    expect(rotated.stdout).toContain(third.webhook_token!);
    expect(await postHook(first.agent_id, first.webhook_token!)).toBe(401);
    expect(await postHook(first.agent_id, third.webhook_token!)).toBe(202);
  });

  it("--import-agentline keeps the imported agent id, key, display name and hub", async () => {
    const h = await home();
    const alice = await newIdentity();
    writeAgentlineCredentials(h, alice);
    const result = await runCli(["init", "--relay", relay.url, "--import-agentline"], h.env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const settings = settingsOf(h);
    expect(settings.agent_id).toBe(alice.agentId);
    expect(settings.key.private_key).toBe(alice.privateKey);
    expect(settings).toMatchObject({ display_name: "Imported Alice", hub_url: NO_HUB });
    // The file whose token the agent keeps on the relay's.
    expect(settings.hub_credentials).toEqual({ path: join(h.dir, ".agentline", "credentials", `${alice.agentId}.json`), format: "agentline" });
    expect(result.stdout).toContain(`Claimed inbox ${alice.agentId}`);
    expect(result.stdout).toContain(`/inbox/${alice.agentId}/hooks`);
    // The receipt key is the relay's own, never the imported key.
    expect(settings.receipt_key.private_key).not.toBe(alice.privateKey);
  });

  it("with several Agentline identities: refuses without a choice, and --agentline-id picks one", async () => {
    const h = await home();
    const a = await newIdentity();
    const b = await newIdentity();
    writeAgentlineCredentials(h, a);
    writeAgentlineCredentials(h, b);
    const refused = await runCli(["init", "--relay", relay.url, "--import-agentline"], h.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^clawrelay: several Agentline identities/);
    const picked = await runCli(["init", "--relay", relay.url, "--import-agentline", "--agentline-id", b.agentId], h.env);
    expect(picked.code).toBe(0);
    expect(settingsOf(h).agent_id).toBe(b.agentId);
  });

  it("--import-agentline over an existing inbox is not silently ignored: it imports, or refuses naming --force", async () => {
    const h = await home();
    expect((await runCli(["init", "--relay", relay.url, "--hub", NO_HUB], h.env)).code).toBe(0);
    const alice = await newIdentity();
    writeAgentlineCredentials(h, alice);
    const result = await runCli(["init", "--relay", relay.url, "--import-agentline"], h.env);
    const outcome = result.code === 0 ? { imported: settingsOf(h).agent_id === alice.agentId } : { refused: result.stderr.includes("--force") };
    expect(outcome).toEqual(result.code === 0 ? { imported: true } : { refused: true });
  });

  it("without --relay on a fresh home: exit 1 saying how to call it", async () => {
    const h = await home();
    const result = await runCli(["init"], h.env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("clawrelay init --relay");
  });
});
