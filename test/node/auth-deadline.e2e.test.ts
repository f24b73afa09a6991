// An unauthenticated WebSocket gets auth_timeout and its 4001 close frame once its auth deadline has
// passed, idle or pinging, over real TCP to the relay in workerd: the inbox's own alarm closes it (an
// idle one used to wait 15 s). The relay runs with a short deadline (the Worker var
// SOCKET_AUTH_DEADLINE_MS, worker/delivery/socket-timings.ts), so the test watches the real alarm
// without waiting out the 5 s default, which test/worker/websocket-auth.test.ts holds. The close frame
// is seen as it arrives (test/support/node/raw-socket-peer.ts): the runtime releases the TCP connection
// itself later for a close the server starts (docs/protocol.md, "The challenge and the epoch").
import { describe, expect, it } from "vitest";
import { CLOSE_CODES, PING_FRAME } from "../../protocol/index.ts";
import { rawSocketPeer } from "../support/node/raw-socket-peer.ts";
import { relayFixture } from "../support/node/stack.ts";

const AUTH_DEADLINE_MS = 400;
const fixture = relayFixture({ vars: { SOCKET_AUTH_DEADLINE_MS: String(AUTH_DEADLINE_MS) } });

describe("the unauthenticated-socket deadline", () => {
  it.each([
    ["an idle", false],
    ["a pinging", true],
  ])("regression: %s socket that never authenticates gets auth_timeout and its close frame once the deadline passed (was 15 s idle)", async (_, ping) => {
    const { home } = await fixture.setUp();
    const peer = await rawSocketPeer(fixture.relay().port, home.settings.agent_id, ping ? { frame: PING_FRAME, everyMs: 100 } : undefined);
    try {
      const close = await peer.frame("the relay's close frame", (f) => f.op === 8, 10_000);
      expect(close.code).toBe(CLOSE_CODES.authTimeout);
      const texts = peer.frames.flatMap((f) => (f.text ? [JSON.parse(f.text) as { type: string; code?: string }] : []));
      expect(texts[0]).toMatchObject({ type: "challenge" });
      expect(texts.at(-1)).toMatchObject({ type: "error", code: "auth_timeout" });
      // Never before the deadline: counted from before the request, so the relay's clock for it started later.
      expect(close.at - peer.requestedAt).toBeGreaterThanOrEqual(AUTH_DEADLINE_MS);
    } finally {
      peer.destroy();
    }
  });
});
