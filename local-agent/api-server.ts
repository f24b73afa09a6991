// The local HTTP API on 127.0.0.1 (default port 19791, the Society AI plugin's): status now, search and
// delegate later. Loopback only, and it refuses requests a web page could make: a Host that is not
// the loopback name and port (DNS rebinding) and any request with an Origin header.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { AgentError } from "./errors.ts";

export const DEFAULT_API_PORT = 19791;
const PORT_ATTEMPTS = 20;

export type Route = (req: IncomingMessage, body: Buffer) => Promise<{ status: number; body: unknown }>;

export interface ApiServer {
  port: number;
  close(): Promise<void>;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Why a request is refused before routing, or null. */
export function refusal(headers: IncomingMessage["headers"], port: number): string | null {
  if (headers.origin !== undefined) return "requests from web pages (with an Origin header) are refused";
  const host = headers.host ?? "";
  const allowed = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  if (!allowed.includes(host.toLowerCase())) return `Host must be 127.0.0.1:${port} or localhost:${port}`;
  return null;
}

const MAX_BODY = 64 * 1024;

export async function startApiServer(preferredPort: number, routes: Record<string, Route>): Promise<ApiServer> {
  let port = preferredPort;
  const server: Server = createServer((req, res) => {
    const why = refusal(req.headers, port);
    if (why) return reply(res, 403, { success: false, error: why });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY) return reply(res, 413, { success: false, error: `body larger than ${MAX_BODY} bytes` });
      const route = routes[`${req.method} ${(req.url ?? "/").split("?")[0]}`];
      if (!route) return reply(res, 404, { success: false, error: `no route ${req.method} ${req.url}` });
      route(req, Buffer.concat(chunks)).then(
        (answer) => reply(res, answer.status, answer.body),
        (err: unknown) => reply(res, 500, { success: false, error: err instanceof Error ? err.message : String(err) }),
      );
    });
  });
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++, port++) {
    const bound = await new Promise<boolean>((resolve) => {
      // Busy (or refused) ports move on to the next one, as the Society AI plugin does.
      const onError = () => {
        server.off("listening", onListening);
        resolve(false);
      };
      const onListening = () => {
        server.off("error", onError);
        resolve(true);
      };
      server.once("error", onError);
      server.once("listening", onListening);
      server.listen(port, "127.0.0.1");
    });
    if (bound) {
      const address = server.address();
      if (address && typeof address !== "string") port = address.port;
      return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
    }
  }
  throw new AgentError("api_port_busy", `ports ${preferredPort}..${preferredPort + PORT_ATTEMPTS - 1} on 127.0.0.1 are all in use; set api_port in the settings file`);
}
