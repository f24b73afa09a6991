// A small real `ws` server playing the relay for tests of the agent's socket (relay-client.test.ts,
// relay-client-lanes.test.ts, relay-client-live.test.ts): it challenges (unless told not to), answers auth
// with `ready` (naming `features` when given, with a test's own fields over the defaults), answers pings
// (unless told not to), records every frame the agent sends and how each socket closed, and sends what a
// test gives it.
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export interface FakeRelay {
  url: string;
  /** Connections the agent opened. */
  connections: number;
  /** Every frame the agent sent, in order. */
  frames: { type: string; [key: string]: unknown }[];
  /** Send a challenge on connect (false: a relay that hangs before it). */
  challenge: boolean;
  /** Answer pings (false: a relay gone silent). */
  pong: boolean;
  /** How each socket closed, as the relay saw it. */
  closes: { code: number; reason: string }[];
  /** The latest socket. */
  socket: WebSocket | null;
  send(frame: object): void;
  drop(): void;
  close(): Promise<void>;
}

/** A relay that challenges, answers auth with `ready` (naming `features` when given, `ready`'s fields over the defaults) and records the rest. */
export async function startFakeRelay(features: string[] | undefined, ready: Record<string, unknown> = {}): Promise<FakeRelay> {
  const server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server });
  const relay: FakeRelay = {
    url: "",
    connections: 0,
    frames: [],
    challenge: true,
    pong: true,
    closes: [],
    socket: null,
    send: (frame) => relay.socket?.send(JSON.stringify(frame)),
    drop: () => relay.socket?.terminate(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => resolve());
      }),
  };
  wss.on("connection", (ws) => {
    relay.connections++;
    relay.socket = ws;
    ws.on("close", (code, reason) => relay.closes.push({ code, reason: reason.toString() }));
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as FakeRelay["frames"][number];
      relay.frames.push(frame);
      if (frame.type === "auth") ws.send(JSON.stringify({ type: "ready", after: frame.after, backlog: 0, window: 16, dead: 0, last_id: 0, ...(features ? { features } : {}), ...ready }));
      if (frame.type === "ping" && relay.pong) ws.send('{"type":"pong"}');
    });
    if (relay.challenge) ws.send(JSON.stringify({ type: "challenge", agent_id: "ag_x", nonce: "bm9uY2U", epoch: "e1" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  relay.url = `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`;
  return relay;
}
