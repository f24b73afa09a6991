// Anonymous clients that keep an inbox's sockets busy, as the lock-out probe of issue 32 did: each opens
// GET /inbox/{id}/connect without a proof, never answers the challenge, and opens again as soon as the relay
// times it out (its auth_timeout frame at the auth deadline) — or, when the upgrade was refused 429, after `retryMs`. Counts what the
// relay did to them. Used by test/node/lockout.e2e.test.ts and bench/lockout-scenario.ts.
import WebSocket from "ws";

export interface AnonymousFlood {
  /** Upgrades the relay took (101). */
  readonly opened: number;
  /** Upgrades it refused (429 too_many_connections, or any other answer than 101). */
  readonly refused: number;
  stop(): Promise<void>;
}

export function anonymousFlood(relayUrl: string, agentId: string, clients: number, retryMs = 100): AnonymousFlood {
  const url = `${relayUrl.replace(/^http/, "ws")}/inbox/${agentId}/connect`;
  const live = new Set<WebSocket>();
  const timers = new Set<NodeJS.Timeout>();
  const counts = { opened: 0, refused: 0 };
  let running = true;
  /** Opens again after `delayMs`, once per socket (its auth_timeout frame, then its close, would ask twice). */
  const later = (delayMs: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      open();
    }, delayMs);
    timers.add(timer);
  };
  const open = () => {
    if (!running) return;
    const ws = new WebSocket(url, { perMessageDeflate: false });
    live.add(ws);
    let upgraded = false;
    let replaced = false;
    const again = (delayMs: number) => {
      if (replaced) return;
      replaced = true;
      later(delayMs);
    };
    ws.on("upgrade", () => {
      upgraded = true;
      counts.opened += 1;
    });
    ws.on("unexpected-response", (_req, res) => {
      counts.refused += 1;
      res.resume();
      ws.terminate();
    });
    // The relay's auth_timeout comes just before its close frame; a `ws` client reports the close only once
    // the TCP connection ends (the runtime may keep it a while), so the slot is taken again from here.
    ws.on("message", (data) => {
      if (!String(data).includes('"auth_timeout"')) return;
      ws.terminate();
      again(0);
    });
    // A refused upgrade and a dropped connection both end here; the close that follows reopens.
    ws.on("error", () => undefined);
    ws.on("close", () => {
      live.delete(ws);
      again(upgraded ? 0 : retryMs);
    });
  };
  for (let i = 0; i < clients; i++) open();
  return {
    get opened() {
      return counts.opened;
    },
    get refused() {
      return counts.refused;
    },
    async stop() {
      running = false;
      for (const timer of timers) clearTimeout(timer);
      const ended = [...live].map((ws) => new Promise<void>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : ws.once("close", () => resolve()))));
      for (const ws of live) ws.terminate();
      await Promise.all(ended);
    },
  };
}
