// The hub's WebSocket as the agent holds it in pull mode (local-agent/hub/hub-watch.ts), against a small
// real `ws` server on an ephemeral port playing today's /hub/ws (test/fixtures/hub/current/ws-frames.json):
// {"type":"auth","token"} → {"type":"auth_ok"} or close 4001, {"type":"inbox_update"}, {"type":"heartbeat"},
// pings answered. Proves: a pull is asked on auth_ok and on every update (bursts coalesced), pings go out,
// a 4001 waits for a newer token instead of hammering, a dropped socket comes back (with the newest token),
// a silent auth is given up, and off means closed.
import { createServer } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";
import { HubWatch, hubWsUrl } from "../../local-agent/hub/hub-watch.ts";
import type { HubWatchOptions } from "../../local-agent/hub/hub-watch.ts";
import type { FileToken } from "../../local-agent/hub/linked-credentials.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { waitUntil } from "../support/node/stack.ts";

interface FakeHubWs {
  url: string;
  valid: Set<string>;
  /** Tokens in the auth frames received, in order. */
  auths: string[];
  pings: number;
  sockets: Set<WebSocket>;
  /** Answer auth frames (false: stay silent, as a hub that hangs). */
  answer: boolean;
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
        ws.send('{"type":"pong"}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  hub.url = `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`;
  return hub;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const future = () => Math.floor(Date.now() / 1000) + 86_400;
const FAST = { pingMs: 50, coalesceMs: 150, authTimeoutMs: 300, backoff: { initialDelayMs: 20, maxDelayMs: 100, factor: 2 } };

async function watching(token: () => FileToken | null, timing: HubWatchOptions["timing"] = FAST) {
  const hub = await startHubWs();
  cleanups.push(() => hub.close());
  const mails: number[] = [];
  const watch = new HubWatch({ hubUrl: hub.url, logger: silentLogger, token, onMail: () => mails.push(Date.now()), timing });
  cleanups.push(() => watch.close());
  return { hub, watch, mails };
}

describe("the hub's WebSocket (pull mode)", () => {
  it("signs in with the token, asks for a pull on auth_ok and on each inbox_update (a burst coalesced), ignores heartbeats, pings", async () => {
    const { hub, watch, mails } = await watching(() => ({ token: "tok-1", expiresAt: future() }));
    hub.valid.add("tok-1");
    watch.setEnabled(true);
    await waitUntil("connected", () => watch.status().state === "connected");
    expect(hub.auths).toEqual(["tok-1"]);
    expect(mails).toHaveLength(1); // the catch-up pull after auth_ok

    await new Promise((r) => setTimeout(r, 200));
    hub.send({ type: "heartbeat" });
    hub.send({ type: "inbox_update" });
    await waitUntil("the update's pull", () => mails.length === 2);
    for (let i = 0; i < 5; i++) hub.send({ type: "inbox_update" });
    await new Promise((r) => setTimeout(r, 400));
    // One window was open from the single update: the burst makes exactly one more pull at its end.
    expect(mails).toHaveLength(3);
    expect(mails[2]! - mails[1]!).toBeGreaterThanOrEqual(140);
    expect(hub.pings).toBeGreaterThanOrEqual(3);
    expect(watch.status()).toMatchObject({ state: "connected", url: `${hub.url.replace("http", "ws")}/hub/ws`, updates: 6, error: null });
    expect(watch.status().last_update_at).not.toBeNull();
  });

  it("a 4001 waits for a newer token instead of trying the same one again, then signs in with the newer one", async () => {
    let current: FileToken = { token: "stale", expiresAt: future() };
    const { hub, watch } = await watching(() => current);
    hub.valid.add("fresh");
    watch.setEnabled(true);
    await waitUntil("the 4001", () => watch.status().state === "waiting_token");
    expect(watch.status().error).toContain("the hub refused the token (4001 Invalid token)");
    await new Promise((r) => setTimeout(r, 400));
    expect(hub.auths).toEqual(["stale"]);

    watch.tokenChanged(); // nothing newer yet: still waiting
    expect(watch.status().state).toBe("waiting_token");
    current = { token: "fresh", expiresAt: future() };
    watch.tokenChanged();
    await waitUntil("connected with the newer token", () => watch.status().state === "connected");
    expect(hub.auths).toEqual(["stale", "fresh"]);
  });

  it("a dropped socket is reconnected with backoff, with the newest token", async () => {
    let current: FileToken = { token: "one", expiresAt: future() };
    const { hub, watch, mails } = await watching(() => current);
    hub.valid.add("one").add("two");
    watch.setEnabled(true);
    await waitUntil("connected", () => watch.status().state === "connected");
    current = { token: "two", expiresAt: future() };
    for (const ws of hub.sockets) ws.close(1011, "server restart");
    await waitUntil("reconnected", () => hub.auths.length === 2 && watch.status().state === "connected");
    expect(hub.auths).toEqual(["one", "two"]);
    // Each sign-in asks for a catch-up pull (the second at the end of the first one's window).
    await waitUntil("the second sign-in's pull", () => mails.length === 2);
  });

  it("an auth that is never answered is given up and tried again", async () => {
    const { hub, watch } = await watching(() => ({ token: "tok", expiresAt: future() }));
    hub.answer = false;
    watch.setEnabled(true);
    await waitUntil("a second try after the auth deadline", () => hub.auths.length >= 2, 3000);
    expect(watch.status().state).not.toBe("connected");
  });

  it("no token: waits without connecting; off: the socket is closed", async () => {
    let current: FileToken | null = null;
    const { hub, watch } = await watching(() => current);
    hub.valid.add("late");
    watch.setEnabled(true);
    expect(watch.status().state).toBe("waiting_token");
    await new Promise((r) => setTimeout(r, 100));
    expect(hub.auths).toEqual([]);
    current = { token: "late", expiresAt: future() };
    watch.tokenChanged();
    await waitUntil("connected", () => watch.status().state === "connected");
    watch.setEnabled(false);
    expect(watch.status().state).toBe("off");
    await waitUntil("the hub to see the socket closed", () => hub.sockets.size === 0);
  });

  it("the socket's URL: ws for http, wss for https, under the hub's path", () => {
    expect(hubWsUrl("http://127.0.0.1:18766")).toBe("ws://127.0.0.1:18766/hub/ws");
    expect(hubWsUrl("https://api.botcord.chat/")).toBe("wss://api.botcord.chat/hub/ws");
    expect(hubWsUrl("https://example.com/botcord")).toBe("wss://example.com/botcord/hub/ws");
  });
});
