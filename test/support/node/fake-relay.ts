// A small real `ws` server playing the relay for tests of the agent's socket (relay-client-lanes.test.ts,
// relay-client-live.test.ts): it challenges, answers auth with `ready` (naming `features` when given),
// records every frame the agent sends and sends what a test gives it.
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export interface FakeRelay {
  url: string;
  /** Every frame the agent sent, in order. */
  frames: { type: string; [key: string]: unknown }[];
  send(frame: object): void;
  drop(): void;
  close(): Promise<void>;
}

/** A relay that challenges, answers auth with `ready` (naming `features` when given) and records the rest. */
export async function startFakeRelay(features: string[] | undefined): Promise<FakeRelay> {
  const server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server });
  let socket: WebSocket | null = null;
  const relay: FakeRelay = {
    url: "",
    frames: [],
    send: (frame) => socket?.send(JSON.stringify(frame)),
    drop: () => socket?.terminate(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.close(() => resolve());
      }),
  };
  wss.on("connection", (ws) => {
    socket = ws;
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as FakeRelay["frames"][number];
      relay.frames.push(frame);
      if (frame.type === "auth") ws.send(JSON.stringify({ type: "ready", after: frame.after, backlog: 0, window: 16, dead: 0, last_id: 0, ...(features ? { features } : {}) }));
      if (frame.type === "ping") ws.send('{"type":"pong"}');
    });
    ws.send(JSON.stringify({ type: "challenge", agent_id: "ag_x", nonce: "bm9uY2U", epoch: "e1" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  relay.url = `http://127.0.0.1:${address && typeof address !== "string" ? address.port : 0}`;
  return relay;
}
