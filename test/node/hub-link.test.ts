// `clawrelay hub register` / `hub status` / `doctor` as a user runs them (the real CLI), against the real
// relay and a small hub (test/support/node/registry-hub.ts): registration and its challenge, one current
// token per agent, a second key with a hub-assigned id, endpoints that push, are gone or are deprecated,
// the probe test and the message policy — each signature checked with node:crypto. Proves: a token is
// minted only when none held works (the relay's first, then the credentials file's), and the relay is
// handed it, so it never refreshes its own; the receipt key is added under the hub's id and the relay
// signs with it; a second run reuses everything; a hub without webhooks (404 or a deprecation notice)
// means pull mode; the prefix reported is the one the relay learned; status says whether receipts are
// accepted, when it had to refresh, and what other clients of the agent did.
import { createServer } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { draftEnvelope, signEnvelope } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import type { AgentSettings } from "../../local-agent/settings.ts";
import { saveSettings } from "../../local-agent/settings.ts";
import { startRegistryHub } from "../support/node/registry-hub.ts";
import type { RegistryHub, RegistryHubOptions } from "../support/node/registry-hub.ts";
import { ownerCall, postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();
const hubs: RegistryHub[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

const read = (home: AgentHome): AgentSettings => JSON.parse(readFileSync(home.settingsPath, "utf8")) as AgentSettings;

/** An agent claimed on the real relay by `init`, its settings pointed at a fresh fake hub. */
async function agentWithHub(options: RegistryHubOptions = {}): Promise<{ home: AgentHome; hub: RegistryHub }> {
  const hub = await startRegistryHub(options);
  hubs.push(hub);
  const { home } = await fixture.setUp("Bob");
  saveSettings(home.settingsPath, { ...home.settings, hub_url: hub.url });
  return { home, hub };
}

/** The relay's view of the inbox's hub link (GET /inbox/{id}/hub); null if it answers otherwise. */
async function relayHubView(home: AgentHome): Promise<Record<string, unknown> | null> {
  const answer = await ownerCall(fixture.relay().url, home, "GET", "/hub");
  return answer.status === 200 ? answer.body : null;
}

/** A signed message from a stranger known to the hub, carried in a webhook body as 1.x hubs do; resolves once its ack reached the hub. */
async function hookCarriedMessage(home: AgentHome, hub: RegistryHub): Promise<Envelope> {
  const sender = await newIdentity();
  hub.addAgent(sender.publicKey, sender.keyId);
  const envelope = await signEnvelope(await draftEnvelope({ from: sender.agentId, to: home.settings.agent_id, type: "message", payload: { text: "hi" } }), sender.keyId, sender.sign);
  const posted = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: JSON.stringify(envelope) }));
  expect(posted.status, JSON.stringify(posted.body)).toBe(202);
  await waitUntil("the relay's ack at the hub", () => hub.receipts.some((r) => r.envelope.reply_to === envelope.msg_id));
  return envelope;
}

const register = (home: AgentHome, ...args: string[]) => runCli(["hub", "register", ...args], home.env, 30_000);

describe("clawrelay hub register", () => {
  it("from scratch: JWT by register+verify, receipt key under the hub's id, the token handed to the relay, endpoint active, the prefix learned from the probes", async () => {
    const { home, hub } = await agentWithHub();
    const before = home.settings;
    const result = await register(home);
    expect(result.stderr).toBe("");
    expect(result.code, result.stdout).toBe(0);

    const after = read(home);
    const agent = hub.agents.get(before.agent_id)!;
    expect(agent).toBeDefined();
    // The hub assigned both key ids; the settings now hold them.
    const main = agent.keys.get(after.key.key_id)!;
    const receipt = agent.keys.get(after.receipt_key.key_id)!;
    expect(main).toMatchObject({ pubkey: before.key.public_key, state: "active" });
    expect(receipt).toMatchObject({ pubkey: before.receipt_key.public_key, state: "active" });
    expect(after.receipt_key.key_id).not.toBe(before.receipt_key.key_id);
    expect(after.receipt_key.private_key).toBe(before.receipt_key.private_key);
    // No --prefix: the relay learned it from the hub's probes, and that is what is reported and saved.
    expect(after.hub).toMatchObject({ mode: "webhook", prefix: "agentgram", prefix_source: "learned from the hub's probes", endpoint_state: "active" });
    expect(agent.endpoint).toMatchObject({ url: `${fixture.relay().url}/inbox/${before.agent_id}/hooks`, webhook_token: before.webhook_token, state: "active" });
    expect(hub.calls).toContain(`POST /registry/agents/${before.agent_id}/endpoints/test`);

    expect(result.stdout).toContain("[1/7] hub token: from registering the main key");
    expect(result.stdout).toContain(`[2/7] receipt key: added as ${after.receipt_key.key_id} (the hub's id)`);
    expect(result.stdout).toContain(`[3/7] relay: claim accepted — the inbox signs receipts as ${after.receipt_key.key_id}`);
    expect(result.stdout).toContain("the relay: took it");
    expect(result.stdout).toContain(`registered (${agent.endpoint!.endpoint_id}): active`);
    expect(result.stdout).toMatch(/\/agentgram_inbox\/wake {2}200 ok/);
    expect(result.stdout).toContain("prefix: agentgram, learned from the hub's probes");
    expect(result.stdout).toContain("403 NOT_IN_CONTACTS");
    expect(result.stdout).toContain(`curl -X PATCH ${hub.url}/registry/agents/${before.agent_id}/policy -H "Authorization: Bearer $TOKEN"`);
    for (const secret of [before.key.private_key, before.receipt_key.private_key, before.webhook_token!]) expect(result.stdout).not.toContain(secret);
    expect(hub.issued().length).toBeGreaterThan(0);
    for (const jwt of hub.issued()) expect(result.stdout).not.toContain(jwt);

    // The relay holds the CLI's token: it never refreshed one of its own (which would have ended it).
    const view = await relayHubView(home);
    expect(view).toMatchObject({ hub_url: hub.url, mode: "webhook", prefix: "agentgram", prefix_source: "learned from the hub's probes", receipt_key_id: after.receipt_key.key_id, token: { source: "owner" } });
    expect(hub.refreshes).toEqual([]);

    // The relay signs receipts under the hub's key id: a hook-carried envelope's ack reaches the hub and is accepted.
    const envelope = await hookCarriedMessage(home, hub);
    expect(hub.receipts[0]).toMatchObject({ status: 200, envelope: { type: "ack", from: before.agent_id, reply_to: envelope.msg_id, sig: { key_id: after.receipt_key.key_id } } });
  });

  it("run again: the relay's token is used (no refresh, nothing re-made); after another client refreshed, the sources are tried in order and only then one is minted", async () => {
    const { home, hub } = await agentWithHub();
    expect((await register(home)).code).toBe(0);
    const first = read(home);
    const agent = hub.agents.get(first.agent_id)!;
    const endpointId = agent.endpoint!.endpoint_id;
    const registrations = hub.calls.filter((c) => c === "POST /registry/agents").length;

    const again = await register(home);
    expect(again.stderr).toBe("");
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toContain("[1/7] hub token: from the relay's token (got by hub register)");
    expect(again.stdout).toContain("the relay: holds this token already");
    expect(again.stdout).toContain(`[2/7] receipt key: ${first.receipt_key.key_id} is already an active key of ${first.agent_id} at the hub (reused)`);
    expect(hub.refreshes).toEqual([]);
    const second = read(home);
    expect(second.key).toEqual(first.key);
    expect(second.receipt_key).toEqual(first.receipt_key);
    expect(agent.keys.size).toBe(2);
    expect(agent.endpoint!.endpoint_id).toBe(endpointId);
    expect(hub.calls.filter((c) => c === "POST /registry/agents").length).toBe(registrations);

    // A minute later (the hub's clock: the relay's token and the next refresh are never minted in the same
    // second, which would make them the same token, as on the hub), another client of the agent refreshes:
    // every token held so far is dead.
    hub.advanceClock(60_000);
    const other = hub.mint(first.agent_id, 86_400 + 120);
    const third = await register(home, "--agentline-token", "not.a-valid.jwt");
    expect(third.code, third.stdout + third.stderr).toBe(0);
    const refused = third.stdout.indexOf("the hub refused the JWT from the relay's token");
    const refusedSupplied = third.stdout.indexOf("the hub refused the JWT from --agentline-token");
    expect(refused).toBeGreaterThan(0);
    expect(refusedSupplied).toBeGreaterThan(refused);
    expect(third.stdout).toContain(`[1/7] hub token: from a token refresh signed by the main key ${first.key.key_id} (it ends every older token of ${first.agent_id})`);
    expect(hub.refreshes).toEqual([{ agent_id: first.agent_id, key_id: first.key.key_id }]);
    // The relay got the new one, and it is the hub's current token.
    const view = (await relayHubView(home)) as { token: { expires_at: number } };
    expect(hub.currentToken(first.agent_id)).not.toBe(other.agent_token);
    expect(view.token.expires_at).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 86_000);
    expect(third.stdout).toContain("the relay: took it");
  });

  it("a hub without webhook routes (404): switches to pull mode; the relay pulls with the handed token and never refreshes its own", async () => {
    const { home, hub } = await agentWithHub({ webhooks: "gone" });
    const result = await register(home);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain("it has no webhook delivery; switching to pull mode");
    expect(result.stdout).toContain("claim sent again with hub mode pull");
    expect(result.stdout).toContain("prefix: botcord, default for a pulling link");
    const settings = read(home);
    expect(settings.hub).toMatchObject({ mode: "pull", prefix: "botcord", prefix_source: "default for a pulling link" });
    expect(settings.hub?.endpoint_state).toBeUndefined();
    expect(hub.agents.get(settings.agent_id)!.keys.get(settings.receipt_key.key_id)?.state).toBe("active");
    await waitUntil("the relay's first pull", async () => ((await relayHubView(home))?.last_pull as { ok?: boolean } | null)?.ok === true);
    expect(await relayHubView(home)).toMatchObject({ mode: "pull", prefix: "botcord", receipt_key_id: settings.receipt_key.key_id, token: { source: "owner" } });
    expect(hub.refreshes).toEqual([]);
  });

  it("today's hub (endpoints deprecated: probed, 201, Deprecation and Warning 299): pull mode, the prefix the probes taught the relay", async () => {
    const { home, hub } = await agentWithHub({ webhooks: "deprecated", prefix: "botcord" });
    const result = await register(home);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('the hub marks webhook delivery deprecated (Warning: 299 BotCord "Webhook endpoint delivery is deprecated; use /hub/ws + /hub/inbox"): it pushes nothing; switching to pull mode');
    expect(result.stdout).toContain("prefix: botcord, learned from the hub's probes");
    expect(read(home).hub).toMatchObject({ mode: "pull", prefix: "botcord", prefix_source: "learned from the hub's probes" });
    // The probes ran once, at registration; no dry run follows on a hub that pushes nothing.
    expect(hub.calls.filter((c) => c.endsWith("/endpoints/test"))).toEqual([]);
    expect(await relayHubView(home)).toMatchObject({ mode: "pull", prefix: "botcord", prefix_source: "learned from the hub's probes", token: { source: "owner" } });
    expect(hub.refreshes).toEqual([]);
  });

  it("--mode pull skips the endpoint; --prefix botcord is kept by later runs; --open opens a contacts_only policy", async () => {
    const { home, hub } = await agentWithHub();
    const result = await register(home, "--mode", "pull", "--prefix", "botcord", "--open");
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain("[4/7] endpoint: skipped (--mode pull; the relay pulls from the hub's inbox)");
    expect(result.stdout).toContain("was contacts_only, now open (--open)");
    const settings = read(home);
    expect(settings.hub).toMatchObject({ mode: "pull", prefix: "botcord", prefix_source: "set" });
    expect(hub.agents.get(settings.agent_id)!.policy).toBe("open");
    expect(hub.calls.some((c) => c.includes("/endpoints"))).toBe(false);
    // A later run without --prefix keeps botcord.
    expect((await register(home, "--mode", "pull")).stdout).toContain("prefix: botcord, set");
  });

  it("uses a valid token from the Agentline credentials file, and says so when the agent id is taken at the hub", async () => {
    const { home, hub } = await agentWithHub();
    hub.addAgent(home.settings.key.public_key, home.settings.key.key_id);
    const dir = join(home.dir, ".agentline", "credentials");
    mkdirSync(dir, { recursive: true });
    const minted = hub.mint(home.settings.agent_id);
    const file = join(dir, `${home.settings.agent_id}.json`);
    writeFileSync(file, JSON.stringify({ hub_url: hub.url, agent_id: home.settings.agent_id, key_id: home.settings.key.key_id, private_key: home.settings.key.private_key, token: minted.agent_token, token_expires_at: minted.expires_at }));
    const result = await register(home);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`[1/7] hub token: from ${file}; valid until ${new Date(minted.expires_at * 1000).toISOString()}`);
    expect(result.stdout).not.toContain(minted.agent_token);
    expect(hub.calls).not.toContain("POST /registry/agents");
    expect(hub.refreshes).toEqual([]);

    const other = await agentWithHub();
    await other.hub.squat(other.home.settings.agent_id);
    const taken = await register(other.home);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`the hub says ${other.home.settings.agent_id} is already registered with another key (409`);
  });
});

describe("clawrelay hub status", () => {
  it("before registering: says so; after: keys active, endpoint, policy and the verdict; --json without secrets", async () => {
    const { home, hub } = await agentWithHub();
    const before = await runCli(["hub", "status"], home.env);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain("verdict: not registered with the hub yet — run clawrelay hub register");

    expect((await register(home)).code).toBe(0);
    const settings = read(home);
    const status = await runCli(["hub", "status"], home.env);
    expect(status.stderr).toBe("");
    expect(status.code, status.stdout).toBe(0);
    expect(status.stdout).toContain("hub's view (JWT from the relay's token (got by hub register)");
    expect(status.stdout).toContain("its hub token: from hub register, valid until");
    expect(status.stdout).not.toContain("REFRESHED");
    expect(status.stdout).toContain(`main key ${settings.key.key_id}: active`);
    expect(status.stdout).toContain(`receipt key ${settings.receipt_key.key_id}: active`);
    expect(status.stdout).toContain("endpoint: endpoint_id ep_");
    expect(status.stdout).toContain("state active");
    expect(status.stdout).toContain("message policy: contacts_only");
    expect(status.stdout).toMatch(/verdict: (receipts are accepted by the hub|no receipt sent yet; the receipt key k_\w+ is active at the hub)/);
    expect(status.stdout).not.toContain(settings.webhook_token!);
    expect(hub.refreshes).toEqual([]);

    const json = await runCli(["hub", "status", "--json"], home.env);
    const report = JSON.parse(json.stdout) as { hub: { keys: { receipt: { state: string } }; message_policy: string; token: { minted: boolean } }; verdict: { ok: boolean } };
    expect(report.hub.keys.receipt.state).toBe("active");
    expect(report.hub.message_policy).toBe("contacts_only");
    expect(report.hub.token.minted).toBe(false);
    expect(report.verdict.ok).toBe(true);
    for (const secret of [settings.key.private_key, settings.receipt_key.private_key, settings.webhook_token!, ...hub.issued()]) expect(json.stdout).not.toContain(secret);

    // A receipt the hub accepted: the relay's view says so, and so does the verdict.
    await hookCarriedMessage(home, hub);
    await waitUntil("the relay to record the receipt", async () => ((await relayHubView(home))?.last_receipt as { ok?: boolean } | null)?.ok === true);
    const accepted = await runCli(["hub", "status"], home.env);
    expect(accepted.stdout).toContain("verdict: receipts are accepted by the hub");

    // The hub revokes the receipt key: status says receipts will be refused and what to run.
    hub.agents.get(settings.agent_id)!.keys.get(settings.receipt_key.key_id)!.state = "revoked";
    const revoked = await runCli(["hub", "status"], home.env);
    expect(revoked.code).toBe(1);
    expect(revoked.stdout).toContain(`verdict: receipts will be refused: the hub does not hold the receipt key ${settings.receipt_key.key_id} as an active key`);
    // And register makes a new receipt key, since a revoked one never comes back.
    const repaired = await register(home);
    expect(repaired.stdout).toContain("was revoked at the hub, so a new one was made");
    expect(read(home).receipt_key.private_key).not.toBe(settings.receipt_key.private_key);
  });

  it("pull mode: the pull schedule and its idle cost; another client that took the token, one that likely pulls too; status refreshes only when nothing held works, and says so — doctor says the same", async () => {
    const { home, hub } = await agentWithHub();
    expect((await register(home, "--mode", "pull")).code).toBe(0);
    const settings = read(home);
    const id = settings.agent_id;

    // Another client refreshes; the relay's next pull meets a 401 on a token that had not expired.
    hub.mint(id, 86_400 + 120);
    const pulled = await ownerCall(fixture.relay().url, home, "POST", "/hub/pull");
    expect(pulled.status, JSON.stringify(pulled.body)).toBe(200);
    await waitUntil("the relay to count the lost token", async () => ((await relayHubView(home))?.token_lost as { count?: number } | null)?.count === 1);

    // Another client pulls: records addressed to us taken at the hub since the link was made, none of them by the relay.
    const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
    const record = (n: number, state: string, msAgo: number, from = "ag_0123456789ab", to = id) => ({ hub_msg_id: `h_${n}`, envelope: { from, to, type: "message" }, room_id: null, state, created_at: at(msAgo) });
    hub.history.push(
      record(1, "delivered", 86_400_000 * 2), // before the link was made: not counted
      record(2, "delivered", 0),
      record(3, "acked", 0),
      record(4, "processing", 0), // a lease this young may be a pull in progress: not counted
      record(5, "queued", 0), // not taken by anyone yet
      record(6, "delivered", 0, id, "ag_0123456789ab"), // one we sent
    );
    const status = await runCli(["hub", "status"], home.env);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(status.stdout).toMatch(/pulls: next \S+; while nothing arrives the wait doubles from 15 s up to every 120 s/);
    expect(status.stdout).toContain("idle cost a day: 720 alarm runs, 721 hub requests, 721 rows written");
    expect(status.stdout).toMatch(/WARNING: another client took the hub token: the hub refused the relay's token 1 time\(s\) before it expired, last at 20\d\d-/);
    expect(status.stdout).toContain("fix: link that client's credentials file");
    expect(status.stdout).toContain("WARNING: another client likely pulls this inbox: 2 message(s) addressed to this agent");
    expect(status.stdout).toContain("e.g. h_3, h_2");
    expect(status.stdout).not.toContain("REFRESHED");

    const doctor = await runCli(["doctor"], home.env);
    expect(doctor.stdout).toContain("[WARN] another client took the hub token");
    expect(doctor.stdout).toContain("[WARN] another client likely pulls this inbox: 2 message(s)");
    const refreshesBefore = hub.refreshes.length;

    // Every token held is dead now: status has to refresh, says so, and hands the new one over.
    hub.mint(id, 86_400 + 300);
    const forced = await runCli(["hub", "status"], home.env);
    expect(forced.stdout).toContain("REFRESHED: neither the relay nor a credentials file held a token that works, so hub status made one — that ended every older token of this agent");
    expect(forced.stdout).toContain("the relay: took it");
    expect(hub.refreshes.slice(refreshesBefore)).toEqual([{ agent_id: id, key_id: settings.key.key_id }]);
    const calm = await runCli(["hub", "status"], home.env);
    expect(calm.stdout).not.toContain("REFRESHED");
    expect(hub.refreshes.length).toBe(refreshesBefore + 1);
    // Doctor never mints one.
    hub.mint(id, 86_400 + 400);
    const quiet = await runCli(["doctor"], home.env);
    expect(quiet.stdout).toContain("another client pulling this inbox: not checked (no hub token that works");
    expect(hub.refreshes.length).toBe(refreshesBefore + 1);
  });
});

/** The relay as it was before the claim's `hub` field and GET /inbox/{id}/hub: both refused as that relay did. */
async function olderRelay(target: string) {
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const send = (status: number, code: string, message: string) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code, message } }));
      };
      if (req.method === "PUT" && body.length > 0 && "hub" in (JSON.parse(body.toString("utf8")) as object)) {
        return send(400, "invalid_claim", 'the claim body has unknown field "hub"; known: keys, receipt_key, hub_url, policy, rate_per_minute, limits, rotate_webhook_token');
      }
      if (req.method === "GET" && /^\/inbox\/[^/]+\/hub$/.test(req.url ?? "")) return send(404, "not_found", `no route for GET ${req.url}`);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name.startsWith("x-clawrelay-") || name === "content-type")) as Record<string, string>;
      const answer = await fetch(target + (req.url ?? "/"), { method: req.method ?? "GET", headers, ...(body.length > 0 ? { body } : {}) });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await answer.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  return { url: `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("an older relay (no claim field hub, no GET /inbox/{id}/hub)", () => {
  it("register still hands over the receipt key and warns; status says the relay is older", async () => {
    const { home, hub } = await agentWithHub();
    const old = await olderRelay(fixture.relay().url);
    fixture.cleanups.push(() => old.close());
    saveSettings(home.settingsPath, { ...read(home), relay_url: old.url });
    const result = await register(home);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`WARNING: the relay at ${old.url} is older and does not take the claim's "hub" field`);
    expect(result.stdout).toContain("Next: fix what is marked above");
    await hookCarriedMessage(home, hub);
    expect(hub.receipts.at(-1)).toMatchObject({ status: 200, envelope: { sig: { key_id: read(home).receipt_key.key_id } } });
    const status = await runCli(["hub", "status"], home.env);
    expect(status.stdout).toContain(`relay's view: unavailable — the relay at ${old.url} is older: it has no GET /inbox/${home.settings.agent_id}/hub`);
    expect(status.stdout).toContain("(the relay's own view is unavailable)");
  });
});

describe("clawrelay doctor and the hub's prefix", () => {
  const mappingLines = (stdout: string) => stdout.split("\n").filter((line) => line.includes("hooks.mappings"));

  it("botcord mappings pass on their own; once hub register chose agentgram they are a WARN naming the fix", async () => {
    const { home } = await fixture.setUp("Bob");
    const config = home.env.OPENCLAW_CONFIG_PATH;
    writeFileSync(config, readFileSync(config, "utf8").replaceAll("agentgram_inbox/", "botcord_inbox/"));
    const plain = await runCli(["doctor"], home.env);
    expect(mappingLines(plain.stdout)).toEqual(["[OK] hooks.mappings has botcord_inbox/agent", "[OK] hooks.mappings has botcord_inbox/wake"]);
    expect(plain.code, plain.stdout).toBe(0);

    saveSettings(home.settingsPath, { ...home.settings, hub: { mode: "webhook", prefix: "agentgram", registered_at: Date.now(), endpoint_state: "active" } });
    const chosen = await runCli(["doctor"], home.env);
    expect(mappingLines(chosen.stdout)).toEqual([
      "[WARN] hooks.mappings has botcord_inbox/agent and …/wake, but the hub was registered with prefix agentgram: its webhooks will get 404",
    ]);
    expect(chosen.stdout).toContain("fix: add mappings for agentgram_inbox/agent and agentgram_inbox/wake, or run clawrelay hub register --prefix botcord");

    saveSettings(home.settingsPath, { ...home.settings, hub: { mode: "webhook", prefix: "botcord", registered_at: Date.now() } });
    expect(mappingLines((await runCli(["doctor"], home.env)).stdout)).toEqual(["[OK] hooks.mappings has botcord_inbox/agent", "[OK] hooks.mappings has botcord_inbox/wake"]);
  });
});
