// The local HTTP API on 127.0.0.1 (default port 19791, the Society AI plugin's): status, search and
// delegate (JSON routes), and the inspector page with /metrics (`pages`, inspector-routes.ts). Loopback
// only: a Host that is not the loopback name and port (DNS rebinding) is refused everywhere; the JSON
// routes also refuse any request with an Origin header (a web page's), the pages all but their own.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { AgentError } from "./errors.ts";

export const DEFAULT_API_PORT = 19791;
const PORT_ATTEMPTS = 20;

export type Route = (req: IncomingMessage, body: Buffer) => Promise<{ status: number; body: unknown }>;

/** A route that writes its own answer (a page, a script, an event stream, metrics text). */
export type PageRoute = (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void> | void;
/** The page route for a request, or null when it is not one of the pages. */
export type Pages = (method: string, path: string) => PageRoute | null;

export interface ApiServer {
  port: number;
  close(): Promise<void>;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Why a request's Host is refused (it is not this server's loopback name and port), or null. */
export function hostRefusal(headers: IncomingMessage["headers"], port: number): string | null {
  const host = headers.host ?? "";
  const allowed = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  return allowed.includes(host.toLowerCase()) ? null : `Host must be 127.0.0.1:${port} or localhost:${port}`;
}

const MAX_BODY = 64 * 1024;

export async function startApiServer(preferredPort: number, routes: Record<string, Route>, pages: Pages = () => null): Promise<ApiServer> {
  let port = preferredPort;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const page = pages(req.method ?? "GET", path);
    const why = hostRefusal(req.headers, port) ?? (page || req.headers.origin === undefined ? null : "requests from web pages (with an Origin header) are refused");
    if (why) return reply(res, 403, { success: false, error: why });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) chunks.push(chunk);
    });
    req.on("end", () => {
      if (size > MAX_BODY) return reply(res, 413, { success: false, error: `body larger than ${MAX_BODY} bytes` });
      if (page) {
        return void Promise.resolve(page(req, res, Buffer.concat(chunks))).catch((err: unknown) => {
          if (!res.headersSent) reply(res, 500, { success: false, error: err instanceof Error ? err.message : String(err) });
          else res.destroy();
        });
      }
      const route = routes[`${req.method} ${path}`];
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
      // Open connections too: an inspector page's event stream would otherwise hold the close forever.
      return {
        port,
        close: () =>
          new Promise((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      };
    }
  }
  throw new AgentError("api_port_busy", `ports ${preferredPort}..${preferredPort + PORT_ATTEMPTS - 1} on 127.0.0.1 are all in use; set api_port in the settings file`);
}
