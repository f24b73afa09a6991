// A proxy between the real agent and the real relay for compatibility tests (lanes-compat.e2e.test.ts,
// live-compat.e2e.test.ts): HTTP passes through; on the socket it takes features out of the agent's auth
// frame (an agent from before them) or out of the relay's ready frame (a relay from before them), and
// records what went through; and an agent home pointed at it.
import { createServer } from "node:http";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import WebSocket, { WebSocketServer } from "ws";
import { loadSettings, saveSettings } from "../../../local-agent/settings.ts";
import type { AgentHome } from "./stack.ts";

export interface FeaturelessProxy {
  url: string;
  /** Every frame the relay sent through it, parsed. */
  fromRelay: Record<string, unknown>[];
  /** Every auth frame the agent sent, as it sent it. */
  auths: Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * HTTP passes through as it is; on the socket, the auth frame loses `features` (all of them by default,
 * or those named in `fromAuth`), and the ready frame those named in `fromReady`.
 */
export async function featurelessProxy(target: string, strip: { fromAuth?: string[] | "all"; fromReady?: string[] } = { fromAuth: "all" }): Promise<FeaturelessProxy> {
  const [fromRelay, auths] = [[] as Record<string, unknown>[], [] as Record<string, unknown>[]];
  const sockets = new WebSocketServer({ noServer: true });
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== "host" && name !== "connection" && name !== "content-length")) as Record<string, string>;
      const body = Buffer.concat(chunks);
      const answer = await fetch(target + (req.url ?? "/"), { method: req.method ?? "GET", headers, ...(body.length > 0 ? { body } : {}) });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await answer.arrayBuffer()));
    })();
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.handleUpgrade(req, socket, head, (agent) => {
      const relay = new WebSocket(target.replace(/^http/, "ws") + (req.url ?? "/"));
      const early: string[] = [];
      agent.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString()) as Record<string, unknown>;
        if (frame.type === "auth") {
          auths.push({ ...frame });
          const fromAuth = strip.fromAuth;
          if (fromAuth === "all") delete frame.features;
          else if (fromAuth) frame.features = (frame.features as string[] | undefined)?.filter((f) => !fromAuth.includes(f));
        }
        const text = JSON.stringify(frame);
        if (relay.readyState === WebSocket.OPEN) relay.send(text);
        else early.push(text);
      });
      relay.on("open", () => early.splice(0).forEach((text) => relay.send(text)));
      relay.on("message", (data: Buffer) => {
        const frame = JSON.parse(data.toString()) as Record<string, unknown>;
        fromRelay.push(frame);
        if (frame.type === "ready" && strip.fromReady && Array.isArray(frame.features)) {
          agent.send(JSON.stringify({ ...frame, features: (frame.features as string[]).filter((f) => !strip.fromReady!.includes(f)) }));
        } else agent.send(data.toString());
      });
      relay.on("close", (code, reason) => agent.close(code, reason.toString()));
      agent.on("close", () => relay.close());
      relay.on("error", () => agent.terminate());
      agent.on("error", () => relay.terminate());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    fromRelay,
    auths,
    close: () => new Promise<void>((resolve) => {
      for (const client of sockets.clients) client.terminate();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** `home` with its agent.json's relay_url set to the proxy's `url`, and its settings read again. */
export function throughProxy(home: AgentHome, url: string): AgentHome {
  saveSettings(home.settingsPath, { ...loadSettings(home.settingsPath), relay_url: url });
  return { ...home, settings: loadSettings(home.settingsPath) };
}
