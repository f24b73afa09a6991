// The current generation's /hub/ws, leases, endpoints and rate limit against test/fixtures/hub/current/
// (facts 21, 28, 29, 30, 32): the frames and every close case, heartbeats timed from the last client
// frame, the ghost close, a socket outliving a token refresh, a lease running out and coming back with an
// inbox_update, endpoint registration that probes but never pushes, and the 21st send in a minute.
// Timings are scaled down (the real hub: auth 10 s, heartbeat 15 s, idle 60 s, lease 120 s + 30 s loop).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgentlineHub } from "../support/node/agentline-hub.ts";
import type { AgentlineHub, HubTestAgent } from "../support/node/agentline-hub.ts";
import { hubCall } from "../support/node/agentline-hub-client.ts";
import { exchange, fixture, openSocket, startCapture, until } from "../support/node/hub-fixtures.ts";
import type { TestSocket } from "../support/node/hub-fixtures.ts";

const WS = fixture("current", "ws-frames");
const HEARTBEAT = 250;
const cases = WS.close_cases as Record<string, { close: { code: number; reason: string }; frames: { dir: string; data: unknown }[] }>;
const types = (socket: TestSocket) => socket.frames.map((f) => (JSON.parse(f) as { type: string }).type);

let hub: AgentlineHub;
beforeAll(async () => {
  hub = await startAgentlineHub({ generation: "current", rateLimitPerMinute: 1000, pairRateLimitPerMinute: 1000, timings: { wsAuthTimeoutMs: 300, wsHeartbeatMs: HEARTBEAT, wsIdleCloseMs: 4 * HEARTBEAT, leaseMs: 300, expiryLoopMs: 100 } });
});
afterAll(() => hub.close());

async function authed(agent: HubTestAgent, token = agent.token): Promise<TestSocket> {
  const socket = await openSocket(hub.url);
  socket.send(JSON.stringify({ type: "auth", token }));
  await socket.frameCount(1);
  return socket;
}

describe("/hub/ws", () => {
  it("answers auth_ok and pong, sends inbox_update for each new record and none for a re-send; an open socket outlives a refresh (facts 29, 30)", async () => {
    // The hub's own heartbeat and idle close (15 s, 60 s): this test counts frames, and heartbeats are the next test's.
    const hub = await startAgentlineHub({ generation: "current", rateLimitPerMinute: 1000, pairRateLimitPerMinute: 1000 });
    try {
      await framesAndRefresh(hub);
    } finally {
      await hub.close();
    }
  });

  async function framesAndRefresh(hub: AgentlineHub): Promise<void> {
    const authed = async (agent: HubTestAgent, token = agent.token) => {
      const socket = await openSocket(hub.url);
      socket.send(JSON.stringify({ type: "auth", token }));
      await socket.frameCount(1);
      return socket;
    };
    const [alice, bob] = [await hub.createAgent("Alice"), await hub.createAgent("Bob", { open: true })];
    const socket = await authed(bob);
    const recorded = (WS.bob_main_socket_frames as { dir: string; data: string }[]).filter((f) => f.dir === "in").map((f) => f.data);
    expect(socket.frames[0]).toBe(recorded[0]!.replace("ag_652eca9ef86c", bob.agentId));
    socket.send('{"type": "ping"}');
    await socket.frameCount(2);
    expect(socket.frames[1]).toBe(recorded[1]);
    const envelope = alice.envelope(bob.agentId, "hello bob");
    await hubCall(hub.url, "POST", "/hub/send", { body: envelope, token: alice.token });
    await socket.frameCount(3);
    expect(socket.frames[2]).toBe(recorded[2]);
    await hubCall(hub.url, "POST", "/hub/send", { body: envelope, token: alice.token });
    socket.send('{"type": "ping"}');
    await socket.frameCount(4);
    expect(types(socket).slice(3)).toEqual(["pong"]); // the re-send announced nothing
    hub.advanceClock(1); // a refresh in the same second would mint the very same token
    const fresh = await hub.refreshToken(bob);
    const stale = await openSocket(hub.url);
    stale.send(JSON.stringify({ type: "auth", token: bob.token }));
    expect(await stale.closed).toEqual(cases["ws auth with older token (Dave, after a refresh)"]!.close);
    const current = await authed(bob, fresh);
    expect(types(current)).toEqual(["auth_ok"]);
    await alice.send(bob.agentId, "after Bob's refresh");
    await socket.frameCount(5);
    expect(types(socket).slice(4)).toEqual(["inbox_update"]);
    expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    for (const s of [socket, current]) s.ws.close();
  }

  it("sends a heartbeat after each quiet interval, timed from the last client frame, and closes 4002 after the idle limit (fact 29)", async () => {
    const bob = await hub.createAgent("Bob");
    // Before the socket opens: the hub's idle clock starts at the auth frame, later than this, so the
    // limit is a floor on the time measured from here however late this test's own steps run.
    const opened = Date.now();
    const idle = await authed(bob);
    const recordedIdle = cases["idle-after-auth (never sends a frame after auth)"]!;
    expect(await idle.closed).toEqual(recordedIdle.close);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(4 * HEARTBEAT - 20);
    const recordedTypes = recordedIdle.frames.filter((f) => f.dir === "in").map((f) => (JSON.parse(String(f.data)) as { type: string }).type);
    expect(types(idle)).toEqual(recordedTypes); // auth_ok, then three heartbeats, then the close
    const logged = hub.wsFrames.length;
    const active = await authed(bob);
    active.send('{"type":"ping"}');
    await until("a heartbeat after the ping", () => types(active).lastIndexOf("heartbeat") > types(active).indexOf("pong"));
    active.ws.close();
    // From the hub's log (only this socket is open now): each heartbeat came a whole interval after the
    // client's last frame (auth or ping), never sooner, however late the test's own steps ran.
    const frames = hub.wsFrames.slice(logged);
    for (const [i, frame] of frames.entries()) {
      if (!frame.data.includes('"heartbeat"')) continue;
      const lastClientFrame = frames.slice(0, i).filter((f) => f.dir === "in").at(-1)!;
      expect(frame.at - lastClientFrame.at).toBeGreaterThanOrEqual(HEARTBEAT - 20);
    }
  });

  it("closes 4001 for no auth frame, a missing or invalid token, and drops a frame that is not JSON without a close frame (fact 29)", async () => {
    const attempt = async (first: string | null) => {
      const socket = await openSocket(hub.url);
      if (first !== null) socket.send(first);
      return socket.closed;
    };
    expect(await attempt(null)).toEqual(cases["no-auth-frame"]!.close);
    expect(await attempt('{"type": "auth"}')).toEqual(cases["auth-without-token"]!.close);
    expect(await attempt('{"type": "ping"}')).toEqual(cases["auth-with-ping-first"]!.close);
    expect(await attempt('{"type": "auth", "token": "not.a.jwt"}')).toEqual(cases["auth-invalid-token"]!.close);
    expect(await attempt("hello")).toEqual(cases["auth-frame-not-json"]!.close);
  });

  it("gives an unacknowledged lease back when it runs out, same hub_msg_id, announced by an inbox_update (fact 28)", async () => {
    const [alice, erin] = [await hub.createAgent("Alice"), await hub.createAgent("Erin", { open: true })];
    await alice.send(erin.agentId, "lease test");
    const socket = await authed(erin);
    const pull = async () => (await hubCall(hub.url, "GET", "/hub/inbox?ack=false&limit=5&timeout=0", { token: erin.token })).body as { messages: { hub_msg_id: string }[] };
    // Before the pull that takes the lease: the hub's lease clock starts later than this, so its 300 ms are
    // a floor on the time measured from here however late this test's own steps run.
    const leasedAt = Date.now();
    const first = await pull();
    expect(first.messages).toHaveLength(1);
    expect((await pull()).messages).toHaveLength(0);
    await until("the inbox_update of the lease that ran out", () => types(socket).includes("inbox_update"));
    expect(types(socket).filter((t) => t === "inbox_update")).toHaveLength(1);
    expect(Date.now() - leasedAt).toBeGreaterThanOrEqual(250); // not before the 300 ms lease ran out
    const msgId = hub.records.find((r) => r.hub_msg_id === first.messages[0]!.hub_msg_id)!.msg_id;
    expect((await hubCall(hub.url, "GET", `/hub/status/${msgId}`, { token: alice.token })).body).toMatchObject({ state: "queued" });
    expect((await pull()).messages.map((m) => m.hub_msg_id)).toEqual([first.messages[0]!.hub_msg_id]);
    socket.ws.close();
  });
});

describe("endpoints and limits", () => {
  const D = fixture("current", "endpoint-register-deprecated");

  it("refuses a loopback endpoint by default; allowed, it probes, answers with Deprecation and Warning 299, and never pushes: the welcome waits in the inbox (fact 21)", async () => {
    const capture = await startCapture();
    const open = await startAgentlineHub({ generation: "current", allowPrivateEndpoints: true, rateLimitPerMinute: 1000 });
    try {
      const bob = await hub.createAgent("Bob");
      const body = { url: `${capture.url}/inbox/${bob.agentId}/hooks`, webhook_token: "tok" };
      const refused = await hubCall(hub.url, "POST", `/registry/agents/${bob.agentId}/endpoints`, { body, token: bob.token });
      expect(refused).toMatchObject({ status: 400, body: exchange(D, "register loopback endpoint (hub default: private endpoints refused)").response.body });
      expect(refused.headers.deprecation).toBeUndefined();
      const [alice, carol] = [await open.createAgent("Alice"), await open.createAgent("Carol", { open: true })];
      const url = { url: `${capture.url}/inbox/${carol.agentId}/hooks`, webhook_token: "tok" };
      const registered = await hubCall(open.url, "POST", `/registry/agents/${carol.agentId}/endpoints`, { body: url, token: carol.token });
      const recorded = exchange(D, "register loopback endpoint on a second uvicorn of the same hub with ALLOW_PRIVATE_ENDPOINTS=true").response;
      expect(registered).toMatchObject({ status: 201, headers: { deprecation: recorded.headers!.deprecation, warning: recorded.headers!.warning } });
      expect(Object.keys(registered.body as object)).toEqual(Object.keys(recorded.body as object));
      expect(capture.hits.map((h) => [h.path.split("/").slice(-2).join("/"), h.body])).toEqual([["botcord_inbox/agent", '{"probe":true}'], ["botcord_inbox/wake", '{"probe":true}']]);
      const status = await hubCall(open.url, "GET", `/registry/agents/${carol.agentId}/endpoints/status`, { token: carol.token });
      expect(status).toMatchObject({ headers: { deprecation: "true" }, body: { state: "active", queued_message_count: 1 } });
      expect((await hubCall(open.url, "GET", `/registry/agents/${carol.agentId}/endpoints/test`, { token: carol.token })).status).toBe(405);
      // Answered: a hub that pushes does so inside /hub/send, before it answers (the webhook era); today's never does.
      await alice.send(carol.agentId, "is anything pushed?");
      expect(capture.hits).toHaveLength(2); // the probes, nothing else
      const inbox = (await hubCall(open.url, "GET", "/hub/inbox?ack=false&limit=10&timeout=0", { token: carol.token })).body as { messages: { text: string }[] };
      const welcome = (exchange(D, "Bob inbox after endpoint registration (welcome record?)").response.body as { messages: { text: string }[] }).messages[0]!;
      expect(inbox.messages.map((m) => m.text)).toEqual([welcome.text, "is anything pushed?"]);
    } finally {
      await open.close();
      await capture.close();
    }
  });

  it("refuses the 21st send in a minute with 429 and Retry-After: 60; the per-conversation limit says its own number (fact 32)", async () => {
    const R = fixture("current", "rate-limit-429");
    const limited = await startAgentlineHub({ generation: "current", pairRateLimitPerMinute: 30 });
    try {
      const [dave, sink] = [await limited.createAgent("Dave"), await limited.createAgent("Sink", { open: true })];
      for (let n = 0; n < 20; n++) expect((await dave.send(sink.agentId, `rate ${n}`)).status).toBe(202);
      const refused = await hubCall(limited.url, "POST", "/hub/send", { body: dave.envelope(sink.agentId, "rate 20"), token: dave.token });
      const recorded = exchange(R, "send #21").response;
      expect(refused.status).toBe(429);
      expect(JSON.stringify(refused.body)).toBe(recorded.raw);
      expect(refused.headers["retry-after"]).toBe(recorded.headers!["retry-after"]);
    } finally {
      await limited.close();
    }
    const pair = await startAgentlineHub({ generation: "current" });
    try {
      const [dave, sink] = [await pair.createAgent("Dave"), await pair.createAgent("Sink", { open: true })];
      for (let n = 0; n < 10; n++) await dave.send(sink.agentId, `pair ${n}`);
      expect(await dave.send(sink.agentId, "pair 10")).toMatchObject({ status: 429, body: { code: "conversation_rate_limit_exceeded", detail: "Conversation rate limit exceeded (10 msg/min per conversation)" } });
    } finally {
      await pair.close();
    }
  });
});
