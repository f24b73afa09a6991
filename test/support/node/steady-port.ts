// A loopback port for a server a test stops and starts again on the same port (an app or a gateway that
// is down for a while, a relay restarted on its storage, an agent's local API): picked below the ports
// the OS hands out itself, so nothing else — a listen on port 0 or the local end of a connection, of this
// test or of a file running beside it — can take it while the server is down. Used by stack.ts,
// test/node/forward-app.ts and webhook-app.ts.
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

const LOWEST = 10_000;

/** The lowest port the OS hands out by itself: Linux's ip_local_port_range, else the IANA dynamic range. */
function handedOutFrom(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 49_152;
  } catch {
    // No such file: not Linux. macOS and Windows hand out the IANA dynamic range.
    return 49_152;
  }
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A free port between 10000 and the OS's own range, at random (files side by side rarely pick the same). */
export async function steadyPort(): Promise<number> {
  const below = handedOutFrom();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (await isFree(port)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${below} in 50 tries`);
}
