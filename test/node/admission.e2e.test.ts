// Operator admission on a deployed relay (worker/access/admission.ts): who may claim an inbox and publish a
// directory card, chosen by CLAWRELAY_ADMISSION / CLAWRELAY_ALLOWED_AGENTS / CLAWRELAY_CLAIM_TOKEN,
// through the real Worker in workerd and the real `init`.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { agentIdFor } from "../../protocol/index.ts";
import { publishCard } from "../../local-agent/society/card-file.ts";
import { newIdentity, settingsIdentity } from "../../local-agent/identity.ts";
import { runInit } from "../../local-agent/cli/init.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { saveSettings } from "../../local-agent/settings.ts";
import { NO_HUB, startRelay } from "../support/node/stack.ts";
import type { LocalRelay } from "../support/node/stack.ts";

const TOKEN = "operator-claim-token-7f3a9c2e";
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relayWith(vars: Record<string, string>, persist = false): Promise<LocalRelay> {
  const persistDir = persist ? await mkdtemp(join(tmpdir(), "clawrelay-admission-")) : undefined;
  const relay = await startRelay({ vars, ...(persistDir ? { persistDir } : {}) });
  cleanups.push(() => relay.stop());
  if (persistDir) cleanups.push(() => rm(persistDir, { recursive: true, force: true }));
  return relay;
}

/** A settings path with a fresh identity (init then claims it). */
async function freshHome(): Promise<{ settingsPath: string; env: { CLAWRELAY_HOME: string; HOME: string } }> {
  const dir = await mkdtemp(join(tmpdir(), "clawrelay-admission-home-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return { settingsPath: join(dir, "clawrelay", "agent.json"), env: { CLAWRELAY_HOME: join(dir, "clawrelay"), HOME: dir } };
}

const card = { name: `bot-${Math.random().toString(36).slice(2, 8)}`, description: "test", skills: [{ id: "s", name: "S", description: "does s" }] };

describe("admission", () => {
  it("token: a first claim without the operator's token (or with a wrong one) is refused; with it, the inbox is created and may publish", async () => {
    const relay = await relayWith({ CLAWRELAY_ADMISSION: "token", CLAWRELAY_CLAIM_TOKEN: TOKEN });
    const home = await freshHome();
    await expect(runInit({ ...home, relay: relay.url, hub: NO_HUB })).rejects.toThrow(/403 claims_closed: .*x-clawrelay-claim-token/);
    await expect(runInit({ ...home, relay: relay.url, hub: NO_HUB, claimToken: "a-wrong-token-of-length" })).rejects.toThrow(/claims_closed/);
    const claimed = await runInit({ ...home, relay: relay.url, hub: NO_HUB, claimToken: TOKEN });
    expect(claimed.created).toBe(true);
    // An update of an admitted inbox needs no token again.
    expect((await runInit({ ...home, relay: relay.url, hub: NO_HUB })).created).toBe(false);
    await publishCard(relay.url, await settingsIdentity(claimed.settings), card, silentLogger);
  });

  it("allowlist: a listed agent claims; any other is refused, naming the setting", async () => {
    const home = await freshHome();
    const identity = await newIdentity();
    const relay = await relayWith({ CLAWRELAY_ADMISSION: "allowlist", CLAWRELAY_ALLOWED_AGENTS: `ag_000000000000, ${identity.agentId}` });
    await expect(runInit({ ...home, relay: relay.url, hub: NO_HUB })).rejects.toThrow(/claims_closed: .*CLAWRELAY_ALLOWED_AGENTS/);
    // Settings holding the listed identity (init reuses them and claims).
    const receipt = await newIdentity();
    const keyOf = (i: typeof identity) => ({ key_id: i.keyId, private_key: i.privateKey, public_key: i.publicKey });
    saveSettings(home.settingsPath, { relay_url: relay.url, agent_id: identity.agentId, hub_url: NO_HUB, key: keyOf(identity), receipt_key: keyOf(receipt) });
    expect(await agentIdFor(identity.publicKey)).toBe(identity.agentId);
    expect((await runInit({ ...home, relay: relay.url, hub: NO_HUB })).created).toBe(true);
  });

  it("token: an inbox claimed while the relay was open may not publish once the operator requires the token, until it claims again with it", async () => {
    const relay = await relayWith({}, true);
    const home = await freshHome();
    const claimed = await runInit({ ...home, relay: relay.url, hub: NO_HUB });
    await relay.restart({ CLAWRELAY_ADMISSION: "token", CLAWRELAY_CLAIM_TOKEN: TOKEN });
    const identity = await settingsIdentity(claimed.settings);
    await expect(publishCard(relay.url, identity, card, silentLogger)).rejects.toThrow(/claims_closed: .*claim token/);
    await runInit({ ...home, relay: relay.url, hub: NO_HUB, claimToken: TOKEN });
    await publishCard(relay.url, identity, card, silentLogger);
  });

  it.each([
    ["token mode without the secret", { CLAWRELAY_ADMISSION: "token" }, /CLAWRELAY_CLAIM_TOKEN/],
    ["an unknown mode", { CLAWRELAY_ADMISSION: "closed-ish" }, /expected open, allowlist or token/],
    ["an allow-list entry that is not an ag_ id", { CLAWRELAY_ADMISSION: "allowlist", CLAWRELAY_ALLOWED_AGENTS: "alice" }, /not an ag_ id/],
  ])("a misconfigured rule closes claims rather than opening them: %s", async (_, vars, message) => {
    const relay = await relayWith(vars);
    const home = await freshHome();
    await expect(runInit({ ...home, relay: relay.url, hub: NO_HUB, claimToken: TOKEN })).rejects.toThrow(message);
  });
});
