// The relay's socket as the agent holds it (local-agent/relay/relay-client.ts on the reconnecting socket),
// against a small real `ws` server playing the relay's side of the protocol (test/support/node/
// fake-relay.ts: challenge → auth → ready, pings answered, its close codes). Proves: the `relay connected`
// event keeps its wording and fields (scripts read it); frames reach the handlers registered for their
// type, and what is not a JSON object is dropped with the socket kept; heartbeats go out and a silent
// relay is dropped and reconnected after its backoff; a relay that never challenges is given up at the
// auth deadline; `replaced` never reconnects; a refused key waits the longest delay unless retry cuts it
// short; close is idempotent and polite. On fake timers with the production timings (fake-clock.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { DeliveryFrame, HubTokenFrame } from "../../protocol/index.ts";
import { DEFAULTS } from "../../local-agent/backoff.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import type { LogFields, Logger } from "../../local-agent/logger.ts";
import { RELAY_SOCKET_TIMING, RelayClient, connectUrl } from "../../local-agent/relay/relay-client.ts";
import type { ConnectionState, StateDetail } from "../../local-agent/relay/relay-client.ts";
import { startFakeRelay } from "../support/node/fake-relay.ts";
import { advance, until, useFakeClock } from "./fake-clock.ts";

/** Every event logged, with its level and fields. */
function recordingLogger(): Logger & { lines: { level: string; event: string; fields: LogFields }[] } {
  const lines: { level: string; event: string; fields: LogFields }[] = [];
  const at = (level: string) => (event: string, fields: LogFields = {}) => void lines.push({ level, event, fields });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

const { pingEveryMs, silenceMs, authDeadlineMs } = RELAY_SOCKET_TIMING;
const cleanups: (() => Promise<void>)[] = [];
beforeEach(() => useFakeClock());
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connecting() {
  const relay = await startFakeRelay(undefined, { backlog: 3, last_id: 3, hub_mode: "pull", hub_prefix: "botcord" });
  cleanups.push(() => relay.close());
  const logger = recordingLogger();
  const identity = await newIdentity();
  const client = new RelayClient({ relayUrl: relay.url, identity, logger });
  cleanups.push(() => client.close());
  const states: [ConnectionState, StateDetail][] = [];
  client.onState((state, detail) => states.push([state, detail]));
  return { relay, logger, identity, client, states };
}

describe("the relay's socket", () => {
  it("logs `relay connected` with its url, after and backlog; dispatches frames by type; acks go up once authenticated", async () => {
    const { relay, logger, identity, client, states } = await connecting();
    const messages: DeliveryFrame[] = [];
    const tokens: HubTokenFrame[] = [];
    client.on("message", (frame) => messages.push(frame));
    client.on("hub_token", (frame) => tokens.push(frame));
    expect(client.send({ type: "hub_pull" })).toBe(false);
    client.start();
    await until("connected", () => client.state === "connected");
    expect(logger.lines).toContainEqual({ level: "info", event: "relay connected", fields: { url: connectUrl(relay.url, identity.agentId), after: 0, backlog: 3 } });
    expect(states.map(([state]) => state)).toEqual(["connecting", "connected"]);
    expect(states[1]![1]).toEqual({ backlog: 3, window: 16, hubPrefix: "botcord", hubMode: "pull" });
    expect(relay.frames[0]).toMatchObject({ type: "auth", key: identity.publicKey, after: 0, window: DEFAULTS.window });

    // Not a JSON object: dropped, the connection kept.
    relay.socket!.send("not json");
    relay.socket!.send("[1]");
    relay.send({ type: "message", id: 1, kind: "hook", subpath: "a", content_type: "text/plain", body: "x", encoding: "utf8", received_at: 0, expires_at: 0 });
    relay.send({ type: "hub_token", token: 42 });
    relay.send({ type: "hub_token", token: "jwt", expires_at: 99 });
    await until("the token", () => tokens.length === 1);
    expect(messages.map((m) => m.id)).toEqual([1]);
    expect(client.state).toBe("connected");
    expect(tokens).toEqual([{ type: "hub_token", token: "jwt", expires_at: 99 }]);
    client.ack(1);
    expect(client.send({ type: "hub_pull" })).toBe(true);
    await until("the ack and the pull", () => relay.frames.length === 3);
    expect(relay.frames.slice(1)).toEqual([{ type: "ack", id: 1 }, { type: "hub_pull" }]);
    expect(client.cursor).toBe(1);
  });

  it("regression: an ack between sockets leaves the cursor where it was, so a message the relay sends again under it is delivered (the cursor jumped past it, and it was ignored)", async () => {
    const { relay, client } = await connecting();
    const messages: DeliveryFrame[] = [];
    client.on("message", (frame) => messages.push(frame));
    const message = (id: number) => ({ type: "message", id, kind: "hook", subpath: "a", content_type: "text/plain", body: "x", encoding: "utf8", received_at: 0, expires_at: 0 });
    client.start();
    await until("connected", () => client.state === "connected");
    relay.send(message(1));
    relay.send(message(2));
    await until("both messages", () => messages.length === 2);
    // The next connection is held before its challenge: the socket is opening, the old one's ids forgotten.
    relay.challenge = false;
    relay.socket!.terminate();
    await until("disconnected", () => client.state === "disconnected");
    await advance(DEFAULTS.initialDelayMs);
    await until("the next connection open", () => relay.connections === 2);
    // 2 (another conversation) is finished while no socket is authenticated; 1 is not.
    client.ack(2);
    expect(client.cursor).toBe(0);
    relay.send({ type: "challenge", agent_id: "ag_x", nonce: "bm9uY2U", epoch: "e1" });
    await until("connected again", () => client.state === "connected");
    expect(relay.frames.filter((f) => f.type === "auth").at(-1)).toMatchObject({ after: 0 });
    relay.send(message(1));
    await until("1 again", () => messages.length === 3);
    expect(messages.map((m) => m.id)).toEqual([1, 2, 1]);
  });

  it("pings every interval; a relay silent past the deadline is dropped, said, and reconnected after its backoff", async () => {
    const { relay, logger, client } = await connecting();
    relay.pong = false;
    client.start();
    await until("connected", () => client.state === "connected");
    for (let ping = 1; ping * pingEveryMs <= silenceMs; ping++) {
      await advance(pingEveryMs);
      await until(`ping ${ping}`, () => relay.frames.filter((f) => f.type === "ping").length === ping);
    }
    expect(client.state).toBe("connected");
    await advance(pingEveryMs);
    await until("the silent socket dropped", () => client.state === "disconnected");
    const silent = Math.ceil(silenceMs / pingEveryMs) * pingEveryMs;
    expect(logger.lines).toContainEqual({ level: "warn", event: "relay heartbeat missed", fields: { silent_ms: silent } });
    const disconnected = logger.lines.find((line) => line.event === "relay disconnected")!;
    expect(disconnected.fields.retry_in_ms).toBeGreaterThanOrEqual(DEFAULTS.initialDelayMs / 2);
    await advance(DEFAULTS.initialDelayMs);
    await until("connected again", () => client.state === "connected");
    expect(relay.connections).toBe(2);
  });

  it("a relay that never sends its challenge is given up at the auth deadline and tried again", async () => {
    const { relay, client } = await connecting();
    relay.challenge = false;
    client.start();
    await until("the connection", () => relay.connections === 1);
    await advance(authDeadlineMs - 1);
    expect(client.state).toBe("connecting");
    await advance(1);
    await until("given up", () => client.state === "disconnected");
    relay.challenge = true;
    await advance(DEFAULTS.initialDelayMs);
    await until("connected on the second try", () => client.state === "connected");
    expect(relay.connections).toBe(2);
  });

  it("replaced (4409): says so and never reconnects, not even on retry", async () => {
    const { relay, logger, client } = await connecting();
    client.start();
    await until("connected", () => client.state === "connected");
    relay.socket!.close(4409, "replaced");
    await until("replaced", () => client.state === "replaced");
    await advance(10 * DEFAULTS.maxDelayMs);
    expect(client.state).toBe("replaced");
    expect(relay.connections).toBe(1);
    expect(logger.lines.map((line) => line.event)).toContain("relay replaced this connection");
    expect(client.reconnectNow()).toBe(false);
  });

  it("a refused key (4003) waits the longest delay, with the relay's reason; retry cuts the wait short", async () => {
    const { relay, logger, client, states } = await connecting();
    client.start();
    await until("connected", () => client.state === "connected");
    expect(client.reconnectNow()).toBe(false);
    relay.send({ type: "error", code: "auth_failed", message: "unknown key" });
    relay.socket!.close(4003, "auth_failed");
    await until("refused", () => client.state === "disconnected");
    expect(states.at(-1)).toEqual(["disconnected", { error: "auth_failed: unknown key" }]);
    expect(logger.lines.find((line) => line.event === "relay disconnected")?.fields).toEqual({ code: 4003, error: "auth_failed: unknown key", retry_in_ms: DEFAULTS.maxDelayMs });
    await advance(DEFAULTS.maxDelayMs - 1);
    expect(client.state).toBe("disconnected");
    expect(client.reconnectNow()).toBe(true);
    await until("connected again", () => client.state === "connected");
    expect(relay.connections).toBe(2);
  });

  it("close is idempotent: one close frame (1000, agent stopping), then closed for good", async () => {
    const { relay, client, states } = await connecting();
    client.start();
    await until("connected", () => client.state === "connected");
    const first = client.close();
    expect(client.close()).toBe(first);
    await first;
    await until("the relay's side closed", () => relay.closes.length === 1);
    expect(relay.closes).toEqual([{ code: 1000, reason: "agent stopping" }]);
    expect(states.filter(([state]) => state === "closed")).toHaveLength(1);
    client.start();
    await advance(DEFAULTS.maxDelayMs);
    expect(relay.connections).toBe(1);
  });
});
