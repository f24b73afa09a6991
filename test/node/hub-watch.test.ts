// The hub's WebSocket as the agent holds it in pull mode (local-agent/hub/hub-watch.ts), against a small
// real `ws` server on an ephemeral port playing today's /hub/ws (test/fixtures/hub/current/ws-frames.json):
// {"type":"auth","token"} → {"type":"auth_ok"} or close 4001, {"type":"inbox_update"}, {"type":"heartbeat"},
// pings answered. Proves: a pull is asked on auth_ok and on every update (bursts coalesced), pings go out,
// a 4001 waits for a newer token instead of hammering, a dropped socket comes back (with the newest token)
// after its backoff, a silent auth and a silent hub are given up, and off means closed. On fake timers
// with the production timings (test/node/fake-clock.ts): the clock is moved past each deadline, never waited.
import { createServer } from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";
import { HUB_WATCH_DEFAULTS, HubWatch, hubWsUrl } from "../../local-agent/hub/hub-watch.ts";
import type { HubToken } from "../../protocol/index.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { advance, until, useFakeClock } from "./fake-clock.ts";

interface FakeHubWs {
  url: string;
  valid: Set<string>;
  /** Tokens in the auth frames received, in order. */
  auths: string[];
  pings: number;
  sockets: Set<WebSocket>;
  /** Answer auth frames (false: stay silent, as a hub that hangs). */
  answer: boolean;
  /** Answer pings (false: a half-open socket, nothing comes back). */
  pong: boolean;
  send(frame: object): void;
  close(): Promise<void>;
}

async function startHubWs(): Promise<FakeHubWs> {
  const server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path: "/hub/ws" });
  const hub: FakeHubWs = {
    url: "",
    valid: new Set(),
    auths: [],
    pings: 0,
    sockets: new Set(),
    answer: true,
    pong: true,
    send: (frame) => {
      for (const ws of hub.sockets) ws.send(JSON.stringify(frame));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of hub.sockets) ws.terminate();
        wss.close();
        server.close(() => resolve());
      }),
  };
  wss.on("connection", (ws) => {
    let authed = false;
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { type?: string; token?: string };
      if (!authed && frame.type === "auth") {
        hub.auths.push(frame.token ?? "");
        if (!hub.answer) return;
        if (!hub.valid.has(frame.token ?? "")) return ws.close(4001, "Invalid token");
        authed = true;
        hub.sockets.add(ws);
        ws.once("close", () => hub.sockets.delete(ws));
        return ws.send(JSON.stringify({ type: "auth_ok", agent_id: "ag_0123456789ab" }));
      }
      if (frame.type === "ping") {
        hub.pings++;
        if (hub.pong) ws.send('{"type":"pong"}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  hub.url = `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`;
  return hub;
}

const { pingEveryMs, silenceMs, authDeadlineMs, coalesceMs, backoff } = HUB_WATCH_DEFAULTS;
const cleanups: (() => Promise<void>)[] = [];
beforeEach(() => useFakeClock());
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const future = () => Date.now() + 86_400_000;

async function watching(token: () => HubToken | null) {
  const hub = await startHubWs();
  cleanups.push(() => hub.close());
  const mails: number[] = [];
  const watch = new HubWatch({ hubUrl: hub.url, logger: silentLogger, token, onMail: () => mails.push(Date.now()) });
  cleanups.push(() => watch.close());
  return { hub, watch, mails };
}

describe("the hub's WebSocket (pull mode)", () => {
  it("signs in with the token, asks for a pull on auth_ok and on each inbox_update (a burst coalesced), ignores heartbeats, pings", async () => {
    const { hub, watch, mails } = await watching(() => ({ token: "tok-1", expiresAtMs: future() }));
    hub.valid.add("tok-1");
    watch.setEnabled(true);
    await until("connected", () => watch.status().state === "connected");
    expect(hub.auths).toEqual(["tok-1"]);
    expect(mails).toHaveLength(1); // the catch-up pull after auth_ok

    await advance(coalesceMs);
    hub.send({ type: "heartbeat" });
    hub.send({ type: "inbox_update" });
    await until("the update's pull", () => mails.length === 2);
    for (let i = 0; i < 5; i++) hub.send({ type: "inbox_update" });
    await until("the burst received", () => watch.status().updates === 6);
    expect(mails).toHaveLength(2);
    await advance(coalesceMs);
    // One window was open from the single update: the burst makes exactly one more pull at its end.
    expect(mails).toHaveLength(3);
    expect(mails[2]! - mails[1]!).toBe(coalesceMs);
    for (let ping = 1; ping <= 3; ping++) {
      await advance(pingEveryMs);
      await until(`ping ${ping}`, () => hub.pings === ping);
    }
    expect(watch.status()).toMatchObject({ state: "connected", url: `${hub.url.replace("http", "ws")}/hub/ws`, updates: 6, error: null });
    expect(watch.status().last_update_at).not.toBeNull();
  });

  it("a hub silent for silenceMs (no pong, no heartbeat) is dropped and signed in again; a heartbeat keeps it", async () => {
    const { hub, watch } = await watching(() => ({ token: "tok", expiresAtMs: future() }));
    hub.valid.add("tok");
    hub.pong = false;
    watch.setEnabled(true);
    await until("connected", () => watch.status().state === "connected");
    await advance(2 * pingEveryMs);
    await until("two pings", () => hub.pings === 2);
    hub.send({ type: "heartbeat" });
    // One stream keeps order: the update arriving says the heartbeat before it did.
    hub.send({ type: "inbox_update" });
    await until("the heartbeat's arrival", () => watch.status().updates === 1);
    await advance(silenceMs);
    // The heartbeat came 2 pings in: silent only 3 pings, not past silenceMs yet.
    expect(watch.status().state).toBe("connected");
    // The next ping's moment is past silenceMs since the heartbeat: dropped then (the clock stops there,
    // so the reconnect below is the test's to let happen).
    await advance(pingEveryMs);
    await until("the silent socket dropped", () => watch.status().state === "disconnected");
    await advance(backoff.initialDelayMs);
    await until("signed in again", () => hub.auths.length === 2 && watch.status().state === "connected");
  });

  it("a 4001 waits for a newer token instead of trying the same one again, then signs in with the newer one", async () => {
    let current: HubToken = { token: "stale", expiresAtMs: future() };
    const { hub, watch } = await watching(() => current);
    hub.valid.add("fresh");
    watch.setEnabled(true);
    await until("the 4001", () => watch.status().state === "waiting_token");
    expect(watch.status().error).toContain("the hub refused the token (4001 Invalid token)");
    await advance(backoff.maxDelayMs * 4);
    expect(watch.status().state).toBe("waiting_token");
    expect(hub.auths).toEqual(["stale"]);

    watch.tokenChanged(); // nothing newer yet: still waiting
    expect(watch.status().state).toBe("waiting_token");
    current = { token: "fresh", expiresAtMs: future() };
    watch.tokenChanged();
    await until("connected with the newer token", () => watch.status().state === "connected");
    expect(hub.auths).toEqual(["stale", "fresh"]);
  });

  it("a dropped socket is reconnected after its backoff, with the newest token", async () => {
    let current: HubToken = { token: "one", expiresAtMs: future() };
    const { hub, watch, mails } = await watching(() => current);
    hub.valid.add("one").add("two");
    watch.setEnabled(true);
    await until("connected", () => watch.status().state === "connected");
    current = { token: "two", expiresAtMs: future() };
    for (const ws of hub.sockets) ws.close(1011, "server restart");
    await until("the drop", () => watch.status().state === "disconnected");
    expect(watch.status().error).toBe("closed (1011 server restart)");
    // The first retry waits half to all of the first step: not before half of it.
    await advance(backoff.initialDelayMs / 2 - 1);
    expect(watch.status().state).toBe("disconnected");
    await advance(backoff.initialDelayMs / 2 + 1);
    await until("reconnected", () => hub.auths.length === 2 && watch.status().state === "connected");
    expect(hub.auths).toEqual(["one", "two"]);
    // Each sign-in asks for a catch-up pull.
    expect(mails).toHaveLength(2);
  });

  it("an auth that is never answered is given up at the deadline and tried again", async () => {
    const { hub, watch } = await watching(() => ({ token: "tok", expiresAtMs: future() }));
    hub.answer = false;
    watch.setEnabled(true);
    await until("the auth frame", () => hub.auths.length === 1);
    await advance(authDeadlineMs - 1);
    expect(watch.status().state).toBe("connecting");
    await advance(1);
    await until("given up", () => watch.status().state === "disconnected");
    await advance(backoff.initialDelayMs);
    await until("a second try", () => hub.auths.length === 2);
    expect(watch.status().state).not.toBe("connected");
  });

  it("no token: waits without connecting; off: the socket is closed", async () => {
    let current: HubToken | null = null;
    const { hub, watch } = await watching(() => current);
    hub.valid.add("late");
    watch.setEnabled(true);
    expect(watch.status().state).toBe("waiting_token");
    await advance(backoff.maxDelayMs);
    expect(watch.status().state).toBe("waiting_token");
    expect(hub.auths).toEqual([]);
    current = { token: "late", expiresAtMs: future() };
    watch.tokenChanged();
    await until("connected", () => watch.status().state === "connected");
    watch.setEnabled(false);
    expect(watch.status().state).toBe("off");
    await until("the hub to see the socket closed", () => hub.sockets.size === 0);
  });

  it("the socket's URL: ws for http, wss for https, under the hub's path", () => {
    expect(hubWsUrl("http://127.0.0.1:18766")).toBe("ws://127.0.0.1:18766/hub/ws");
    expect(hubWsUrl("https://api.botcord.chat/")).toBe("wss://api.botcord.chat/hub/ws");
    expect(hubWsUrl("https://example.com/botcord")).toBe("wss://example.com/botcord/hub/ws");
  });
});
