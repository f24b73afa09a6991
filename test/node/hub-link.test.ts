// `clawrelay hub register` / `hub status` as a user runs them (the real CLI), against the real relay and
// a small fake Agentline hub written here: registration and its challenge, token refresh, a second key
// with a hub-assigned id, endpoints with the two probes, the endpoint test and the message policy — each
// signature checked with node:crypto. Proves: the JWT comes from the agent's own key, the receipt key is
// added under the hub's id and saved, the relay signs receipts with it, a second run reuses everything,
// a hub without webhooks means pull mode, and status says whether receipts are accepted.
import { createHash, createPublicKey, randomBytes, verify } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { draftEnvelope, signEnvelope, signingInput } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import type { AgentSettings } from "../../local-agent/settings.ts";
import { saveSettings } from "../../local-agent/settings.ts";
import { ownerCall, postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

interface FakeKey {
  key_id: string;
  pubkey: string;
  state: "pending" | "active" | "revoked";
  challenge?: string;
}

interface FakeAgent {
  agent_id: string;
  display_name: string;
  keys: Map<string, FakeKey>;
  policy: string;
  endpoint?: { endpoint_id: string; url: string; webhook_token: string; state: string };
}

interface FakeHubOptions {
  /** false: a hub of the later, pull-only code (no /endpoints routes). */
  webhooks?: boolean;
  prefix?: string;
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");
const agentIdOf = (pubkey: string) => "ag_" + createHash("sha256").update(pubkey.slice("ed25519:".length)).digest("hex").slice(0, 12);

function signedBy(pubkey: string, message: Buffer, sig: unknown): boolean {
  const x = Buffer.from(pubkey.slice("ed25519:".length), "base64");
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: b64url(x) }, format: "jwk" });
  return typeof sig === "string" && verify(null, message, key, Buffer.from(sig, "base64"));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

async function startFakeHub(options: FakeHubOptions = {}) {
  const prefix = options.prefix ?? "agentgram";
  const agents = new Map<string, FakeAgent>();
  const tokens = new Map<string, string>(); // JWT -> agent id
  const nonces = new Set<string>();
  const calls: string[] = [];
  const receipts: { status: number; envelope: Envelope }[] = [];

  const mint = (agentId: string) => {
    const exp = Math.floor(Date.now() / 1000) + 86_400;
    const token = [b64url(Buffer.from('{"alg":"HS256"}')), b64url(Buffer.from(JSON.stringify({ agent_id: agentId, exp }))), b64url(randomBytes(32))].join(".");
    tokens.set(token, agentId);
    return { agent_token: token, expires_at: exp };
  };
  const newKey = (pubkey: string): FakeKey => ({ key_id: "k_" + randomBytes(6).toString("hex"), pubkey, state: "pending", challenge: randomBytes(32).toString("base64") });
  const probe = async (url: string, token: string) =>
    Promise.all(
      ["agent", "wake"].map(async (leaf) => {
        const path = `/${prefix}_inbox/${leaf}`;
        const res = await fetch(url + path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: '{"probe": true}' }).catch(() => null);
        await res?.body?.cancel();
        const status = res?.status ?? 0;
        const ok = status >= 200 && status < 300;
        return { path, status, ok, hint: ok ? "" : status === 401 ? "webhook_token mismatch" : "not reachable" };
      }),
    );

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const url = new URL(req.url ?? "/", "http://hub");
    const p = url.pathname.split("/").filter(Boolean);
    const method = req.method ?? "GET";
    calls.push(`${method} ${url.pathname}`);
    const body = method === "GET" ? {} : await readJson(req);
    if (method === "POST" && url.pathname === "/hub/receipt") {
      const envelope = body as unknown as Envelope;
      const key = agents.get(envelope.from)?.keys.get(envelope.sig.key_id);
      const good = key?.state === "active" && signedBy(key.pubkey, Buffer.from(signingInput(envelope)), envelope.sig.value);
      receipts.push({ status: good ? 200 : 400, envelope });
      return good ? send(200, { received: true }) : send(400, { detail: key ? "Signature verification failed" : "Signing key not found or not active" });
    }
    if (p[0] !== "registry" || p[1] !== "agents") return send(404, { detail: "Not Found" });
    if (method === "POST" && p.length === 2) {
      const pubkey = String(body.pubkey);
      const id = agentIdOf(pubkey);
      const existing = agents.get(id);
      if (existing && ![...existing.keys.values()].some((k) => k.pubkey === pubkey)) return send(409, { detail: "Agent id already registered" });
      const agent = existing ?? { agent_id: id, display_name: String(body.display_name), keys: new Map(), policy: "contacts_only" };
      agents.set(id, agent);
      const key = [...agent.keys.values()].find((k) => k.pubkey === pubkey) ?? newKey(pubkey);
      key.challenge = randomBytes(32).toString("base64");
      agent.keys.set(key.key_id, key);
      return send(201, { agent_id: id, key_id: key.key_id, challenge: key.challenge });
    }
    const agent = agents.get(p[2] ?? "");
    if (!agent) return send(404, { detail: "Agent not found" });
    const rest = p.slice(3).join("/");
    if (method === "GET" && p[3] === "keys" && p.length === 5) {
      const key = agent.keys.get(p[4]!);
      return key ? send(200, { key_id: key.key_id, pubkey: key.pubkey, state: key.state, created_at: "2026-01-01T00:00:00Z" }) : send(404, { detail: "Key not found" });
    }
    if (method === "POST" && rest === "verify") {
      const key = agent.keys.get(String(body.key_id));
      if (!key?.challenge || key.challenge !== body.challenge) return send(400, { detail: "Unknown or used challenge" });
      if (!signedBy(key.pubkey, Buffer.from(key.challenge, "base64"), body.sig)) return send(400, { detail: "Signature verification failed" });
      key.state = "active";
      delete key.challenge;
      return send(200, mint(agent.agent_id));
    }
    if (method === "POST" && rest === "token/refresh") {
      const key = agent.keys.get(String(body.key_id));
      if (key?.state !== "active") return send(401, { detail: "Key not active" });
      if (nonces.has(String(body.nonce))) return send(409, { detail: "Nonce already used" });
      nonces.add(String(body.nonce));
      if (!signedBy(key.pubkey, Buffer.from(String(body.nonce), "base64"), body.sig)) return send(401, { detail: "Signature verification failed" });
      return send(200, mint(agent.agent_id));
    }
    if (tokens.get((req.headers.authorization ?? "").replace(/^Bearer /, "")) !== agent.agent_id) return send(401, { detail: "Invalid or expired token" });
    if (method === "POST" && rest === "keys") {
      const key = newKey(String(body.pubkey));
      agent.keys.set(key.key_id, key);
      return send(201, { key_id: key.key_id, challenge: key.challenge });
    }
    if (rest.startsWith("endpoints") && options.webhooks === false) return send(404, { detail: "Not Found" });
    if (method === "POST" && rest === "endpoints") {
      const results = await probe(String(body.url), String(body.webhook_token));
      const previous = agent.endpoint;
      const endpoint_id = previous && previous.url === body.url ? previous.endpoint_id : "ep_" + randomBytes(6).toString("hex");
      agent.endpoint = { endpoint_id, url: String(body.url), webhook_token: String(body.webhook_token), state: results.every((r) => r.ok) ? "active" : "unverified" };
      return send(200, { endpoint_id, url: agent.endpoint.url, state: agent.endpoint.state });
    }
    if (method === "POST" && rest === "endpoints/test") {
      const results = await probe(String(body.url), String(body.webhook_token));
      return send(200, { all_ok: results.every((r) => r.ok), results });
    }
    if (method === "GET" && rest === "endpoints/status") {
      const e = agent.endpoint;
      return e ? send(200, { endpoint_id: e.endpoint_id, url: e.url, state: e.state, webhook_token: e.webhook_token }) : send(404, { detail: "No endpoint" });
    }
    if (rest === "policy" && method === "GET") return send(200, { message_policy: agent.policy });
    if (rest === "policy" && method === "PATCH") {
      agent.policy = String(body.message_policy);
      return send(200, { message_policy: agent.policy });
    }
    return send(404, { detail: "Not Found" });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: err.message }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = address && typeof address !== "string" ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    agents,
    calls,
    receipts,
    /** An agent registered elsewhere with another key under `agentId` (so registration answers 409). */
    squat(agentId: string) {
      agents.set(agentId, { agent_id: agentId, display_name: "squatter", keys: new Map([["k_other", { key_id: "k_other", pubkey: newIdentity().publicKey, state: "active" }]]), policy: "open" });
    },
    /** A sender known to the hub, so the relay can look its key up. */
    addAgent(pubkey: string, keyId: string) {
      agents.set(agentIdOf(pubkey), { agent_id: agentIdOf(pubkey), display_name: "sender", keys: new Map([[keyId, { key_id: keyId, pubkey, state: "active" }]]), policy: "open" });
    },
    mint,
    issued: () => [...tokens.keys()],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type FakeHub = Awaited<ReturnType<typeof startFakeHub>>;

const fixture = relayFixture();
const hubs: FakeHub[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

const read = (home: AgentHome): AgentSettings => JSON.parse(readFileSync(home.settingsPath, "utf8")) as AgentSettings;

/** An agent claimed on the real relay by `init`, its settings pointed at a fresh fake hub. */
async function agentWithHub(options: FakeHubOptions = {}): Promise<{ home: AgentHome; hub: FakeHub }> {
  const hub = await startFakeHub(options);
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
async function hookCarriedMessage(home: AgentHome, hub: FakeHub): Promise<Envelope> {
  const sender = newIdentity();
  hub.addAgent(sender.publicKey, sender.keyId);
  const envelope = await signEnvelope(draftEnvelope({ from: sender.agentId, to: home.settings.agent_id, type: "message", payload: { text: "hi" } }), sender.keyId, sender.sign);
  const posted = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: JSON.stringify(envelope) }));
  expect(posted.status, JSON.stringify(posted.body)).toBe(202);
  await waitUntil("the relay's ack at the hub", () => hub.receipts.some((r) => r.envelope.reply_to === envelope.msg_id));
  return envelope;
}

const register = (home: AgentHome, ...args: string[]) => runCli(["hub", "register", ...args], home.env, 30_000);

describe("clawrelay hub register", () => {
  it("from scratch: JWT by register+verify, receipt key added under the hub's id and saved, claim sent, endpoint active, policy explained", async () => {
    const { home, hub } = await agentWithHub();
    const before = home.settings;
    const result = await register(home);
    expect(result.stderr).toBe("");
    expect(result.code, result.stdout).toBe(0);
    console.log(`--- clawrelay hub register (first run) ---\n${result.stdout}`);

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
    expect(after.hub).toMatchObject({ mode: "webhook", prefix: "agentgram", endpoint_state: "active" });
    expect(agent.endpoint).toMatchObject({ url: `${fixture.relay().url}/inbox/${before.agent_id}/hooks`, webhook_token: before.webhook_token, state: "active" });
    expect(hub.calls).toContain(`POST /registry/agents/${before.agent_id}/endpoints/test`);

    expect(result.stdout).toContain("[1/6] hub token: from registering the main key");
    expect(result.stdout).toContain(`[2/6] receipt key: added as ${after.receipt_key.key_id} (the hub's id)`);
    expect(result.stdout).toContain(`[3/6] relay: claim accepted — the inbox signs receipts as ${after.receipt_key.key_id}`);
    expect(result.stdout).toContain(`registered (${agent.endpoint!.endpoint_id}): active`);
    expect(result.stdout).toMatch(/\/agentgram_inbox\/wake {2}200 ok/);
    expect(result.stdout).toContain("403 NOT_IN_CONTACTS");
    expect(result.stdout).toContain(`curl -X PATCH ${hub.url}/registry/agents/${before.agent_id}/policy -H "Authorization: Bearer $TOKEN"`);
    for (const secret of [before.key.private_key, before.receipt_key.private_key, before.webhook_token!]) expect(result.stdout).not.toContain(secret);
    expect(hub.issued().length).toBeGreaterThan(0);
    for (const jwt of hub.issued()) expect(result.stdout).not.toContain(jwt);

    // The relay signs receipts under the hub's key id: a hook-carried envelope's ack reaches the hub and is accepted.
    const envelope = await hookCarriedMessage(home, hub);
    expect(hub.receipts[0]).toMatchObject({ status: 200, envelope: { type: "ack", from: before.agent_id, reply_to: envelope.msg_id, sig: { key_id: after.receipt_key.key_id } } });

    expect(await relayHubView(home)).toMatchObject({ hub_url: hub.url, mode: "webhook", prefix: "agentgram", receipt_key_id: after.receipt_key.key_id });
  });

  it("run twice: the second run refreshes the token, reuses both keys and the endpoint; a bad --agentline-token falls back to the key", async () => {
    const { home, hub } = await agentWithHub();
    expect((await register(home)).code).toBe(0);
    const first = read(home);
    const agent = hub.agents.get(first.agent_id)!;
    const endpointId = agent.endpoint!.endpoint_id;
    const registrations = hub.calls.filter((c) => c === "POST /registry/agents").length;

    const again = await register(home, "--agentline-token", "not.a-valid.jwt");
    expect(again.stderr).toBe("");
    expect(again.code, again.stdout).toBe(0);
    console.log(`--- clawrelay hub register (second run) ---\n${again.stdout}`);
    const second = read(home);
    expect(second.key).toEqual(first.key);
    expect(second.receipt_key).toEqual(first.receipt_key);
    expect(agent.keys.size).toBe(2);
    expect(agent.endpoint!.endpoint_id).toBe(endpointId);
    expect(hub.calls.filter((c) => c === "POST /registry/agents").length).toBe(registrations);
    expect(again.stdout).toContain(`[2/6] receipt key: ${first.receipt_key.key_id} is already an active key of ${first.agent_id} at the hub (reused)`);
    expect(again.stdout).toContain(`the hub refused the JWT from --agentline-token on POST /registry/agents/${first.agent_id}/endpoints (401`);
    expect(hub.calls).toContain(`POST /registry/agents/${first.agent_id}/token/refresh`);
  });

  it("a hub without webhook delivery (endpoints 404): switches to pull mode and tells the relay", async () => {
    const { home, hub } = await agentWithHub({ webhooks: false });
    const result = await register(home);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain("it has no webhook delivery; switching to pull mode");
    expect(result.stdout).toContain("claim sent again with hub mode pull");
    const settings = read(home);
    expect(settings.hub).toMatchObject({ mode: "pull", prefix: "agentgram" });
    expect(settings.hub?.endpoint_state).toBeUndefined();
    expect(hub.agents.get(settings.agent_id)!.keys.get(settings.receipt_key.key_id)?.state).toBe("active");
    expect(await relayHubView(home)).toMatchObject({ mode: "pull", receipt_key_id: settings.receipt_key.key_id });
  });

  it("--mode pull skips the endpoint; --prefix botcord is kept; --open opens a contacts_only policy", async () => {
    const { home, hub } = await agentWithHub();
    const result = await register(home, "--mode", "pull", "--prefix", "botcord", "--open");
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain("[4/6] endpoint: skipped (--mode pull");
    expect(result.stdout).toContain("was contacts_only, now open (--open)");
    const settings = read(home);
    expect(settings.hub).toMatchObject({ mode: "pull", prefix: "botcord" });
    expect(hub.agents.get(settings.agent_id)!.policy).toBe("open");
    expect(hub.calls.some((c) => c.includes("/endpoints"))).toBe(false);
    // A later run without --prefix keeps botcord.
    expect((await register(home, "--mode", "pull")).stdout).toContain("prefix botcord");
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
    expect(result.stdout).toContain(`[1/6] hub token: from ${file}; valid until ${new Date(minted.expires_at * 1000).toISOString()}`);
    expect(result.stdout).not.toContain(minted.agent_token);
    expect(hub.calls).not.toContain("POST /registry/agents");

    const other = await agentWithHub();
    other.hub.squat(other.home.settings.agent_id);
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
    console.log(`--- clawrelay hub status ---\n${status.stdout}`);
    expect(status.stderr).toBe("");
    expect(status.code, status.stdout).toBe(0);
    expect(status.stdout).toContain(`main key ${settings.key.key_id}: active`);
    expect(status.stdout).toContain(`receipt key ${settings.receipt_key.key_id}: active`);
    expect(status.stdout).toContain("endpoint: endpoint_id ep_");
    expect(status.stdout).toContain("state active");
    expect(status.stdout).toContain("message policy: contacts_only");
    expect(status.stdout).toMatch(/verdict: (receipts are accepted by the hub|no receipt sent yet; the receipt key k_\w+ is active at the hub)/);
    expect(status.stdout).not.toContain(settings.webhook_token!);

    const json = await runCli(["hub", "status", "--json"], home.env);
    const report = JSON.parse(json.stdout) as { hub: { keys: { receipt: { state: string } }; message_policy: string }; verdict: { ok: boolean } };
    expect(report.hub.keys.receipt.state).toBe("active");
    expect(report.hub.message_policy).toBe("contacts_only");
    expect(report.verdict.ok).toBe(true);
    for (const secret of [settings.key.private_key, settings.receipt_key.private_key, settings.webhook_token!]) expect(json.stdout).not.toContain(secret);

    // A receipt the hub accepted: the relay's view says so, and so does the verdict.
    await hookCarriedMessage(home, hub);
    await waitUntil("the relay to record the receipt", async () => ((await relayHubView(home))?.last_receipt as { ok?: boolean } | null)?.ok === true);
    const accepted = await runCli(["hub", "status"], home.env);
    console.log(`--- clawrelay hub status (after a receipt) ---\n${accepted.stdout}`);
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
