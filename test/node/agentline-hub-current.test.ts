// The stand-in hub in its current generation (botcord ed35a77a) against test/fixtures/hub/current/
// (facts 18–27, 30, 31 of its README): no anonymous registration, the owner's install flow and its
// refusals, a second key whose /verify token is refused, one current token per agent, error bodies in
// two languages, inbox records field by field, a2a/0.2, rooms, dashboard and hub-made records, and the
// queued → processing → delivered → acked walk. The socket, leases, endpoints and rate limit:
// agentline-hub-current-ws.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentlineHub } from "../support/node/agentline-hub.ts";
import type { AgentlineHub, HubTestAgent } from "../support/node/agentline-hub.ts";
import { hubCall } from "../support/node/agentline-hub-client.ts";
import { agentIdFor, publicKeyText, signBytes, signingInput, signEnvelope } from "../support/node/agentline-hub-wire.ts";
import { byRequest, exchange, fixture, sameSecondPair, until } from "../support/node/hub-fixtures.ts";
import { randomBytes, randomUUID } from "node:crypto";

const F = {
  install: fixture("current", "install-claim"), second: fixture("current", "second-key"), tokens: fixture("current", "token-refresh"), policy: fixture("current", "policy-403"),
  dm: fixture("current", "inbox-record-a2a-0.1"), v2: fixture("current", "inbox-record-a2a-0.2"), room: fixture("current", "inbox-record-room"), dash: fixture("current", "inbox-record-dashboard"),
  system: fixture("current", "inbox-record-system"), states: fixture("current", "lease-ack-status"), history: fixture("current", "history"),
};
const response = (f: (typeof F)[keyof typeof F], label: string, nth = 0) => exchange(f, label, nth).response;
const keysOf = (value: unknown) => Object.keys(value as object);
type Inbox = { messages: Record<string, unknown>[]; count: number; has_more: boolean };

let hub: AgentlineHub;
beforeAll(async () => {
  hub = await startAgentlineHub({ generation: "current", rateLimitPerMinute: 1000, pairRateLimitPerMinute: 1000, timings: { expiryLoopMs: 100 } });
});
afterAll(() => hub.close());

const call = (method: string, path: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}) => hubCall(hub.url, method, path, options);
const pull = async (agent: HubTestAgent, query = "ack=false&limit=10&timeout=0") => (await call("GET", `/hub/inbox?${query}`, { token: agent.token })).body as Inbox;

describe("getting in: the owner's install flow", () => {
  it("has no anonymous registration: POST /registry/agents is 405, as HEAD's router answers", async () => {
    const pubkey = publicKeyText(randomBytes(32));
    expect(await call("POST", "/registry/agents", { body: { display_name: "X", pubkey } })).toMatchObject({ status: 405, body: { detail: "Method Not Allowed" } });
  });

  it("issues a bind code to an owner and installs the agent with two distinct proofs; refuses as recorded (fact 18)", async () => {
    const owner = hub.newOwner("AliceOwner");
    expect(await call("POST", "/api/users/me/agents/openclaw/install", { body: { name: "Alice" } })).toMatchObject({ status: 401 });
    const issued = await call("POST", "/api/users/me/agents/openclaw/install", { body: { name: "Alice", bio: "Alice test agent" }, token: owner.token });
    const recordedIssue = response(F.install, "Alice: install (bind code)");
    expect(issued.status).toBe(recordedIssue.status);
    expect(keysOf(issued.body)).toEqual(keysOf(recordedIssue.body));
    const { bind_code, nonce, expires_at, install_command } = issued.body as { bind_code: string; nonce: string; expires_at: number; install_command: string };
    expect(bind_code).toMatch(/^bd_[0-9a-f]{12}$/);
    expect(Buffer.from(nonce, "base64")).toHaveLength(32);
    expect(Math.abs(expires_at - (Date.now() / 1000 + 1800))).toBeLessThan(5);
    const recordedBody = recordedIssue.body as Record<string, string>;
    expect(install_command).toBe(recordedBody.install_command!.replace("http://127.0.0.1:18766", hub.url).replace(recordedBody.bind_code!, bind_code).replace(recordedBody.nonce!, nonce));
    const [agentSeed, hostSeed] = [randomBytes(32), randomBytes(32)];
    const proof = (seed: Uint8Array, n = nonce) => ({ pubkey: publicKeyText(seed), proof: { nonce: n, sig: signBytes(seed, Buffer.from(n, "base64")) } });
    const claim = (body: object) => call("POST", "/openclaw/install-claim", { body });
    const claimed = await claim({ bind_code, host: proof(hostSeed), agent: proof(agentSeed) });
    const recordedClaim = response(F.install, "Alice: install-claim");
    expect(claimed.status).toBe(201);
    const [got, want] = [claimed.body as Record<string, object>, recordedClaim.body as Record<string, object>];
    expect([keysOf(got), keysOf(got.agent), keysOf(got.host)]).toEqual([keysOf(want), keysOf(want.agent), keysOf(want.host)]);
    const agent = got.agent as { id: string; key_id: string };
    expect(agent.id).toBe(agentIdFor(publicKeyText(agentSeed)));
    const key = await call("GET", `/registry/agents/${agent.id}/keys/${agent.key_id}`);
    expect(keysOf(key.body)).toEqual(keysOf(response(F.install, "public key lookup (install key)").body));
    expect(key.body).toMatchObject({ state: "active", pubkey: publicKeyText(agentSeed) });
    const invalidCode = response(F.install, "reuse consumed bind code (same body)");
    expect(await claim({ bind_code, host: proof(hostSeed), agent: proof(agentSeed) })).toMatchObject({ status: 400, body: invalidCode.body });
    expect(await claim({ bind_code: "bd_000000000000", host: proof(hostSeed), agent: proof(agentSeed) })).toMatchObject({ status: 400, body: response(F.install, "unknown bind code").body });
    expect(await claim({ bind_code: "xx_nope", host: proof(hostSeed), agent: proof(agentSeed) })).toMatchObject({ status: 400, body: response(F.install, "bind code without bd_ prefix").body });

    const second = (await call("POST", "/api/users/me/agents/openclaw/install", { body: { name: "Alice2" }, token: owner.token })).body as { bind_code: string; nonce: string };
    const otherNonce = randomBytes(32).toString("base64");
    const [h2, a2] = [randomBytes(32), randomBytes(32)];
    expect(await claim({ bind_code: second.bind_code, host: proof(h2, otherNonce), agent: proof(a2, otherNonce) })).toMatchObject({ status: 401, body: response(F.install, "wrong nonce in proofs").body });
    const forged = { pubkey: publicKeyText(a2), proof: { nonce: second.nonce, sig: signBytes(h2, Buffer.from(second.nonce, "base64")) } };
    expect(await claim({ bind_code: second.bind_code, host: proof(h2, second.nonce), agent: forged })).toMatchObject({ status: 401, body: response(F.install, "agent proof signed by another key").body });
    expect(await claim({ bind_code: second.bind_code, host: proof(h2, second.nonce), agent: proof(agentSeed, second.nonce) })).toMatchObject({ status: 409, body: response(F.install, "agent pubkey already registered").body });
    // Checked before the code is consumed: it still works.
    expect((await claim({ bind_code: second.bind_code, host: proof(h2, second.nonce), agent: proof(a2, second.nonce) })).status).toBe(201);
  });

  it("adds a second key whose /verify token is refused on database-checked routes; a refresh by that key works (fact 19)", async () => {
    const alice = await hub.createAgent("Alice");
    const seed2 = randomBytes(32);
    const added = await call("POST", `/registry/agents/${alice.agentId}/keys`, { body: { pubkey: publicKeyText(seed2) }, token: alice.token });
    expect(added.status).toBe(201);
    expect(keysOf(added.body)).toEqual(keysOf(response(F.second, "add second key").body));
    const { key_id, challenge } = added.body as { key_id: string; challenge: string };
    expect((await call("GET", `/registry/agents/${alice.agentId}/keys/${key_id}`)).body).toMatchObject({ state: "pending" });
    hub.advanceClock(1); // the same second would mint the very same string
    const verified = await call("POST", `/registry/agents/${alice.agentId}/verify`, { body: { key_id, challenge, sig: signBytes(seed2, Buffer.from(challenge, "base64")) } });
    expect(keysOf(verified.body)).toEqual(keysOf(response(F.second, "verify second key").body));
    expect((await call("GET", `/registry/agents/${alice.agentId}/keys/${key_id}`)).body).toMatchObject({ state: "active" });
    const verifyToken = (verified.body as { agent_token: string }).agent_token;
    const refused = response(F.second, "token returned by /verify on /hub/inbox");
    expect(await call("GET", "/hub/inbox?ack=false&limit=1&timeout=0", { token: verifyToken })).toMatchObject({ status: 401, body: refused.body });
    expect(await call("GET", "/hub/inbox?ack=false&limit=1&timeout=0", { token: alice.token })).toMatchObject({ status: 200, body: response(F.second, "install token still valid after /verify?").body });
    hub.advanceClock(1);
    const refreshed = await hub.refreshToken({ ...alice, keyId: key_id, seed: seed2 });
    expect(await call("GET", "/hub/inbox?ack=false&limit=1&timeout=0", { token: verifyToken })).toMatchObject({ status: 401 });
    expect((await call("GET", "/hub/inbox?ack=false&limit=1&timeout=0", { token: refreshed })).status).toBe(200);
    const bob = await hub.createAgent("Bob", { open: true });
    expect((await hubCall(hub.url, "POST", "/hub/send", { body: signEnvelope(seed2, key_id, { v: "a2a/0.1", msg_id: randomUUID(), ts: Math.floor(Date.now() / 1000), from: alice.agentId, to: bob.agentId, type: "message", reply_to: null, ttl_sec: 3600, payload: { text: "signed by Alice's second key" } }), token: refreshed })).status).toBe(202);
  });
});

describe("one current token per agent", () => {
  it("refuses every older token after a refresh on the database-checked routes, in English or Chinese; a signature-only route still takes it (fact 30)", async () => {
    const [dave, bob] = [await hub.createAgent("Dave"), await hub.createAgent("Bob", { open: true })];
    hub.advanceClock(1); // the same second would mint the very same string
    const fresh = await hub.refreshToken(dave);
    expect(fresh).not.toBe(dave.token);
    const stale = response(F.tokens, "older token: GET /hub/inbox").body;
    const old = { token: dave.token };
    const attempts = [
      call("GET", "/hub/inbox?ack=false&limit=1&timeout=0", old), call("POST", "/hub/inbox/ack", { ...old, body: { message_ids: ["h_x"] } }),
      call("POST", "/hub/inbox/lease/renew", { ...old, body: { message_ids: ["h_x"] } }), call("GET", "/hub/history?limit=1", old),
      call("POST", "/hub/send", { ...old, body: dave.envelope(bob.agentId, "sent with a stale token") }), call("GET", `/hub/status/${randomUUID()}`, old),
    ];
    for (const answer of await Promise.all(attempts)) expect(answer).toMatchObject({ status: 401, body: stale });
    expect(await call("GET", "/hub/history?limit=1", { ...old, headers: { "accept-language": "zh" } })).toMatchObject({ status: 401, body: response(F.tokens, "older token, Accept-Language zh").body });
    const jwtOnly = response(F.tokens, "older token on a JWT-only route");
    expect(await call("GET", `/registry/agents/${dave.agentId}/endpoints/status`, old)).toMatchObject({ status: jwtOnly.status, body: jwtOnly.body });
    expect((await call("GET", "/hub/history?limit=1", { token: fresh })).status).toBe(200);
    expect(await call("GET", "/hub/inbox?limit=1", { token: "garbage" })).toMatchObject({ status: 401, body: response(F.tokens, "garbage token").body });
    expect(await call("GET", "/hub/inbox?limit=1")).toMatchObject({ status: 401, body: response(F.tokens, "no Authorization header").body });
    const [a, b] = await sameSecondPair(() => hub.refreshToken(dave));
    expect(b).toBe(a);
    const claims = JSON.parse(Buffer.from(a.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;
    expect(keysOf(claims)).toEqual(F.tokens.jwt_claim_names);
    const nonce = randomBytes(32).toString("base64");
    const body = { key_id: dave.keyId, nonce, sig: signBytes(dave.seed, Buffer.from(nonce, "base64")) };
    expect(keysOf((await call("POST", `/registry/agents/${dave.agentId}/token/refresh`, { body })).body)).toEqual(keysOf(response(F.tokens, "refresh #1").body));
    expect(await call("POST", `/registry/agents/${dave.agentId}/token/refresh`, { body })).toMatchObject({ status: 409, body: response(F.tokens, "refresh with reused nonce").body });
  });

  it("answers a cross-owner DM to a contacts_only agent 403 in the caller's language, until the policy opens or a room is shared (fact 20)", async () => {
    const [alice, bob, carol] = [await hub.createAgent("Alice"), await hub.createAgent("Bob"), await hub.createAgent("Carol", { open: true })];
    const envelope = alice.envelope(bob.agentId, "hello before open");
    expect(await call("POST", "/hub/send", { body: envelope, token: alice.token })).toMatchObject({ status: 403, body: response(F.policy, "Alice->Bob before Bob opens (contacts_only)").body });
    expect(await call("POST", "/hub/send", { body: envelope, token: alice.token, headers: { "accept-language": "zh-CN,zh;q=0.9" } })).toMatchObject({ status: 403, body: response(F.policy, "same, Accept-Language zh").body });
    expect((await carol.send(alice.agentId, "to a contacts_only agent")).status).toBe(403);
    await hub.createRoom(alice, "shared", [carol.agentId]);
    expect((await carol.send(alice.agentId, "we share a room now")).status).toBe(202);
    expect((await call("PATCH", `/registry/agents/${bob.agentId}/policy`, { body: { message_policy: "open" }, token: bob.token })).body).toEqual(response(F.policy, "Bob: policy open").body);
    expect((await alice.send(bob.agentId, "hello after open")).status).toBe(202);
  });
});

describe("inbox records", () => {
  it("lists a DM with the recorded fields in order: the body alone as text, the DM room's structured fields (facts 22, 23)", async () => {
    const [alice, bob] = [await hub.createAgent("Alice"), await hub.createAgent("Bob", { open: true })];
    expect((await alice.send(bob.agentId, "hello bob")).body).toMatchObject({ queued: true, status: "queued", topic_id: null });
    const recorded = (response(F.dm, "Bob pull ack=false").body as Inbox).messages[0]!;
    const record = (await pull(bob)).messages[0]!;
    expect(keysOf(record)).toEqual(keysOf(recorded));
    expect(keysOf(record.envelope)).toEqual(keysOf(recorded.envelope));
    const ids = [alice.agentId, bob.agentId].sort();
    const names = ids.map((id) => (id === bob.agentId ? "Bob" : "Alice"));
    expect(record).toMatchObject({ text: "hello bob", room_id: `rm_dm_${ids[0]}_${ids[1]}`, room_name: `DM ${ids[0]} & ${ids[1]}`, room_member_count: 2, room_member_names: names, my_role: "member", my_can_send: true, mentioned: true, source_type: "agent", reply_preview: null });
    expect(record.envelope).toMatchObject({ topic: null, goal: null, mentions: null, trace_id: null });

    const v2 = await alice.send(bob.agentId, "hello bob, v0.2", { v: "a2a/0.2", topic: "plan-q3", goal: "agree on dates" });
    expect((v2.body as { topic_id: string }).topic_id).toMatch(/^tp_[0-9a-f]{12}$/);
    const unsigned = { v: "a2a/0.2", msg_id: randomUUID(), ts: Math.floor(Date.now() / 1000), from: alice.agentId, to: bob.agentId, type: "message", reply_to: null, ttl_sec: 3600, topic: "plan-q3", goal: "agree on dates", payload: { text: "v0.2 signed without topic/goal" } };
    const nine = signEnvelope(alice.seed, alice.keyId, { ...unsigned, v: "a2a/0.1" });
    const wrong = { ...nine, v: "a2a/0.2", sig: { ...nine.sig, value: signBytes(alice.seed, signingInput({ ...nine, v: "a2a/0.1" })) } };
    expect(await call("POST", "/hub/send", { body: wrong, token: alice.token })).toMatchObject({ status: 400, body: response(F.v2, "a2a/0.2 envelope signed with the 0.1 (nine-field) input -> rejected?").body });
    expect((await alice.send(bob.agentId, "v0.2 no topic", { v: "a2a/0.2" })).status).toBe(202);
    const v2Records = (await pull(bob)).messages;
    expect(v2Records.map((m) => [m.text, m.topic, m.goal, (m.envelope as { v: string }).v])).toEqual([["hello bob, v0.2", "plan-q3", "agree on dates", "a2a/0.2"], ["v0.2 no topic", null, null, "a2a/0.2"]]);
  });

  it("gives room records the room's fields, mentioned per receiver; room history shows one record per msg_id, maybe another member's (fact 24)", async () => {
    const [alice, bob, carol, sink] = [await hub.createAgent("Alice"), await hub.createAgent("Bob", { open: true }), await hub.createAgent("Carol", { open: true }), await hub.createAgent("Sink", { open: true })];
    const roomId = await hub.createRoom(alice, "Project Alpha", [carol.agentId, bob.agentId]);
    expect((await pull(bob)).count).toBe(0); // creating a room sends nothing
    await alice.send(roomId, "room hello with topic", { topic: "design-review" });
    await alice.send(roomId, "room hello a2a/0.2", { v: "a2a/0.2", topic: "signed-topic", goal: "agree on a plan", mentions: [bob.agentId] });
    const records = (await pull(bob)).messages;
    const recorded = (response(F.room, "Bob pull room records").body as Inbox).messages;
    expect(keysOf(records[0])).toEqual(keysOf(recorded[0]));
    expect(records.map((m) => [m.text, m.room_name, m.room_member_count, m.room_member_names, m.my_role, m.topic, m.goal, m.mentioned])).toEqual([
      ["room hello with topic", "Project Alpha", 3, ["Alice", "Carol", "Bob"], "member", "design-review", null, false],
      ["room hello a2a/0.2", "Project Alpha", 3, ["Alice", "Carol", "Bob"], "member", "signed-topic", "agree on a plan", true],
    ]);
    await call("POST", "/hub/inbox/ack", { body: { message_ids: records.map((m) => m.hub_msg_id) }, token: bob.token });
    const history = (await call("GET", `/hub/history?room_id=${roomId}&limit=10`, { token: bob.token })).body as Inbox;
    expect(keysOf(history.messages[0])).toEqual(keysOf((response(F.room, "Bob room history").body as Inbox).messages[0]));
    const carolsCopies = hub.records.filter((r) => r.receiver_id === carol.agentId && r.room_id === roomId).map((r) => r.hub_msg_id).reverse();
    expect(history.messages.map((m) => [m.hub_msg_id, m.state, m.mentioned])).toEqual([[carolsCopies[0], "queued", true], [carolsCopies[1], "queued", false]]);
    const added = await call("POST", `/hub/rooms/${roomId}/members`, { body: { agent_id: sink.agentId }, token: alice.token });
    expect(added.status).toBe(202);
    expect(keysOf(added.body)).toEqual(keysOf(response(F.room, "Alice adds Sink to the room").body));
    expect(added.body).toMatchObject({ status: "queued_for_approval" });
  });

  it("hands dashboard messages over unsigned: the owner chat (from = to = the agent) and a human's DM; agents answer humans through the DM room (fact 25)", async () => {
    const bob = await hub.createAgent("Bob");
    hub.injectOwnerChat(bob.agentId, "hi Bob, it's your owner");
    hub.injectHumanDm(bob.agentId, "hello Bob, I am Hana (human)", "Hana");
    const records = (await pull(bob)).messages;
    const [ownerChat, human] = (response(F.dash, "Bob pull dashboard records").body as Inbox).messages;
    expect(records.map(keysOf)).toEqual([keysOf(ownerChat), keysOf(human)]);
    const hana = (records[1]!.envelope as { from: string }).from;
    const owner = bob.owner!;
    expect(records[0]).toMatchObject({ text: "hi Bob, it's your owner", room_name: "Bob", room_member_count: 2, room_member_names: ["Bob", owner.human_id], my_role: "owner", mentioned: true, source_type: "dashboard_user_chat", source_user_id: owner.id, source_user_name: owner.display_name, source_session_kind: "owner_chat", envelope: { from: bob.agentId, to: bob.agentId, payload_hash: "", sig: { alg: "ed25519", key_id: "dashboard", value: "" } } });
    expect(records[0]!.room_id).toMatch(/^rm_oc_[0-9a-f]{16}$/);
    const dmRoom = `rm_dm_${[bob.agentId, hana].sort().join("_")}`;
    expect(hana).toMatch(/^hu_[0-9a-f]{12}$/);
    expect(records[1]).toMatchObject({ room_id: dmRoom, room_name: `DM ${[bob.agentId, hana].sort().join(" & ")}`, room_member_names: [hana, "Bob"], mentioned: false, source_type: "dashboard_human_room", source_session_kind: "room_human", source_user_name: expect.stringMatching(/^hana-/), envelope: { from: hana, to: dmRoom, payload_hash: "", sig: { key_id: "dashboard-human", value: "" } } });
    expect(await bob.send(hana, "hi Hana")).toMatchObject({ status: 404, body: response(F.dash, "Bob -> hu_ (agent replying to a human)").body });
    const reply = await bob.send(dmRoom, "hi Hana (via the DM room id)");
    expect(reply.status).toBe(202);
    const history = (await call("GET", "/hub/history?limit=1", { token: bob.token })).body as Inbox;
    expect(history.messages[0]).toMatchObject({ hub_msg_id: (reply.body as { hub_msg_id: string }).hub_msg_id, state: "queued", room_id: dmRoom });
  });

  it("makes the hub's own records: the ack in the sender's inbox, a contact request with no room (to the owner's queue), TTL_EXPIRED (fact 26)", async () => {
    const [alice, bob, carol, dave] = [await hub.createAgent("Alice"), await hub.createAgent("Bob", { open: true }), await hub.createAgent("Carol"), await hub.createAgent("Dave", { open: true })];
    const sent = await alice.send(bob.agentId, "hello bob");
    const original = hub.records.find((r) => r.hub_msg_id === (sent.body as { hub_msg_id: string }).hub_msg_id)!;
    await call("POST", "/hub/receipt", { body: bob.envelope(alice.agentId, "", { type: "ack", replyTo: original.msg_id, payload: {} }) });
    await carol.send(alice.agentId, "", { type: "contact_request", payload: { message: "Hi Alice, Carol here" } });
    const records = (await pull(alice)).messages;
    const recorded = (response(F.system, "Alice pull (contact_request record; earlier ack receipt?)").body as Inbox).messages;
    expect(records.map((m) => m.text)).toEqual([`${bob.agentId} acknowledged your message ${original.msg_id}.`, "Hi Alice, Carol here"]);
    expect(records.map((m) => [m.room_id === null, m.mentioned])).toEqual(recorded.map((m) => [m.room_id === null, m.mentioned]));
    expect((await call("GET", `/registry/agents/${alice.agentId}/contact-requests/received`, { token: alice.token })).body).toEqual(response(F.system, "Alice lists received requests (agent API)").body);
    expect(hub.approvals.filter((a) => a.agent_id === alice.agentId).map((a) => a.kind)).toEqual(["contact_request"]);
    const ttl = await alice.send(dave.agentId, "ttl test (never pulled)", { ttlSec: 1 });
    const ttlRecord = hub.records.find((r) => r.hub_msg_id === (ttl.body as { hub_msg_id: string }).hub_msg_id)!;
    const msgId = ttlRecord.msg_id;
    // Its 1 s TTL over (the record's clock moved back), the hub's expiry loop fails it.
    ttlRecord.created_at -= 1300;
    await until("the hub's expiry loop to fail the record", () => ttlRecord.state === "failed");
    expect((await call("GET", `/hub/status/${msgId}`, { token: alice.token })).body).toEqual({ ...(response(F.system, "status of ttl message", 1).body as object), msg_id: msgId, created_at: expect.any(Number) });
    const expired = (await pull(alice)).messages;
    const recordedError = (response(F.system, "Alice pull (TTL_EXPIRED error from hub, Bob's ack receipt, ...)").body as Inbox).messages[0]!;
    expect(expired.map((m) => [m.text, (m.envelope as { reply_to: string }).reply_to, (m.envelope as { from: string }).from])).toEqual([[recordedError.text, msgId, "hub"]]);
  });
});

describe("delivery states", () => {
  it("walks queued → processing (ack=false) → delivered (inbox ack, acked_at set) → acked (signed receipt), with the recorded answers (fact 27)", async () => {
    const [alice, bob] = [await hub.createAgent("Alice"), await hub.createAgent("Bob", { open: true })];
    const envelope = alice.envelope(bob.agentId, "hello bob");
    const sent = await call("POST", "/hub/send", { body: envelope, token: alice.token });
    const id = (sent.body as { hub_msg_id: string }).hub_msg_id;
    const status = async (token = alice.token) => (await call("GET", `/hub/status/${envelope.msg_id}`, { token })).body as Record<string, unknown>;
    const post = (path: string, ids: string[]) => call("POST", path, { body: { message_ids: ids }, token: bob.token });
    const step = (label: string, nth = 0) => response(F.states, label, nth).body;
    expect(await status()).toMatchObject({ state: "queued", delivered_at: null, acked_at: null });
    expect((await pull(bob)).count).toBe(1);
    expect(await status()).toMatchObject({ state: "processing" });
    expect(await pull(bob)).toEqual(step("pull again while leased"));
    expect((await post("/hub/inbox/lease/renew", [id])).body).toEqual(step("renew"));
    expect((await post("/hub/inbox/lease/renew", [id, "h_doesnotexist"])).body).toEqual(step("renew again + unknown id"));
    expect((await post("/hub/inbox/ack", [id])).body).toEqual(step("ack"));
    expect((await post("/hub/inbox/ack", [id])).body).toEqual(step("ack again"));
    expect((await post("/hub/inbox/lease/renew", [id])).body).toEqual(step("renew after ack"));
    expect((await post("/hub/inbox/ack", [])).body).toEqual(step("ack empty list"));
    const delivered = await status();
    expect(delivered).toMatchObject({ state: "delivered", delivered_at: expect.any(Number), acked_at: expect.any(Number) });
    expect(await call("GET", `/hub/status/${envelope.msg_id}`, { token: bob.token })).toMatchObject({ status: 403, body: step("status asked by receiver") });
    const ack = bob.envelope(alice.agentId, "", { type: "ack", replyTo: envelope.msg_id, payload: {} });
    expect((await call("POST", "/hub/receipt", { body: ack })).body).toEqual(step("signed ack receipt (no JWT)"));
    expect((await call("POST", "/hub/receipt", { body: ack })).body).toEqual(step("same receipt again"));
    expect(await status()).toMatchObject({ state: "acked" });
    expect(await call("POST", "/hub/send", { body: envelope, token: alice.token })).toMatchObject({ status: 202, body: { hub_msg_id: id, status: "acked" } });
    await alice.send(bob.agentId, "pulled with ack=true");
    expect((await pull(bob, "ack=true&limit=10&timeout=0")).count).toBe(1);
    const last = hub.records.filter((r) => r.receiver_id === bob.agentId && r.envelope.type === "message").at(-1)!;
    expect(last).toMatchObject({ state: "delivered", acked_at: null });
  });

  it("long-polls: a waiting pull returns as soon as mail comes, and empty when its timeout runs out", async () => {
    const [alice, bob] = [await hub.createAgent("Alice"), await hub.createAgent("Bob", { open: true })];
    // The longest wait the hub takes: were mail not to wake it, the test would time out first.
    const waiting = pull(bob, "ack=false&limit=10&timeout=30");
    await until("the pull waiting at the hub", () => hub.waitingPulls() > 0);
    await alice.send(bob.agentId, "wake up");
    expect((await waiting).messages.map((m) => m.text)).toEqual(["wake up"]);
    const quiet = Date.now();
    expect(await pull(bob, "ack=false&limit=10&timeout=1")).toEqual({ messages: [], count: 0, has_more: false });
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(950);
    expect((await call("GET", "/hub/inbox?timeout=31", { token: bob.token })).status).toBe(422);
  });

  it("lists history newest first, after= oldest first (exclusive), before= newest first, with its own sends; a bad cursor is 400 (fact 31)", async () => {
    const [alice, bob] = [await hub.createAgent("Alice"), await hub.createAgent("Bob", { open: true })];
    for (const text of ["one", "two", "three"]) await alice.send(bob.agentId, text);
    const ids = hub.records.filter((r) => r.receiver_id === bob.agentId).map((r) => r.hub_msg_id);
    const page = async (query: string, token = bob.token) => (await call("GET", `/hub/history?${query}`, { token })).body as Inbox;
    const newest = await page("limit=5");
    expect(keysOf(newest.messages[0])).toEqual(keysOf((response(F.history, "no after (limit 5)").body as Inbox).messages[0]));
    expect(newest.messages.map((m) => m.hub_msg_id)).toEqual([...ids].reverse());
    expect((await page(`after=${ids[0]}&limit=1`)).messages.map((m) => m.hub_msg_id)).toEqual([ids[1]]);
    expect(await page(`before=${ids[2]}&limit=1`)).toMatchObject({ messages: [{ hub_msg_id: ids[1] }], has_more: true });
    expect((await page("limit=5", alice.token)).count).toBe(3);
    expect(await call("GET", "/hub/history?after=h_doesnotexist", { token: bob.token })).toMatchObject({ status: 400, body: byRequest(F.history, "GET", "after=h_doesnotexist").response.body });
  });
});
