// Serves the local API's Hono app (api-app.ts) on 127.0.0.1 through @hono/node-server, on the preferred
// port (default 19791, the Society AI plugin's) or, when that one is busy, the next free one of 20.
// Used by local-api.ts; covered by test/node/api-server.test.ts.
import { createAdaptorServer } from "@hono/node-server";
import type { Server } from "node:http";
import type { Hono } from "hono";
import { AgentError } from "../errors.ts";

export const DEFAULT_API_PORT = 19791;
const PORT_ATTEMPTS = 20;

export interface ApiServer {
  port: number;
  close(): Promise<void>;
}

/** Listens on `port`; false when it is taken (or refused). */
function listenOn(server: Server, port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
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
}

export async function startApiServer(preferredPort: number, app: Hono): Promise<ApiServer> {
  // overrideGlobalObjects false: inside the gateway (the plugin) the process's Request and Response are
  // the gateway's, not ours to replace.
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  for (let attempt = 0, port = preferredPort; attempt < PORT_ATTEMPTS; attempt++, port++) {
    // Busy (or refused) ports move on to the next one, as the Society AI plugin does.
    if (!(await listenOn(server, port))) continue;
    const address = server.address();
    let closing: Promise<void> | null = null;
    return {
      port: address && typeof address !== "string" ? address.port : port,
      // Open connections too: an inspector page's event stream would otherwise hold the close forever.
      close: () =>
        (closing ??= new Promise((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        })),
    };
  }
  throw new AgentError("api_port_busy", `ports ${preferredPort}..${preferredPort + PORT_ATTEMPTS - 1} on 127.0.0.1 are all in use; set api_port in the settings file`);
}
