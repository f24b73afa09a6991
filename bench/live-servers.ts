// bench:live's stand-ins for the outside world, real node:http servers on ephemeral loopback ports: a local app
// that echoes each request's body as its answer, a slow app that holds every request until released, and a
// small A2A JSON-RPC server (the gateway's channel as a2a-facts describes it: a bearer per peer, SendMessage
// answered with a completed task at once). Imported by bench/live-parts.ts.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";

export interface BenchServer {
  url: string;
  port: number;
  /** Requests taken so far. */
  taken(): number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => resolve(Buffer.concat(chunks))).on("error", reject);
  });
}

async function serve(handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): Promise<BenchServer & { server: Server }> {
  let count = 0;
  const server = createServer((req, res) => {
    readBody(req).then((body) => {
      count++;
      handle(req, res, body);
    }, () => res.destroy()); // the client went away mid-body: nothing to answer
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    server, port, url: `http://127.0.0.1:${port}`, taken: () => count,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Answers 200 with the request's own body and content type: the answer is as large as the request. */
export function startEchoApp(): Promise<BenchServer> {
  return serve((req, res, body) => res.writeHead(200, { "content-type": req.headers["content-type"] ?? "application/octet-stream" }).end(body));
}

/** Holds every request until releaseAll(), which answers each held one 200; later ones are held again. */
export async function startSlowApp(): Promise<BenchServer & { releaseAll(): void }> {
  const held: ServerResponse[] = [];
  const app = await serve((_req, res) => void held.push(res));
  return Object.assign(app, { releaseAll: () => { for (const res of held.splice(0)) res.writeHead(200).end("late ok"); } });
}

/** An A2A JSON-RPC endpoint at /a2a/v1: 401 without the peer's bearer, a completed task for SendMessage at once. */
export function startA2aStandin(peerToken: string): Promise<BenchServer> {
  return serve((req, res, body) => {
    const json = (status: number, value: unknown) => res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }).end(JSON.stringify(value));
    if (req.method === "GET" && req.url === "/.well-known/agent-card.json") {
      return json(200, { name: "Bench", description: "A2A stand-in", supportedInterfaces: [{ url: `http://${req.headers.host}/a2a/v1`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }], version: "0", capabilities: { streaming: false, pushNotifications: false }, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [] });
    }
    if (req.method !== "POST" || req.url !== "/a2a/v1") return json(404, { error: "Not found" });
    if (req.headers.authorization !== `Bearer ${peerToken}`) return json(401, { error: "Unauthorized" });
    const call = JSON.parse(body.toString("utf8")) as { id: string | number; params: { message: { contextId?: string; parts: { text?: string }[] } } };
    const text = call.params.message.parts.map((part) => part.text ?? "").join("\n");
    const at = new Date().toISOString();
    json(200, {
      jsonrpc: "2.0", id: call.id,
      result: { task: { id: crypto.randomUUID(), contextId: call.params.message.contextId ?? `ctx-${crypto.randomUUID()}`, status: { state: "TASK_STATE_COMPLETED", timestamp: at }, artifacts: [{ artifactId: crypto.randomUUID(), parts: [{ text: `echo: ${text}` }] }], history: [] } },
    });
  });
}
