// The relay and installed agents upgrade separately. Between this agent and this relay sits a proxy that
// takes `features` out of the agent's auth frame: the relay then sees an agent from before lanes (and keeps
// its one-range order for it), and the agent gets a `ready` without features, as from a relay before lanes
// (and keeps its cursor by the lowest open id). Both older paths run here against each other's newer code:
// every message arrives once, in order per lane, nothing is left at the relay, and no frame carries a lane.
// The same pairing with lanes on is lanes.e2e.test.ts; raw older-agent frames against the relay are in
// test/worker/.
import { createServer } from "node:http";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import type { AgentHome } from "../support/node/stack.ts";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { loadSettings, saveSettings } from "../../local-agent/settings.ts";
import { postHook, queueItems, relayFixture, waitUntil, waitWhileProgressing } from "../support/node/stack.ts";
import { startStandinApp } from "./forward-app.ts";

const fixture = relayFixture();

interface FeaturelessProxy {
  url: string;
  /** Every frame the relay sent through it, parsed. */
  fromRelay: Record<string, unknown>[];
  /** Every auth frame the agent sent, as it sent it. */
  auths: Record<string, unknown>[];
  close(): Promise<void>;
}

/** HTTP passes through as it is; on the socket, the auth frame loses `features`. */
async function featurelessProxy(target: string): Promise<FeaturelessProxy> {
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
          delete frame.features;
        }
        const text = JSON.stringify(frame);
        if (relay.readyState === WebSocket.OPEN) relay.send(text);
        else early.push(text);
      });
      relay.on("open", () => early.splice(0).forEach((text) => relay.send(text)));
      relay.on("message", (data: Buffer) => {
        fromRelay.push(JSON.parse(data.toString()) as Record<string, unknown>);
        agent.send(data.toString());
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

function throughProxy(home: AgentHome, url: string): AgentHome {
  saveSettings(home.settingsPath, { ...loadSettings(home.settingsPath), relay_url: url });
  return { ...home, settings: loadSettings(home.settingsPath) };
}

describe("an agent and a relay that do not both speak lanes", () => {
  it("keep the order of before: everything arrives once, in order, the cursor passes the last id, no frame carries a lane", async () => {
    const { gateway, home } = await fixture.setUp("Mixed versions");
    const proxy = await featurelessProxy(fixture.relay().url);
    fixture.cleanups.push(() => proxy.close());
    const shop = await startStandinApp();
    fixture.cleanups.push(() => shop.close());
    const source = await addSource(await inboxAccess(home.settings), { name: "shop", kind: "token", target: { forward: `${shop.url}/hooks`, allowPublic: false } });
    for (let n = 1; n <= 6; n++) {
      expect((await fetch(`${source.post_url}?n=${n}`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"n":${n}}` })).status).toBe(200);
      expect((await postHook(fixture.relay().url, home, "agentgram_inbox/agent", `{"n":${n}}`)).status).toBe(202);
    }
    const agent = await fixture.run(throughProxy(home, proxy.url));
    await waitWhileProgressing("six at the shop and six at the gateway", () => shop.requests.length === 6 && gateway.received.length === 6, () => [shop.requests.length, gateway.received.length]);
    await waitUntil("the relay holding nothing", async () => (await queueItems(fixture.relay().url, home, "all")).length === 0);
    expect(shop.requests.map((r) => r.body.toString())).toEqual([1, 2, 3, 4, 5, 6].map((n) => `{"n":${n}}`));
    expect(gateway.received.map((r) => r.body.toString())).toEqual([1, 2, 3, 4, 5, 6].map((n) => `{"n":${n}}`));
    // The agent asked for lanes; the relay never saw the ask, and answered as a relay from before.
    expect(proxy.auths[0]).toMatchObject({ type: "auth", features: ["lanes"] });
    const ready = proxy.fromRelay.find((f) => f.type === "ready")!;
    expect(ready.features ?? []).not.toContain("lanes");
    const messages = proxy.fromRelay.filter((f) => f.type === "message");
    expect(messages).toHaveLength(12);
    for (const frame of messages) expect(frame).not.toHaveProperty("lane");
    // In id order, as the one-range relay sends.
    expect(messages.map((f) => f.id)).toEqual([...messages.map((f) => f.id as number)].sort((a, b) => a - b));
    await waitUntil("the agent's cursor past the last id", () => agent.status().delivery.cursor === (messages.at(-1)!.id as number));
    await agent.close();
  });
});
