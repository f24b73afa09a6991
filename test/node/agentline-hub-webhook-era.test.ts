// The stand-in hub in its webhook-era generation (botcord 9d900985) against the recordings in
// test/fixtures/hub/webhook-era/ (facts 1–17 of its README): registration, probes and the welcome, flat
// webhooks byte for byte with httpx's headers, the push made inside /hub/send BEFORE the record is
// committed (the production bug's cause), retries, rooms, history, receipts, stateless tokens, wake bodies.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentlineHub } from "../support/node/agentline-hub.ts";
import type { AgentlineHub, HubTestAgent } from "../support/node/agentline-hub.ts";
import { hubCall } from "../support/node/agentline-hub-client.ts";
import { sessionKey, signBytes } from "../support/node/agentline-hub-wire.ts";
import { byRequest, exchange, fixture, hubToAgent, sameSecondPair, startCapture, swap, until } from "../support/node/hub-fixtures.ts";
import type { CaptureServer, Captured } from "../support/node/hub-fixtures.ts";

const F = {
  probe: fixture("webhook-era", "endpoint-register-probe"), update: fixture("webhook-era", "endpoint-register-update-and-unverified"),
  dm: fixture("webhook-era", "agent-webhook-dm"), room: fixture("webhook-era", "agent-webhook-room"), retry: fixture("webhook-era", "webhook-retry-500"),
  history: fixture("webhook-era", "history"), receipt: fixture("webhook-era", "receipt-ack"), tokens: fixture("webhook-era", "token-refresh"),
  wake: fixture("webhook-era", "wake-contact-request"), sqlite: fixture("webhook-era", "hold-history-sqlite"), postgres: fixture("webhook-era", "hold-history-postgres"),
};
const REC = { alice: "ag_0aca6e6209c1", bob: "ag_fdc6234fdfbc", carol: "ag_16968264a4e7" };
const BACKOFF = [200, 400];

let hub: AgentlineHub;
let capture: CaptureServer;
beforeAll(async () => {
  hub = await startAgentlineHub({ generation: "webhook-era", timings: { retryBackoffMs: BACKOFF, retryPollMs: 50 }, rateLimitPerMinute: 1000, pairRateLimitPerMinute: 1000 });
  capture = await startCapture();
});
afterAll(async () => {
  await hub.close();
  await capture.close();
});

const call = (method: string, path: string, options: { body?: unknown; token?: string } = {}) => hubCall(hub.url, method, path, options);
const hooks = (agent: HubTestAgent) => `${capture.url}/inbox/${agent.agentId}/hooks`;
const hitsOf = (agent: HubTestAgent, leaf = "agent") => capture.hits.filter((h) => h.path === `/inbox/${agent.agentId}/hooks/botcord_inbox/${leaf}` && h.body !== '{"probe":true}');
const names = (hit: Captured) => hit.rawHeaders.filter((_, i) => i % 2 === 0);
const header = (hit: Captured, name: string) => hit.rawHeaders[hit.rawHeaders.indexOf(name) + 1];

async function withEndpoint(name: string, options: { open?: boolean } = {}): Promise<HubTestAgent> {
  const agent = await hub.createAgent(name, { open: options.open ?? true });
  const reply = await call("POST", `/registry/agents/${agent.agentId}/endpoints`, { body: { url: hooks(agent), webhook_token: `tok-${agent.agentId}` }, token: agent.token });
  expect(reply.status).toBe(201);
  await until(`${name}'s welcome`, () => hitsOf(agent).length === 1);
  return agent;
}

describe("registration, probes and the welcome", () => {
  it("registers anonymously, verifies the decoded challenge, answers {detail, retryable} (fact 1)", async () => {
    const recorded = fixture("webhook-era", "register-agent").exchanges;
    const alice = await hub.createAgent("Alice");
    const again = await call("POST", "/registry/agents", { body: { display_name: "Alice", pubkey: alice.publicKey } });
    expect(again.status).toBe(recorded[0]!.response.status);
    expect(Object.keys(again.body as object)).toEqual(Object.keys(recorded[0]!.response.body as object));
    const claims = JSON.parse(Buffer.from(alice.token.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;
    expect(Object.keys(claims)).toEqual(F.tokens.jwt_claim_names);
    expect(claims).toMatchObject({ agent_id: alice.agentId, iss: "botcord" });
    const bad = await call("POST", `/registry/agents/${alice.agentId}/verify`, { body: { key_id: alice.keyId, challenge: "AAAA", sig: "AAAA" } });
    expect(bad).toMatchObject({ status: 404, body: { detail: "Challenge not found", retryable: false } });
  });

  it("probes /agent then /wake inside the request: 14 bytes, the bearer, httpx's headers, a new connection each; the welcome comes after the 201 (facts 2, 3, 4)", async () => {
    const bob = await hub.createAgent("Bob");
    const body = { url: hooks(bob), webhook_token: "tok-bob" };
    const unauthorised = await call("POST", `/registry/agents/${bob.agentId}/endpoints`, { body });
    expect(unauthorised).toMatchObject({ status: 422, body: exchange(F.probe, "register without Authorization header").response.body });
    const registered = await call("POST", `/registry/agents/${bob.agentId}/endpoints`, { body, token: bob.token });
    const recorded = exchange(F.probe, "register Bob's endpoint (probes happen inside this request)").response;
    expect(registered.status).toBe(201);
    expect(Object.keys(registered.body as object)).toEqual(Object.keys(recorded.body as object));
    expect(registered.body).toMatchObject({ state: "active", webhook_token_set: true, url: body.url });
    const answeredAt = hub.requests.findLast((r) => r.path === `/registry/agents/${bob.agentId}/endpoints` && r.status === 201)!.at;
    const probes = capture.hits.filter((h) => h.path.startsWith(`/inbox/${bob.agentId}/`) && h.body === '{"probe":true}');
    const recordedProbe = exchange(F.probe, "probe").request;
    expect(probes.map((p) => p.path)).toEqual([`/inbox/${bob.agentId}/hooks/botcord_inbox/agent`, `/inbox/${bob.agentId}/hooks/botcord_inbox/wake`]);
    for (const p of probes) {
      expect(Buffer.byteLength(p.body)).toBe(recordedProbe.raw_bytes);
      expect(names(p).map((n) => n.toLowerCase())).toEqual(Object.keys(recordedProbe.headers));
      expect([header(p, "User-Agent"), header(p, "Authorization"), header(p, "Accept-Encoding")]).toEqual([recordedProbe.headers["user-agent"], "Bearer tok-bob", "gzip, deflate"]);
      expect(p.at).toBeLessThanOrEqual(answeredAt);
    }
    expect(probes[0]!.clientPort).not.toBe(probes[1]!.clientPort);
    await until("the welcome", () => hitsOf(bob).length === 1);
    expect(hitsOf(bob)[0]!.body).toBe(exchange(F.probe, "welcome webhook (system message from the hub)").request.raw);
    expect(hitsOf(bob)[0]!.at).toBeGreaterThanOrEqual(answeredAt);
    const welcome = hub.records.find((r) => r.receiver_id === bob.agentId)!;
    await until("the welcome delivered", () => welcome.state === "delivered");
    expect(welcome).toMatchObject({ sender_id: "hub", envelope: { type: "system", sig: { key_id: "hub", value: "" } } });
  });

  it("re-registers with 200 and the same id (no second welcome); a failed probe leaves it unverified, reported with hints (facts 3, 5)", async () => {
    const carol = await hub.createAgent("Carol");
    const body = { url: hooks(carol), webhook_token: "tok-carol" };
    capture.answer = (hit) => ({ status: hit.path.endsWith(`${carol.agentId}/hooks/botcord_inbox/wake`) ? 401 : 200 });
    const first = await call("POST", `/registry/agents/${carol.agentId}/endpoints`, { body, token: carol.token });
    expect(first).toMatchObject({ status: 201, body: { state: "unverified" } });
    const status = await call("GET", `/registry/agents/${carol.agentId}/endpoints/status`, { token: carol.token });
    expect(Object.keys(status.body as object)).toEqual(Object.keys(exchange(F.update, "Carol: endpoints/status shows unverified").response.body as object));
    capture.answer = (hit) => ({ status: hit.path.endsWith(`${carol.agentId}/hooks/botcord_inbox/agent`) ? 404 : 200 });
    const dry = await call("POST", `/registry/agents/${carol.agentId}/endpoints/test`, { body, token: carol.token });
    const recordedDry = exchange(F.update, "Carol: dry run while /agent answers 404 (report with hint)").response.body as Record<string, unknown>;
    expect(dry.body).toEqual({ ...recordedDry, url: body.url });
    expect(await call("GET", `/registry/agents/${carol.agentId}/endpoints/test`, { token: carol.token })).toMatchObject({ status: 405, body: byRequest(F.probe, "GET", "/endpoints/test").response.body });
    capture.answer = () => ({ status: 200 });
    const welcomes = () => hub.records.filter((r) => r.receiver_id === carol.agentId && r.sender_id === "hub");
    expect(welcomes()).toEqual([]);
    const again = await call("POST", `/registry/agents/${carol.agentId}/endpoints`, { body, token: carol.token });
    expect(again).toMatchObject({ status: 200, body: { state: "active", endpoint_id: (first.body as { endpoint_id: string }).endpoint_id } });
    // No welcome: the endpoint row was not new and active, so no welcome record was queued to be pushed.
    expect(welcomes()).toEqual([]);
    expect(hitsOf(carol)).toEqual([]);
  });
});

describe("flat webhooks", () => {
  it("posts the recorded DM body in httpx's header order; the session key names the DM room, both ways (facts 6, 9)", async () => {
    const [alice, bob] = [await withEndpoint("Alice"), await withEndpoint("Bob", { open: false })];
    const refused = await alice.send(bob.agentId, "hello before open");
    expect(refused).toMatchObject({ status: 403, body: exchange(F.dm, "send while Bob is contacts_only (default)").response.body });
    const opened = await call("PATCH", `/registry/agents/${bob.agentId}/policy`, { body: { message_policy: "open" }, token: bob.token });
    expect(opened.body).toEqual(exchange(F.dm, "Bob opens his policy").response.body);
    const sent = await alice.send(bob.agentId, "hello bob");
    const recordedAnswer = exchange(F.dm, "send 'hello bob' (the webhook below is posted while this request is open)").response.body as Record<string, unknown>;
    expect(sent.status).toBe(202);
    expect(Object.keys(sent.body as object)).toEqual(Object.keys(recordedAnswer));
    expect(sent.body).toMatchObject({ queued: true, status: "delivered", topic_id: null });
    const hit = hitsOf(bob).at(-1)!;
    const recorded = exchange(F.dm, "webhook to Bob");
    const room = [alice.agentId, bob.agentId].sort().join("_");
    const pairs: [string, string][] = [[REC.alice, alice.agentId], [REC.bob, bob.agentId], ["botcord:403855a7-5f4e-553c-b4f8-5222a8f25ab9", sessionKey(`rm_dm_${room}`, null)]];
    expect(hit.body).toBe(swap(recorded.request.raw!, pairs));
    expect(names(hit)).toEqual(recorded.raw_header_names_in_order);
    expect(header(hit, "Authorization")).toBe(`Bearer tok-${bob.agentId}`);
    await bob.send(alice.agentId, "hello alice");
    expect(JSON.parse(hitsOf(alice).at(-1)!.body)).toMatchObject({ message: `Bob (${bob.agentId}) says: hello alice`, sessionKey: sessionKey(`rm_dm_${room}`, null) });
  });

  it("pushes inside /hub/send BEFORE committing: while the push is held, history, status and the inbox do not see the record (facts 7, 8)", async () => {
    const [alice, bob] = [await withEndpoint("Alice"), await withEndpoint("Bob")];
    const HOLD = 600;
    capture.answer = (hit) => ({ status: 200, holdMs: hit.path.includes(bob.agentId) && hit.body.includes("held webhook") ? HOLD : 0 });
    const started = Date.now();
    const sending = alice.send(bob.agentId, "held webhook (postgres)");
    await until("the held push", () => hitsOf(bob).some((h) => h.body.includes("held webhook")));
    const msgId = (hub.records.find((r) => r.receiver_id === bob.agentId && r.envelope.payload.text === "held webhook (postgres)")!).msg_id;
    const during = {
      history: await call("GET", "/hub/history?limit=5", { token: bob.token }),
      status: await call("GET", `/hub/status/${msgId}`, { token: alice.token }),
      inbox: await call("GET", "/hub/inbox?ack=false&limit=5", { token: bob.token }),
    };
    const recorded = (label: string) => exchange(F.postgres, label).response;
    expect((during.history.body as { messages: { envelope: { msg_id: string } }[] }).messages.map((m) => m.envelope.msg_id)).not.toContain(msgId);
    expect(during.status).toMatchObject({ status: 404, body: recorded("status during hold (Alice)").body });
    expect(during.inbox.body).toEqual(recorded("inbox during hold (Bob)").body);
    const answered = await sending;
    expect(Date.now() - started).toBeGreaterThanOrEqual(HOLD);
    expect(answered.body).toMatchObject({ status: "delivered" });
    const after = (await call("GET", "/hub/history?limit=5", { token: bob.token })).body as { messages: Record<string, unknown>[] };
    expect(Object.keys(after.messages[0]!)).toEqual(Object.keys((recorded("history after send answered (Bob)").body as { messages: object[] }).messages[0]!));
    expect(after.messages[0]).toMatchObject({ state: "delivered", room_id: `rm_dm_${[alice.agentId, bob.agentId].sort().join("_")}`, mentioned: true });
    const status = await call("GET", `/hub/status/${msgId}`, { token: alice.token });
    expect(Object.keys(status.body as object)).toEqual(Object.keys(recorded("status after (Alice)").body as object));
    expect(status.body).toMatchObject({ state: "delivered", acked_at: null, last_error: null });
    capture.answer = () => ({ status: 200 });
  });

  it("answers 202 queued when the push fails and retries the same bytes after the backoff; a room retry loses 权限 (facts 10, 17)", async () => {
    const [alice, bob, carol] = [await withEndpoint("Alice"), await withEndpoint("Bob"), await withEndpoint("Carol")];
    let failures = 1;
    capture.answer = (hit) => ({ status: hit.path.includes(bob.agentId) && hit.body.includes("retry me") && failures-- > 0 ? 500 : 200 });
    const sent = await alice.send(bob.agentId, "retry me");
    expect(sent.body).toMatchObject({ status: "queued" });
    const msgId = hub.records.find((r) => r.hub_msg_id === (sent.body as { hub_msg_id: string }).hub_msg_id)!.msg_id;
    expect((await call("GET", `/hub/status/${msgId}`, { token: alice.token })).body).toMatchObject({ state: "queued", last_error: "HTTP 500", delivered_at: null });
    await until("the retry", () => hitsOf(bob).filter((h) => h.body.includes("retry me")).length === 2);
    const [first, second] = hitsOf(bob).filter((h) => h.body.includes("retry me"));
    expect(second!.body).toBe(first!.body);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(BACKOFF[0]!);
    await until("delivered", () => hub.records.find((r) => r.msg_id === msgId)?.state === "delivered");
    expect((await call("GET", `/hub/status/${msgId}`, { token: alice.token })).body).toMatchObject({ state: "delivered", last_error: "HTTP 500" });

    failures = 2;
    capture.answer = (hit) => ({ status: hit.path.includes(bob.agentId) && hit.body.includes("room retry me") && failures-- > 0 ? 500 : 200 });
    const roomId = await hub.createRoom(alice, "Project Alpha", [carol.agentId, bob.agentId]);
    await alice.send(roomId, "room retry me", { topic: "design-review" });
    await until("two retries", () => hitsOf(bob).filter((h) => h.body.includes("room retry me")).length === 3);
    const bodies = hitsOf(bob).filter((h) => h.body.includes("room retry me")).map((h) => h.body);
    const recorded = hubToAgent(F.retry).map((x) => x.request.raw!);
    const pairs: [string, string][] = [[REC.alice, alice.agentId], ["rm_a87d2c264b86", roomId], ["botcord:216288c2-2292-5aa7-a39a-b778a50c2250", sessionKey(roomId, "design-review")]];
    expect(bodies).toEqual([swap(recorded[3]!, pairs), swap(recorded[4]!, pairs), swap(recorded[5]!, pairs)]);
    expect(hitsOf(carol).filter((h) => h.body.includes("room retry me")).map((h) => h.body)).toEqual([swap(recorded[2]!, pairs)]);
    capture.answer = () => ({ status: 200 });
  });

  it("fans a 3-member room out with the header, topics from the envelope, ?topic= in the key only, identical bodies (fact 10)", async () => {
    const [alice, bob, carol] = [await withEndpoint("Alice"), await withEndpoint("Bob"), await withEndpoint("Carol")];
    const created = await call("POST", "/hub/rooms", { body: { name: "Project Alpha", member_ids: [carol.agentId, bob.agentId] }, token: alice.token });
    const recordedRoom = exchange(F.room, "create room (try /hub/rooms)").response;
    expect(created.status).toBe(recordedRoom.status);
    expect(Object.keys(created.body as object)).toEqual(Object.keys(recordedRoom.body as object));
    const roomId = (created.body as { room_id: string }).room_id;
    const answers = [
      await alice.send(roomId, "room hello with topic", { topic: "design-review" }),
      await alice.send(roomId, "room hello no topic"),
      await alice.send(roomId, "room hello with ?topic= query", { queryTopic: "query-topic" }),
      await alice.send(roomId, "room hello a2a/0.2 topic+goal", { v: "a2a/0.2", topic: "signed-topic", goal: "agree on a plan" }),
    ];
    expect(answers.map((a) => (a.body as { status: string }).status)).toEqual(["queued", "queued", "queued", "queued"]);
    const keys: [string, string | null][] = [["216288c2-2292-5aa7-a39a-b778a50c2250", "design-review"], ["2ce527b8-7362-5197-8651-8a9a0cfdcb77", null], ["ff412591-75d1-55be-b838-b5c0d9bdb330", "query-topic"], ["e21d3eb4-1a69-5680-a04d-dc63b0c5489c", "signed-topic"]];
    const pairs: [string, string][] = [[REC.alice, alice.agentId], ["rm_a87d2c264b86", roomId], ...keys.map(([k, t]): [string, string] => [`botcord:${k}`, sessionKey(roomId, t)])];
    const expected = hubToAgent(F.room).map((x) => swap(x.request.raw!, pairs));
    const pushed = (agent: HubTestAgent) => hitsOf(agent).filter((h) => h.body.includes("room hello")).map((h) => h.body);
    expect(pushed(carol)).toEqual(expected.filter((_, i) => i % 2 === 0));
    expect(pushed(bob)).toEqual(expected.filter((_, i) => i % 2 === 1));
    // The answer names the first receiver's record (Carol's: member order).
    expect(hub.records.find((r) => r.hub_msg_id === (answers[0]!.body as { hub_msg_id: string }).hub_msg_id)?.receiver_id).toBe(carol.agentId);
    const history = (await call("GET", `/hub/history?room_id=${roomId}&limit=10`, { token: bob.token })).body as { messages: Record<string, unknown>[] };
    const recordedHistory = (exchange(F.room, "Bob room history").response.body as { messages: Record<string, unknown>[] }).messages;
    expect(history.messages.map((m) => [m.topic, m.goal, m.state, (m.topic_id as string | null)?.startsWith("tp_") ?? null])).toEqual(recordedHistory.map((m) => [m.topic, m.goal, m.state, (m.topic_id as string | null)?.startsWith("tp_") ?? null]));
  });
});

describe("history, receipts, tokens, the inbox", () => {
  it("lists history newest first, after= oldest first (exclusive), before= newest first, with own sends; a bad cursor is 400 (fact 15)", async () => {
    const [alice, bob] = [await withEndpoint("Alice"), await withEndpoint("Bob")];
    for (const text of ["one", "two", "three"]) await alice.send(bob.agentId, text);
    const ids = hub.records.filter((r) => r.receiver_id === bob.agentId && r.sender_id === alice.agentId).map((r) => r.hub_msg_id);
    const welcome = hub.records.find((r) => r.receiver_id === bob.agentId && r.sender_id === "hub")!.hub_msg_id;
    const page = async (query: string, token = bob.token) => ((await call("GET", `/hub/history?${query}`, { token })).body as { messages: { hub_msg_id: string }[]; count: number; has_more: boolean });
    expect((await page("")).messages.map((m) => m.hub_msg_id)).toEqual([...ids].reverse().concat(welcome));
    expect(await page(`after=${welcome}&limit=2`)).toMatchObject({ messages: [{ hub_msg_id: ids[0] }, { hub_msg_id: ids[1] }], count: 2, has_more: true });
    expect(await page(`before=${ids[2]}&limit=1`)).toMatchObject({ messages: [{ hub_msg_id: ids[1] }], has_more: true });
    expect((await page("limit=3", alice.token)).messages.map((m) => m.hub_msg_id).slice(0, 3)).toEqual([...ids].reverse());
    const bad = await call("GET", "/hub/history?after=h_doesnotexist", { token: bob.token });
    expect(bad).toMatchObject({ status: 400, body: byRequest(F.history, "GET", "after=h_doesnotexist").response.body });
    expect((await call("GET", "/hub/history?limit=101", { token: bob.token })).status).toBe(422);
  });

  it("takes a signed ack without a token: delivered → acked, a repeat changes nothing, a non-receiver gets 404, the sender's endpoint hears of it (facts 13, 14)", async () => {
    const [alice, bob, carol] = [await withEndpoint("Alice"), await withEndpoint("Bob"), await withEndpoint("Carol")];
    const sent = await alice.send(bob.agentId, "hello bob");
    const original = hub.records.find((r) => r.hub_msg_id === (sent.body as { hub_msg_id: string }).hub_msg_id)!;
    const status = async () => (await call("GET", `/hub/status/${original.msg_id}`, { token: alice.token })).body as Record<string, unknown>;
    expect(await status()).toMatchObject({ state: "delivered", acked_at: null });
    const ack = bob.envelope(alice.agentId, "", { type: "ack", replyTo: original.msg_id, payload: {} });
    const recorded = (label: string) => exchange(F.receipt, label).response;
    expect(await call("POST", "/hub/receipt", { body: ack })).toMatchObject({ status: 200, body: recorded("receipt ack (no JWT)").body });
    const acked = await status();
    expect(acked).toMatchObject({ state: "acked" });
    expect(acked.acked_at).toBeTypeOf("number");
    expect(await call("POST", "/hub/receipt", { body: ack })).toMatchObject({ status: 200, body: { received: true } });
    expect(await status()).toEqual(acked);
    const stranger = carol.envelope(alice.agentId, "", { type: "ack", replyTo: original.msg_id, payload: {} });
    expect(await call("POST", "/hub/receipt", { body: stranger })).toMatchObject({ status: 404, body: recorded("ack from non-receiver (Carol)").body });
    expect(await call("GET", `/hub/status/${original.msg_id}`, { token: bob.token })).toMatchObject({ status: 403, body: recorded("status as receiver (Bob)").body });
    const forwarded = hitsOf(alice).filter((h) => h.body.includes("acknowledged"));
    const recordedForward = exchange(F.receipt, "the hub forwards the ack receipt to Alice's endpoint as a webhook").request.raw!;
    expect(forwarded.map((h) => h.body)).toEqual([swap(recordedForward, [[REC.bob, bob.agentId], ["840e7343-e6a3-48e3-879b-398dd9375cc2", original.msg_id]])]);
    const bobs = (await call("GET", "/hub/history?limit=10", { token: bob.token })).body as { messages: { envelope: { type: string }; state: string }[] };
    expect(bobs.messages.slice(0, 2).map((m) => [m.envelope.type, m.state])).toEqual([["ack", "delivered"], ["message", "acked"]]);
  });

  it("keeps tokens stateless: older ones still work; one per second; a reused nonce is 409; no header is 422 (fact 16)", async () => {
    const bob = await hub.createAgent("Bob");
    const [first, second] = await sameSecondPair(() => hub.refreshToken(bob));
    expect(second).toBe(first); // the same second, the same claims: the same string
    expect((await call("GET", "/hub/history?limit=1", { token: bob.token })).status).toBe(200);
    const recorded = (label: string | null) => F.tokens.exchanges.find((x) => x.label === label)!;
    const nonce = Buffer.from("a nonce used twice").toString("base64");
    const body = { key_id: bob.keyId, nonce, sig: signBytes(bob.seed, Buffer.from(nonce, "base64")) };
    expect(await call("POST", `/registry/agents/${bob.agentId}/token/refresh`, { body })).toMatchObject({ status: 200 });
    expect(await call("POST", `/registry/agents/${bob.agentId}/token/refresh`, { body })).toMatchObject({ status: 409, body: recorded("reused nonce").response.body });
    expect(await call("GET", "/hub/history?limit=1", { token: "garbage.token.x" })).toMatchObject({ status: 401, body: recorded("invalid token").response.body });
    expect(await call("GET", "/hub/history?limit=1")).toMatchObject({ status: 422, body: recorded("no Authorization").response.body });
  });

  it("hands queued records out with ack=false without leasing them, the text as it would push it (fact 15)", async () => {
    const [alice, bob] = [await withEndpoint("Alice"), await hub.createAgent("Bob", { open: true })];
    await alice.send(bob.agentId, "held webhook");
    const poll = async () => (await call("GET", "/hub/inbox?ack=false&limit=5", { token: bob.token })).body as { messages: Record<string, unknown>[] };
    const [first, second] = [await poll(), await poll()];
    expect(second).toEqual(first);
    const recorded = (exchange(F.sqlite, "inbox during hold (Bob)").response.body as { messages: Record<string, unknown>[] }).messages[0]!;
    expect(Object.keys(first.messages[0]!)).toEqual(Object.keys(recorded));
    expect(first.messages[0]).toMatchObject({ text: `Alice (${alice.agentId}) says: held webhook`, room_name: `DM ${[alice.agentId, bob.agentId].sort().join(" & ")}`, room_member_count: 2, my_role: "member", mentioned: true, delivery_note: "未注册 endpoint。请先注册 webhook endpoint。" });
    expect(hub.records.find((r) => r.receiver_id === bob.agentId)?.state).toBe("queued");
    expect((await call("GET", "/hub/inbox?limit=5", { token: bob.token })).body).toMatchObject({ count: 1 });
    expect(hub.records.find((r) => r.receiver_id === bob.agentId)?.state).toBe("delivered");
    expect((await call("POST", "/hub/inbox/ack", { body: { message_ids: [] }, token: bob.token })).status).toBe(404);
  });

  it("wakes the receiver of a contact request at /wake, the requester when it is accepted, the other side when a contact is removed (fact 12)", async () => {
    const [bob, carol] = [await withEndpoint("Bob", { open: false }), await withEndpoint("Carol", { open: false })];
    const sent = await carol.send(bob.agentId, "", { type: "contact_request", payload: { message: "Hi Bob, Carol here" } });
    expect(sent.body).toMatchObject({ status: "delivered" });
    const received = (await call("GET", `/registry/agents/${bob.agentId}/contact-requests/received`, { token: bob.token })).body as { requests: { id: number }[] };
    expect(Object.keys(received.requests[0]!)).toEqual(Object.keys((byRequest(F.wake, "GET", "/contact-requests/received").response.body as { requests: object[] }).requests[0]!));
    const accepted = await call("POST", `/registry/agents/${bob.agentId}/contact-requests/${received.requests[0]!.id}/accept`, { token: bob.token });
    expect(accepted.body).toMatchObject({ state: "accepted" });
    const pairs: [string, string][] = [[REC.bob, bob.agentId], [REC.carol, carol.agentId], ["(request_id: 1)", `(request_id: ${received.requests[0]!.id})`]];
    expect(hitsOf(bob, "wake").map((h) => h.body)).toEqual([swap(exchange(F.wake, "/wake webhook to Bob").request.raw!, pairs)]);
    expect(hitsOf(carol, "wake").map((h) => h.body)).toEqual([swap(exchange(F.wake, "/wake webhook to Carol").request.raw!, pairs)]);
    expect((await carol.send(bob.agentId, "now we are contacts")).status).toBe(202);
    expect((await call("DELETE", `/registry/agents/${bob.agentId}/contacts/${carol.agentId}`, { token: bob.token })).status).toBe(204);
    expect(hitsOf(carol, "wake").map((h) => JSON.parse(h.body) as unknown).at(-1)).toEqual({ body: `Bob (${bob.agentId}) removed you from their contacts.`, mode: "now", sessionKey: sessionKey(null, null) });
    expect((await carol.send(bob.agentId, "still there?")).status).toBe(403);
  });

  it("probes and pushes under the agentgram prefix when told to (the Agentline service)", async () => {
    const agentline = await startAgentlineHub({ generation: "webhook-era", prefix: "agentgram", timings: { retryPollMs: 50 } });
    try {
      const erin = await agentline.createAgent("Erin");
      await hubCall(agentline.url, "POST", `/registry/agents/${erin.agentId}/endpoints`, { body: { url: hooks(erin), webhook_token: "t" }, token: erin.token });
      await until("the welcome", () => capture.hits.some((h) => h.path === `/inbox/${erin.agentId}/hooks/agentgram_inbox/agent` && h.body.includes("Welcome")));
      expect(agentline.probes.map((p) => p.path)).toEqual([`/inbox/${erin.agentId}/hooks/agentgram_inbox/agent`, `/inbox/${erin.agentId}/hooks/agentgram_inbox/wake`]);
    } finally {
      await agentline.close();
    }
  });
});
