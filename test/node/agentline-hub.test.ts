// The stand-in Agentline hub itself (test/support/node/agentline-hub.ts): its wire rules against the
// published test vector, registration and keys, token refresh, endpoint probes with both prefixes,
// flat webhooks and retries, the send checks, history, two-phase pull, and receipts. End-to-end tests
// lean on it as "the outside world", so it is held to the hub's rules here.
import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentlineHub } from "../support/node/agentline-hub.ts";
import type { AgentlineHub, AgentlineHubOptions, HubReply, HubTestAgent } from "../support/node/agentline-hub.ts";
import { agentIdFor, payloadHashOf, publicKeyText, signBytes, signEnvelope } from "../support/node/agentline-hub-wire.ts";
import type { Envelope } from "../support/node/agentline-hub-wire.ts";

const VECTOR_SEED = Buffer.from("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "base64");
const VECTOR_PUBKEY = "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=";
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function hubWith(options: AgentlineHubOptions): Promise<AgentlineHub> {
  const hub = await startAgentlineHub(options);
  cleanups.push(() => hub.close());
  return hub;
}

async function call(hub: AgentlineHub, method: string, path: string, body?: unknown, token?: string): Promise<HubReply> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(hub.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const nowSec = () => Math.floor(Date.now() / 1000);

/** An envelope signed by `agent` (its key unless `keyId` says otherwise), with any field overridden before signing. */
function signed(agent: HubTestAgent, to: string, fields: Partial<Omit<Envelope, "payload_hash" | "sig">> = {}, keyId = agent.keyId): Envelope {
  const base = { v: "a2a/0.1", msg_id: randomUUID(), ts: nowSec(), from: agent.agentId, to, type: "message", reply_to: null, ttl_sec: 3600, payload: { text: "hi" } };
  return signEnvelope(agent.seed, keyId, { ...base, ...fields });
}

interface Hit { path: string; auth: string | undefined; contentType: string | undefined; body: string }

/** A webhook receiver: `answer` picks each status (probes included); every request is kept in `hits`. */
async function startEndpoint(answer: (hit: Hit, index: number) => number = () => 200): Promise<{ url: string; hits: Hit[] }> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const hit = { path: req.url ?? "", auth: req.headers.authorization, contentType: req.headers["content-type"], body: Buffer.concat(chunks).toString("utf8") };
      hits.push(hit);
      res.writeHead(answer(hit, hits.length - 1), { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("endpoint did not get a TCP port");
  cleanups.push(() => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())));
  return { url: `http://127.0.0.1:${address.port}/hooks/abc`, hits };
}

const isProbe = (hit: Hit) => hit.body === JSON.stringify({ probe: true });

let hub: AgentlineHub;
beforeAll(async () => {
  hub = await hubWith({ retryDelaysMs: [20, 40] });
});

describe("wire rules", () => {
  it("match the published test vector", () => {
    expect(publicKeyText(VECTOR_SEED)).toBe(VECTOR_PUBKEY);
    expect(agentIdFor(VECTOR_PUBKEY)).toBe("ag_ff73a0647bbc");
    expect(payloadHashOf({ text: "hello" })).toBe("sha256:cbbbdcd27692344de5dbab3abcaba413fb0f45307267de7081401576df1cb176");
    expect(payloadHashOf({})).toBe("sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
    const fields = {
      v: "a2a/0.1", msg_id: "00000000-0000-4000-8000-000000000001", ts: 1_700_000_000, from: "ag_ff73a0647bbc", to: "ag_000000000000",
      type: "message", reply_to: null, ttl_sec: 3600, payload: { text: "hello" },
    };
    expect(signEnvelope(VECTOR_SEED, "k_x", fields).sig.value).toBe("5ic80ANuYcX5E9H7fs5gFmsOTrnaKXIzXUb7w0eCIg7F3LVwYT8ynW2lGYOjgNQKh9ZruLkYInWdli/aJs0xBA==");
  });
});

describe("registration", () => {
  it("derives the agent id from the key text, verifies a single-use challenge, and is idempotent", async () => {
    const first = await call(hub, "POST", "/registry/agents", { pubkey: VECTOR_PUBKEY, display_name: "Vector" });
    expect(first.status).toBe(201);
    const { agent_id, key_id, challenge } = first.body as { agent_id: string; key_id: string; challenge: string };
    expect(agent_id).toBe("ag_ff73a0647bbc");
    expect(key_id).toMatch(/^k_[0-9a-f]{12}$/);
    expect(Buffer.from(challenge, "base64")).toHaveLength(32);
    expect((await call(hub, "GET", `/registry/agents/${agent_id}/keys/${key_id}`)).body).toMatchObject({ key_id, pubkey: VECTOR_PUBKEY, state: "pending" });

    const verify = (c: string, sig: string) => call(hub, "POST", `/registry/agents/${agent_id}/verify`, { key_id, challenge: c, sig });
    expect(await verify(challenge, signBytes(randomBytes(32), Buffer.from(challenge, "base64")))).toMatchObject({ status: 401 });
    expect(await verify(randomBytes(32).toString("base64"), "x")).toMatchObject({ status: 404, body: { detail: "Challenge not found", retryable: false } });
    const ok = await verify(challenge, signBytes(VECTOR_SEED, Buffer.from(challenge, "base64")));
    expect(ok.status).toBe(200);
    const { agent_token, expires_at } = ok.body as { agent_token: string; expires_at: number };
    expect(Math.abs(expires_at - (nowSec() + 86_400))).toBeLessThanOrEqual(2);
    expect(await verify(challenge, signBytes(VECTOR_SEED, Buffer.from(challenge, "base64")))).toMatchObject({ status: 400, body: { detail: "Challenge already used" } });
    expect(hub.agents.get(agent_id)?.keys.get(key_id)?.state).toBe("active");
    expect(await call(hub, "GET", `/registry/agents/${agent_id}/policy`, undefined, agent_token)).toEqual({ status: 200, body: { message_policy: "contacts_only" } });

    const again = await call(hub, "POST", "/registry/agents", { pubkey: VECTOR_PUBKEY, display_name: "Vector" });
    expect(again.body).toMatchObject({ agent_id, key_id });
    expect((again.body as { challenge: string }).challenge).not.toBe(challenge);
    expect((await call(hub, "POST", "/registry/agents", { pubkey: "ed25519:short", display_name: "X" })).status).toBe(400);
  });

  it("adds a second key under a hub-assigned id, pending until its challenge is signed", async () => {
    const alice = await hub.createAgent("Alice");
    const bob = await hub.createAgent("Bob");
    hub.setPolicy(bob.agentId, "open");
    const seed2 = randomBytes(32);
    const path = `/registry/agents/${alice.agentId}/keys`;
    expect((await call(hub, "POST", path, { pubkey: publicKeyText(seed2) })).status).toBe(401);
    expect((await call(hub, "POST", path, { pubkey: publicKeyText(seed2) }, bob.token)).status).toBe(403);
    const added = await call(hub, "POST", path, { pubkey: publicKeyText(seed2) }, alice.token);
    expect(added.status).toBe(201);
    const { key_id, challenge } = added.body as { key_id: string; challenge: string };
    expect(key_id).toMatch(/^k_[0-9a-f]{12}$/);
    expect(key_id).not.toBe(alice.keyId);
    expect((await call(hub, "GET", `${path}/${key_id}`)).body).toMatchObject({ state: "pending", pubkey: publicKeyText(seed2) });
    const early = { ...alice, seed: seed2, keyId: key_id };
    expect(await call(hub, "POST", "/hub/send", signed(early, bob.agentId), alice.token)).toMatchObject({ status: 400, body: { detail: "Signing key not found or not active" } });

    const sig = signBytes(seed2, Buffer.from(challenge, "base64"));
    expect((await call(hub, "POST", `/registry/agents/${alice.agentId}/verify`, { key_id, challenge, sig })).status).toBe(200);
    expect((await call(hub, "GET", `${path}/${key_id}`)).body).toMatchObject({ state: "active" });
    expect((await call(hub, "GET", `${path}/${alice.keyId}`)).body).toMatchObject({ state: "active" });
    expect((await call(hub, "POST", "/hub/send", signed(early, bob.agentId), alice.token)).status).toBe(202);
    expect((await call(hub, "GET", `${path}/k_000000000000`)).status).toBe(404);
  });

  it("refreshes tokens with a signed nonce, once per nonce", async () => {
    const carol = await hub.createAgent("Carol");
    const path = `/registry/agents/${carol.agentId}/token/refresh`;
    const nonce = randomBytes(16).toString("base64");
    const sig = signBytes(carol.seed, Buffer.from(nonce, "base64"));
    const fresh = await call(hub, "POST", path, { key_id: carol.keyId, nonce, sig });
    expect(fresh.status).toBe(200);
    const token = (fresh.body as { agent_token: string }).agent_token;
    expect(token).not.toBe(carol.token);
    expect((await call(hub, "GET", `/registry/agents/${carol.agentId}/policy`, undefined, token)).status).toBe(200);
    expect(await call(hub, "POST", path, { key_id: carol.keyId, nonce, sig })).toMatchObject({ status: 409, body: { detail: "Nonce already used" } });

    const other = randomBytes(16).toString("base64");
    expect((await call(hub, "POST", path, { key_id: carol.keyId, nonce: other, sig })).status).toBe(401);
    expect((await call(hub, "POST", path, { key_id: "k_000000000000", nonce: other, sig })).status).toBe(404);
    const pending = await call(hub, "POST", `/registry/agents/${carol.agentId}/keys`, { pubkey: publicKeyText(randomBytes(32)) }, carol.token);
    const pendingId = (pending.body as { key_id: string }).key_id;
    expect((await call(hub, "POST", path, { key_id: pendingId, nonce: other, sig })).status).toBe(403);
  });

  it("refuses expired and unknown tokens with 401", async () => {
    const shortLived = await hubWith({ tokenTtlSec: 0 });
    const dave = await shortLived.createAgent("Dave");
    expect(await call(shortLived, "GET", `/registry/agents/${dave.agentId}/policy`, undefined, dave.token)).toMatchObject({ status: 401, body: { retryable: false } });
    expect((await call(hub, "GET", "/hub/inbox", undefined, "nope")).status).toBe(401);
  });
});

describe("endpoints", () => {
  it("probe both agentgram paths with the bearer token, then the welcome arrives flat and unsigned", async () => {
    const endpoint = await startEndpoint();
    const erin = await hub.createAgent("Erin");
    const body = { url: endpoint.url, webhook_token: "tok-erin" };
    const registered = await call(hub, "POST", `/registry/agents/${erin.agentId}/endpoints`, body, erin.token);
    expect(registered).toMatchObject({ status: 201, body: { url: endpoint.url, state: "active", webhook_token_set: true } });
    const probes = endpoint.hits.filter(isProbe);
    expect(probes.map((h) => h.path).sort()).toEqual(["/hooks/abc/agentgram_inbox/agent", "/hooks/abc/agentgram_inbox/wake"]);
    for (const probe of probes) expect(probe).toMatchObject({ auth: "Bearer tok-erin", contentType: "application/json" });
    expect(hub.probes).toEqual(expect.arrayContaining([{ path: "/hooks/abc/agentgram_inbox/wake", status: 200 }]));

    await until("the welcome webhook", () => endpoint.hits.length === 3);
    const welcome = endpoint.hits[2];
    expect(welcome?.path).toBe("/hooks/abc/agentgram_inbox/agent");
    const flat = JSON.parse(welcome?.body ?? "{}") as Record<string, unknown>;
    expect(flat).toMatchObject({ name: "Hub (hub)", channel: "last", sessionKey: "agentline:hub" });
    expect(String(flat.message)).toMatch(/^\[Hub\] Welcome! /);
    const record = hub.records.find((r) => r.receiver_id === erin.agentId);
    expect(record?.envelope).toMatchObject({ from: "hub", type: "system", reply_to: null, sig: { alg: "ed25519", key_id: "hub", value: "" } });
    expect(record?.envelope.payload_hash).toBe(payloadHashOf(record?.envelope.payload));
    await until("the welcome to count as delivered", () => record?.state === "delivered");

    const again = await call(hub, "POST", `/registry/agents/${erin.agentId}/endpoints`, body, erin.token);
    expect(again).toMatchObject({ status: 200, body: { endpoint_id: (registered.body as { endpoint_id: string }).endpoint_id } });
    expect(hub.records.filter((r) => r.receiver_id === erin.agentId)).toHaveLength(1);
  });

  it("use the botcord prefix, stay unverified unless both probes pass, and report a dry run", async () => {
    const botcord = await hubWith({ prefix: "botcord" });
    const endpoint = await startEndpoint((hit) => (hit.path.endsWith("/wake") ? 404 : 200));
    const fay = await botcord.createAgent("Fay");
    const body = { url: endpoint.url, webhook_token: "tok-fay" };
    expect((await call(botcord, "POST", `/registry/agents/${fay.agentId}/endpoints`, body, fay.token)).body).toMatchObject({ state: "unverified" });
    expect(endpoint.hits.map((h) => h.path).sort()).toEqual(["/hooks/abc/botcord_inbox/agent", "/hooks/abc/botcord_inbox/wake"]);
    const dry = await call(botcord, "POST", `/registry/agents/${fay.agentId}/endpoints/test`, body, fay.token);
    expect(dry.body).toMatchObject({ all_ok: false });
    expect((dry.body as { results: unknown[] }).results).toEqual(expect.arrayContaining([
      { path: "/hooks/abc/botcord_inbox/wake", status: 404, ok: false, hint: "The endpoint does not serve /hooks/abc/botcord_inbox/wake" },
      { path: "/hooks/abc/botcord_inbox/agent", status: 200, ok: true, hint: "OK" },
    ]));
    const status = await call(botcord, "GET", `/registry/agents/${fay.agentId}/endpoints/status`, undefined, fay.token);
    expect(status.body).toMatchObject({ state: "unverified", queued_message_count: 0, failed_message_count: 0, recent_errors: [] });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(botcord.records).toHaveLength(0); // no welcome for an endpoint that never passed
  });

  it("are gone from a pull-only hub", async () => {
    const pull = await hubWith({ delivery: "pull" });
    const gus = await pull.createAgent("Gus");
    const answer = await call(pull, "POST", `/registry/agents/${gus.agentId}/endpoints`, { url: "http://127.0.0.1:9/x", webhook_token: "t" }, gus.token);
    expect(answer).toEqual({ status: 404, body: { detail: "Not Found" } });
    pull.setDelivery("webhook");
    expect((await call(pull, "GET", `/registry/agents/${gus.agentId}/endpoints/status`, undefined, gus.token)).body).toEqual({ detail: "No endpoint registered", retryable: false });
  });
});

describe("webhook delivery", () => {
  it("posts the flat 2.x body to /agent and retries a failing endpoint", async () => {
    let failures = 2;
    const endpoint = await startEndpoint((hit) => (isProbe(hit) || failures-- <= 0 ? 200 : 500));
    const alice = await hub.createAgent("Alice");
    const hana = await hub.createAgent("Hana");
    hub.addContact(alice.agentId, hana.agentId);
    await call(hub, "POST", `/registry/agents/${hana.agentId}/endpoints`, { url: endpoint.url, webhook_token: "tok-hana" }, hana.token);
    const welcome = hub.records.find((r) => r.receiver_id === hana.agentId);
    await until("the welcome to get through on the third try", () => welcome?.state === "delivered");
    expect(hub.webhooks.filter((w) => w.path === "/hooks/abc/agentgram_inbox/agent" && w.body === endpoint.hits[2]?.body).map((w) => w.status)).toEqual([500, 500, 200]);
    expect(hub.agents.get(hana.agentId)?.endpoint?.recent_errors).toHaveLength(2);

    const sent = await alice.send(hana.agentId, "Hi Hana!");
    expect(sent).toMatchObject({ status: 202, body: { queued: true, status: "queued" } });
    const record = hub.records.find((r) => r.hub_msg_id === (sent.body as { hub_msg_id: string }).hub_msg_id);
    await until("the message webhook", () => record?.state === "delivered");
    const hit = endpoint.hits.at(-1);
    expect(hit).toMatchObject({ path: "/hooks/abc/agentgram_inbox/agent", auth: "Bearer tok-hana", contentType: "application/json" });
    expect(JSON.parse(hit?.body ?? "{}")).toEqual({
      message: `Alice (${alice.agentId}) says: Hi Hana!`, name: `Alice (${alice.agentId})`, channel: "last", sessionKey: `agentline:${alice.agentId}`,
    });
  });

  it("gives up after the last retry: the record fails, the endpoint turns unreachable and stops being pushed", async () => {
    const endpoint = await startEndpoint((hit) => (isProbe(hit) ? 200 : 503));
    const ivan = await hub.createAgent("Ivan");
    const alice = await hub.createAgent("Alice");
    hub.setPolicy(ivan.agentId, "open");
    await call(hub, "POST", `/registry/agents/${ivan.agentId}/endpoints`, { url: endpoint.url, webhook_token: "tok-ivan" }, ivan.token);
    const welcome = hub.records.find((r) => r.receiver_id === ivan.agentId);
    await until("the welcome to fail", () => welcome?.state === "failed");
    expect(endpoint.hits.filter((h) => !isProbe(h))).toHaveLength(3);
    expect(hub.agents.get(ivan.agentId)?.endpoint?.state).toBe("unreachable");

    await alice.send(ivan.agentId, "anyone there?");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(endpoint.hits.filter((h) => !isProbe(h))).toHaveLength(3);
    const status = await call(hub, "GET", `/registry/agents/${ivan.agentId}/endpoints/status`, undefined, ivan.token);
    expect(status.body).toMatchObject({ state: "unreachable", queued_message_count: 1, failed_message_count: 1 });
    expect((status.body as { recent_errors: string[] }).recent_errors).toHaveLength(3);
  });
});

describe("send", () => {
  it("keeps strangers out of a contacts_only inbox until they are contacts or the policy is open", async () => {
    const [jo, kim, lee] = await Promise.all([hub.createAgent("Jo"), hub.createAgent("Kim"), hub.createAgent("Lee")]);
    expect(await jo.send(kim.agentId, "hello?")).toEqual({ status: 403, body: { detail: "NOT_IN_CONTACTS", retryable: false } });
    hub.addContact(jo.agentId, kim.agentId);
    expect((await jo.send(kim.agentId, "hello!")).status).toBe(202);
    expect((await lee.send(kim.agentId, "me too?")).status).toBe(403);
    const patched = await call(hub, "PATCH", `/registry/agents/${kim.agentId}/policy`, { message_policy: "open" }, kim.token);
    expect(patched).toEqual({ status: 200, body: { message_policy: "open" } });
    expect((await lee.send(kim.agentId, "me too!")).status).toBe(202);
    expect(await jo.send("ag_000000000000", "x")).toMatchObject({ status: 404, body: { detail: "UNKNOWN_AGENT" } });
  });

  it("checks envelopes in the hub's order, each with its reason, and answers a repeat with the first result", async () => {
    const [mia, ned] = await Promise.all([hub.createAgent("Mia"), hub.createAgent("Ned")]);
    hub.setPolicy(ned.agentId, "open");
    const post = (envelope: unknown, token = mia.token) => call(hub, "POST", "/hub/send", envelope, token);
    const refused = async (envelope: unknown) => ((await post(envelope)).body as { detail: string }).detail;
    expect(await refused(signed(mia, ned.agentId, { ts: nowSec() - 330 }))).toBe("Timestamp out of range");
    expect(await refused(signed(mia, ned.agentId, { ts: nowSec() + 330 }))).toBe("Timestamp out of range");
    expect(await refused({ ...signed(mia, ned.agentId), payload: { text: "changed" } })).toBe("Payload hash mismatch");
    expect(await refused(signed(mia, ned.agentId, {}, "k_000000000000"))).toBe("Signing key not found or not active");
    expect(await refused(signed({ ...mia, seed: ned.seed }, ned.agentId, {}, ned.keyId))).toBe("Key does not belong to sender");
    expect(await refused(signed({ ...mia, seed: ned.seed }, ned.agentId))).toBe("Signature verification failed");
    expect((await post(signed(mia, ned.agentId, { ts: nowSec() - 295 }))).status).toBe(202);
    expect((await post(signed(ned, mia.agentId))).status).toBe(403); // from must be the token's agent
    expect((await call(hub, "POST", "/hub/send", signed(mia, ned.agentId))).status).toBe(401);

    const envelope = signed(mia, ned.agentId);
    const first = await post(envelope);
    expect(first.status).toBe(202);
    expect(await post(envelope)).toEqual(first);
    expect(hub.records.filter((r) => r.msg_id === envelope.msg_id)).toHaveLength(1);
    expect(hub.records.find((r) => r.msg_id === envelope.msg_id)?.envelope).toEqual(envelope);
  });
});

describe("history", () => {
  it("lists the caller's records oldest first after a cursor, without failed ones", async () => {
    const [olive, pat] = await Promise.all([hub.createAgent("Olive"), hub.createAgent("Pat")]);
    hub.setPolicy(pat.agentId, "open");
    const ids: string[] = [];
    for (const text of ["one", "two", "three"]) ids.push(((await olive.send(pat.agentId, text)).body as { hub_msg_id: string }).hub_msg_id);
    expect([...ids].sort()).toEqual(ids);
    type History = { messages: { hub_msg_id: string; envelope: Envelope; state: string; created_at: string }[]; count: number; has_more: boolean };
    const page = async (query: string, token = pat.token) => (await call(hub, "GET", `/hub/history?${query}`, undefined, token)).body as History;

    const all = await page("limit=100");
    expect(all.messages.map((m) => m.hub_msg_id)).toEqual(ids);
    expect(all.messages[0]).toMatchObject({ room_id: null, topic: null, topic_id: null, goal: null, state: "queued", envelope: { payload: { text: "one" }, sig: { key_id: olive.keyId } } });
    expect(Date.parse(all.messages[0]?.created_at ?? "")).not.toBeNaN();
    expect((await page("limit=100", olive.token)).count).toBe(3);
    expect(await page(`after=${ids[0]}&limit=1`)).toMatchObject({ count: 1, has_more: true, messages: [{ hub_msg_id: ids[1] }] });

    const receipt = signed(pat, olive.agentId, { type: "error", reply_to: hub.records.find((r) => r.hub_msg_id === ids[1])?.msg_id ?? "", payload: { error: { code: "X", message: "no" } } });
    expect((await call(hub, "POST", "/hub/receipt", receipt)).status).toBe(200);
    expect((await page("limit=100")).messages.map((m) => m.hub_msg_id)).toEqual([ids[0], ids[2]]);
    expect((await call(hub, "GET", "/hub/history?limit=101", undefined, pat.token)).status).toBe(422);
  });
});

describe("pull inbox", () => {
  it("leases with ack=false, acks through /hub/inbox/ack, and long-polls", async () => {
    const pull = await hubWith({ delivery: "pull" });
    const [quinn, rae] = await Promise.all([pull.createAgent("Quinn"), pull.createAgent("Rae")]);
    pull.setPolicy(rae.agentId, "open");
    for (const text of ["a", "b", "c"]) await quinn.send(rae.agentId, text);
    type Inbox = { messages: { hub_msg_id: string; text: string; envelope: Envelope; room_member_names: null; delivery_note: null }[]; count: number; has_more: boolean };
    const poll = async (query: string) => (await call(pull, "GET", `/hub/inbox?${query}`, undefined, rae.token)).body as Inbox;

    const first = await poll("limit=2&ack=false");
    expect(first).toMatchObject({ count: 2, has_more: true });
    expect(first.messages[0]).toMatchObject({ text: `Quinn (${quinn.agentId}) says: a`, room_member_names: null, delivery_note: null, envelope: { payload: { text: "a" } } });
    const leased = pull.records.filter((r) => first.messages.some((m) => m.hub_msg_id === r.hub_msg_id));
    for (const r of leased) {
      expect(r.state).toBe("processing");
      expect(Math.abs((r.lease_until ?? 0) - (Date.now() + 120_000))).toBeLessThan(2000);
    }
    expect((await poll("ack=false")).messages.map((m) => m.envelope.payload.text)).toEqual(["c"]);
    expect((await poll("ack=false")).count).toBe(0);

    const acked = await call(pull, "POST", "/hub/inbox/ack", { message_ids: first.messages.map((m) => m.hub_msg_id) }, rae.token);
    expect(acked).toEqual({ status: 200, body: { acked: 2 } });
    expect(leased.map((r) => r.state)).toEqual(["delivered", "delivered"]);

    const third = pull.records.find((r) => r.envelope.payload.text === "c");
    if (third) third.lease_until = Date.now() - 1; // the 120 s lease ran out
    expect((await poll("ack=true")).messages.map((m) => m.envelope.payload.text)).toEqual(["c"]);
    expect(third?.state).toBe("delivered");

    const started = Date.now();
    const waiting = poll("timeout=5");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await quinn.send(rae.agentId, "d");
    expect((await waiting).messages.map((m) => m.envelope.payload.text)).toEqual(["d"]);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(pull.webhooks).toEqual([]);
    expect((await call(pull, "GET", "/hub/inbox?limit=0", undefined, rae.token)).status).toBe(422);
  });
});

describe("receipts", () => {
  it("move the original record on, refuse what a hub refuses, and treat a repeat as a no-op", async () => {
    const [sam, tia] = await Promise.all([hub.createAgent("Sam"), hub.createAgent("Tia")]);
    hub.setPolicy(tia.agentId, "open");
    const sent = await sam.send(tia.agentId, "please do X");
    const record = hub.records.find((r) => r.hub_msg_id === (sent.body as { hub_msg_id: string }).hub_msg_id);
    const original = record?.msg_id ?? "";
    const post = (envelope: unknown) => call(hub, "POST", "/hub/receipt", envelope);

    const ack = signed(tia, sam.agentId, { type: "ack", reply_to: original, payload: {} });
    expect(await post(ack)).toEqual({ status: 200, body: { received: true } });
    expect(record?.state).toBe("acked");
    const ackedAt = record?.acked_at;
    expect(ackedAt).toBeTypeOf("number");
    expect(await post(ack)).toEqual({ status: 200, body: { received: true } });
    expect(record?.acked_at).toBe(ackedAt);

    const refusal = async (envelope: unknown) => (await post(envelope)).body as { detail: string };
    expect((await post(signed(tia, sam.agentId, { type: "ack", reply_to: original, payload: {} }, "k_000000000000"))).status).toBe(400);
    expect(await refusal(signed(tia, sam.agentId, { type: "ack", reply_to: original, payload: {} }, "k_000000000000"))).toMatchObject({ detail: "Signing key not found or not active" });
    expect(await post(signed(tia, sam.agentId, { type: "ack", reply_to: randomUUID(), payload: {} }))).toMatchObject({ status: 404, body: { detail: "Original message not found" } });
    expect((await post(signed(sam, tia.agentId, { type: "ack", reply_to: original, payload: {} }))).status).toBe(404); // only the receiver may answer
    expect(await post(signed(tia, sam.agentId, { reply_to: original }))).toMatchObject({ status: 400, body: { detail: "Receipt type must be ack, result or error" } });
    expect(await post(signed(tia, sam.agentId, { type: "ack", payload: {} }))).toMatchObject({ status: 400, body: { detail: "reply_to is required for a receipt" } });

    expect((await post(signed(tia, sam.agentId, { type: "result", reply_to: original, payload: { text: "done" } }))).status).toBe(200);
    expect(record?.state).toBe("done");
    expect(hub.receipts.filter((r) => (r.body as { from?: string }).from === tia.agentId).map((r) => [r.status, r.detail])).toEqual([
      [200, "received"], [200, "received"], [400, "Signing key not found or not active"], [400, "Signing key not found or not active"],
      [404, "Original message not found"], [400, "Receipt type must be ack, result or error"], [400, "reply_to is required for a receipt"], [200, "received"],
    ]);
  });
});
