// A loopback TCP proxy that can freeze its links: bytes stop flowing both ways and nothing is closed,
// which is what a half-open network looks like to both ends. Links opened after a freeze carry bytes
// again (the network came back). Used by heartbeat.e2e.test.ts and journal.e2e.test.ts.
import { createConnection, createServer } from "node:net";
import type { Server, Socket } from "node:net";

export interface FreezableProxy {
  port: number;
  url: string;
  /** Stops carrying bytes on every open link without closing it. */
  freeze(): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<FreezableProxy> {
  const links: [Socket, Socket][] = [];
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop);
    upstream.on("error", drop);
    links.push([client, upstream]);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    freeze: () => {
      for (const [client, upstream] of links) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    close: async () => {
      for (const [client, upstream] of links) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
