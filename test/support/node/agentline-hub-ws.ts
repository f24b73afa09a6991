// GET /hub/ws at the stand-in hub: the first frame must be {"type":"auth","token":…} within the auth
// timeout (4001 "Auth timeout" / "Missing token" / "Invalid token"; a frame that is not a JSON object
// drops the connection without a close frame, 1006), then {"type":"auth_ok","agent_id"}; ping → pong;
// {"type":"inbox_update"} on every new record for the agent; a heartbeat after each quiet interval
// measured from the last client frame, and today 4002 after the idle limit. The token is checked only in
// the auth frame, so an open socket outlives a refresh. Imported by agentline-hub.ts.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { RawData, WebSocket } from "ws";
import { HubError } from "./agentline-hub-errors.ts";
import type { Registry } from "./agentline-hub-registry.ts";
import type { HubWorld } from "./agentline-hub-world.ts";

export interface HubSockets {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sends {"type":"inbox_update"} to every open socket of the agent. */
  inboxUpdate(agentId: string): void;
  close(): void;
}

export function createSockets(world: HubWorld, registry: Registry): HubSockets {
  const server = new WebSocketServer({ noServer: true });
  const open = new Map<WebSocket, { agentId: string; send(frame: object): void }>();
  let count = 0;

  server.on("connection", (ws: WebSocket) => {
    const socket = ++count;
    let agentId: string | null = null;
    // Quiet intervals since the last client frame: counted, not read off the clock, so a loaded test
    // machine whose timers fire late sends the same heartbeats before the ghost close as the hub does.
    let quietIntervals = 0;
    let timer: NodeJS.Timeout | undefined;
    const log = (dir: "in" | "out" | "close", data: string) => world.logs.wsFrames.push({ socket, agent_id: agentId, dir, data, at: Date.now() });
    const send = (frame: object) => {
      const text = JSON.stringify(frame);
      log("out", text);
      ws.send(text);
    };
    const close = (code: number, reason: string) => {
      clearTimeout(timer);
      log("close", `${code} ${reason}`);
      ws.close(code, reason);
    };
    const drop = () => {
      clearTimeout(timer);
      log("close", "1006 dropped");
      ws.terminate();
    };
    /** The hub's receive timeout: after each quiet interval a heartbeat, or (today) the ghost close. */
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        quietIntervals += 1;
        if (quietIntervals * world.timings.wsHeartbeatMs >= world.timings.wsIdleCloseMs) return close(4002, "Ghost connection: no client response");
        send({ type: "heartbeat" });
        arm();
      }, world.timings.wsHeartbeatMs);
    };
    timer = setTimeout(() => close(4001, "Auth timeout"), world.timings.wsAuthTimeoutMs);

    ws.on("message", (data: RawData, isBinary: boolean) => {
      const text = data.toString();
      log("in", text);
      let frame: unknown;
      try {
        frame = isBinary ? undefined : JSON.parse(text);
      } catch {
        frame = undefined;
      }
      if (typeof frame !== "object" || frame === null || Array.isArray(frame)) return drop();
      const { type, token } = frame as { type?: unknown; token?: unknown };
      if (agentId === null) {
        if (typeof token !== "string" || token === "") return close(4001, "Missing token");
        try {
          agentId = registry.authenticate({ method: "GET", url: new URL("http://hub/hub/ws"), headers: { authorization: `Bearer ${token}` }, json: async () => null }, "db");
        } catch (err) {
          if (err instanceof HubError) return close(4001, "Invalid token");
          throw err;
        }
        send({ type: "auth_ok", agent_id: agentId });
        open.set(ws, { agentId, send });
        quietIntervals = 0;
        return arm();
      }
      quietIntervals = 0;
      if (type === "ping") send({ type: "pong" });
      arm();
    });
    ws.on("close", () => {
      clearTimeout(timer);
      open.delete(ws);
    });
    ws.on("error", () => undefined);
  });

  return {
    upgrade: (req, socket, head) => server.handleUpgrade(req, socket, head, (ws) => server.emit("connection", ws, req)),
    inboxUpdate: (agentId) => {
      for (const [ws, peer] of open) if (peer.agentId === agentId && ws.readyState === ws.OPEN) peer.send({ type: "inbox_update" });
    },
    close: () => {
      for (const ws of open.keys()) ws.terminate();
      for (const ws of server.clients) ws.terminate();
      server.close();
    },
  };
}
