// Over real TCP to the relay in workerd: a peer that never answers the server's close frame loses its
// connection once the grace runs out (it kept it for 120 s and more: the runtime waits for the peer for
// ever, hibernated or not), and a frame over the runtime's 32 MiB limit is closed with 1009 — by the
// runtime itself, before the Durable Object sees it (worker/delivery/socket-limits.ts, answerSocketError).
// The relay runs with a short auth deadline and close grace (Worker vars, worker/delivery/socket-timings.ts):
// the real alarm does the closing and the ending, without the 5 s + 2 s of the defaults.
import WebSocket from "ws";
import { describe, expect, it } from "vitest";
import { CLOSE_CODES } from "../../protocol/index.ts";
import { maskedText, rawSocketPeer } from "../support/node/raw-socket-peer.ts";
import { relayFixture, waitUntil } from "../support/node/stack.ts";
import type { LocalRelay, RelayLogLine } from "../support/node/stack.ts";

/** The relay's log lines that match, once there is one (workerd's log may come a moment after the socket's end). */
async function logged(relay: LocalRelay, pattern: RegExp): Promise<RelayLogLine[]> {
  const lines: RelayLogLine[] = [];
  await waitUntil(`the relay's log line ${pattern}`, () => lines.push(...relay.takeLogs(pattern)) > 0);
  return lines;
}

const AUTH_DEADLINE_MS = 400;
const CLOSE_ANSWER_GRACE_MS = 400;

describe("closes the peer never answers", () => {
  const fixture = relayFixture({ vars: { SOCKET_AUTH_DEADLINE_MS: String(AUTH_DEADLINE_MS), SOCKET_CLOSE_GRACE_MS: String(CLOSE_ANSWER_GRACE_MS) } });
  it.each([
    ["an idle", false],
    ["a pinging", true],
  ])("regression: %s peer that ignores the 4001 close frame loses its TCP connection once the grace runs out (kept it 120 s and more)", async (_, ping) => {
    const { home } = await fixture.setUp();
    const peer = await rawSocketPeer(fixture.relay().port, home.settings.agent_id, ping ? { frame: '{ "type": "ping" }', everyMs: 100 } : undefined);
    try {
      const endedAt = await peer.ended(10_000);
      expect(peer.frames.filter((f) => f.op === 8).map((f) => f.code)).toEqual([CLOSE_CODES.authTimeout]);
      // The relay says why every connection of the inbox ended (its warning, taken here rather than printed).
      expect(await logged(fixture.relay(), /did not answer the close frame/)).toEqual([
        { level: "warn", message: "Inbox.alarm: 1 unauthenticated socket(s) did not answer the close frame within 0.4 s; ending every connection of this inbox" },
      ]);
      // Not before the peer had its grace: counted from before the request, so the relay's clock started later.
      expect(endedAt - peer.requestedAt).toBeGreaterThanOrEqual(AUTH_DEADLINE_MS + CLOSE_ANSWER_GRACE_MS);
    } finally {
      peer.destroy();
    }
  });
});

describe("frames over the runtime's limit", () => {
  // The default 5 s deadline: writing 33 MiB on a loaded machine may take longer than a short one.
  const fixture = relayFixture();
  it("a 33 MiB frame is refused by the runtime with close 1009, and the inbox still takes connections", async () => {
    const { home } = await fixture.setUp();
    const peer = await rawSocketPeer(fixture.relay().port, home.settings.agent_id);
    try {
      await peer.frame("the challenge", (f) => f.op === 1);
      peer.write(maskedText(`{"type":"ping","pad":"${"a".repeat(33 * 1024 * 1024)}"}`));
      await peer.frame("a close frame", (f) => f.op === 8, 10_000);
      expect(peer.frames.filter((f) => f.op === 8).map((f) => f.code)).toEqual([1009]);
      // One warning line, not an error: the peer's refusal, handled (socket-limits.ts answerSocketError).
      expect(await logged(fixture.relay(), /32 MiB/)).toEqual([{ level: "warn", message: "Inbox.webSocketError: a frame over the runtime's 32 MiB limit, closed with 1009" }]);
      // (The runtime itself ends this connection ~15 s later, answered or not; measured, not waited for here.)
    } finally {
      peer.destroy();
    }
    const url = `${fixture.relay().url.replace(/^http/, "ws")}/inbox/${home.settings.agent_id}/connect`;
    const again = new WebSocket(url, { perMessageDeflate: false });
    const frame = await new Promise<string>((resolve, reject) => again.once("message", (data) => resolve(String(data))).once("error", reject));
    expect(JSON.parse(frame)).toMatchObject({ type: "challenge" });
    again.terminate();
  });
});
