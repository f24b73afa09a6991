// What bounds an inbox's sockets: the cap on sockets that have not authenticated, the end of a
// connection whose peer never answers the server's close, and frames too big to take (1009).
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { CLOSE_CODES } from "../../protocol/index.ts";
import {
  CLOSE_ANSWER_GRACE_MS,
  CLOSE_MESSAGE_TOO_BIG,
  MAX_CLIENT_FRAME_BYTES,
  UNANSWERED_RECHECK_MS,
  UNAUTHENTICATED_SOCKET_CAP,
} from "../../worker/delivery/socket-limits.ts";
import type { SocketState } from "../../worker/delivery/socket-session.ts";
import { claimInbox, errorCode, relayFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { UPGRADE_HEADERS, authFrame, closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { ageSockets, eventually, ids, inboxWithHooks, queued, stubOf } from "../support/workerd/socket-fixtures.ts";

afterEach(() => closeAllSockets());

/** A peer that never answers a close frame (the runtime's own client answers unless told not to). */
async function deafPeer(inbox: ClaimedInbox): Promise<{ ws: WebSocket; frames: string[] }> {
  const res = await relayFetch(`/inbox/${inbox.agent.id}/connect`, { headers: UPGRADE_HEADERS });
  if (res.status !== 101 || !res.webSocket) throw new Error(`connect refused: ${res.status}`);
  const frames: string[] = [];
  res.webSocket.addEventListener("message", (event) => {
    frames.push(String(event.data));
  });
  res.webSocket.accept({ allowHalfOpen: true });
  return { ws: res.webSocket, frames };
}

/**
 * What workerd printed of the inbox's reset (ctx.abort: "uncaught exception … clawrelay: <why>" and its
 * stack), held by the test run (test/support/node/runtime-log.ts) and taken here: it is the runtime's
 * own account of the reset this test provoked, not a failure, so it is asserted rather than printed.
 */
async function runtimeReports(why: string): Promise<string[]> {
  const reports: string[] = [];
  await eventually(async () => {
    const res = await fetch(`${env.TEST_HUB_URL}/__test/runtime-log?match=${encodeURIComponent(why.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))}`);
    reports.push(...((await res.json()) as string[]));
    expect(reports).toHaveLength(1);
  }, 10_000);
  return reports;
}

/** The inbox's warnings from here to the end of the test (the object runs in this isolate), asserted rather than printed. */
function reapWarnings(): () => string[] {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  onTestFinished(() => warn.mockRestore());
  return () => warn.mock.calls.map((args) => args.map(String).join(" "));
}

const serverSockets = (inbox: ClaimedInbox) =>
  runInDurableObject(stubOf(inbox), (instance) => instance.sockets().map((ws) => ({ readyState: ws.readyState, authed: (ws.deserializeAttachment() as SocketState).authed })));

describe("the cap on unauthenticated sockets", () => {
  it(`regression: socket ${UNAUTHENTICATED_SOCKET_CAP + 1} waiting for auth is refused 429 too_many_connections with Retry-After, counted across hibernation (2,000 were all accepted)`, async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const waiting = [];
    for (let i = 0; i < UNAUTHENTICATED_SOCKET_CAP; i++) {
      const client = await connect(inbox.agent.id);
      waiting.push({ client, challenge: await client.next("challenge") });
    }
    // Counted from the sockets' attachments, which survive hibernation; the object's memory does not.
    await evictDurableObject(stubOf(inbox), { webSockets: "hibernate" });
    const refused = await relayFetch(`/inbox/${inbox.agent.id}/connect`, { headers: UPGRADE_HEADERS });
    expect(refused.status).toBe(429);
    expect(refused.webSocket).toBeNull();
    expect(refused.headers.get("content-type")).toContain("application/json");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((5000 + CLOSE_ANSWER_GRACE_MS) / 1000));
    expect(await errorCode(refused)).toBe("too_many_connections");

    // One of them authenticates: it no longer counts, so the next connection is taken.
    const first = waiting[0]!;
    first.client.send(authFrame(first.challenge, inbox.agent));
    await first.client.next("ready");
    expect(ids(await first.client.messages(1))).toEqual(ids(sent));
    const next = await connect(inbox.agent.id);
    await next.next("challenge");
    // And one that leaves frees its place too.
    await expect(connect(inbox.agent.id)).rejects.toThrow(/429/);
    waiting[1]!.client.close();
    await eventually(async () => void (await (await connect(inbox.agent.id)).next("challenge")));
  });

  it("sockets that authenticated do not count: a connected agent never blocks its own reconnection", async () => {
    const inbox = await claimInbox();
    for (let i = 0; i < UNAUTHENTICATED_SOCKET_CAP + 2; i++) {
      const client = await connect(inbox.agent.id);
      await client.auth(inbox.agent);
    }
    const states = await serverSockets(inbox);
    expect(states.filter((s) => !s.authed)).toEqual([]);
  });
});

describe("a close the peer never answers", () => {
  it("regression: the connection of an unauthenticated socket whose peer ignores the close frame is ended once its grace runs out (it stayed for ever)", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const deaf = await deafPeer(inbox);
    await ageSockets(inbox, 5000);
    await runDurableObjectAlarm(stubOf(inbox));
    await eventually(async () => expect(deaf.frames.map((f) => (JSON.parse(f) as { code?: string; type: string }).code ?? (JSON.parse(f) as { type: string }).type)).toEqual(["challenge", "auth_timeout"]));
    expect(await serverSockets(inbox)).toEqual([{ readyState: WebSocket.CLOSING, authed: false }]);

    // Within its grace nothing happens; the alarm is set for when it runs out.
    expect(await runDurableObjectAlarm(stubOf(inbox))).toBe(true);
    expect(await serverSockets(inbox)).toHaveLength(1);
    await ageSockets(inbox, CLOSE_ANSWER_GRACE_MS);
    const warned = reapWarnings();
    await expect(runDurableObjectAlarm(stubOf(inbox))).rejects.toThrow(/did not answer the close frame/);
    expect(warned()).toEqual([`Inbox.alarm: 1 unauthenticated socket(s) did not answer the close frame within ${CLOSE_ANSWER_GRACE_MS / 1000} s; ending every connection of this inbox`]);
    expect(await runtimeReports(`clawrelay: 1 unauthenticated socket(s) did not answer the close frame within ${CLOSE_ANSWER_GRACE_MS / 1000} s`)).toEqual([expect.stringContaining("uncaught exception")]);
    expect(await serverSockets(inbox)).toEqual([]);

    // Only the connections ended: what is stored is there, and the agent connects as before.
    expect(await queued(inbox)).toBe(1);
    const agent = await connect(inbox.agent.id);
    await agent.auth(inbox.agent);
    expect(ids(await agent.messages(1))).toEqual(ids(sent));
  });

  it("regression: while the agent is connected, a socket that ignores the close never disconnects it (it was dropped after 62 s); once the agent leaves, the next alarm ends the socket", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const agent = await connect(inbox.agent.id);
    await agent.auth(inbox.agent);
    expect(ids(await agent.messages(1))).toEqual(ids(sent));
    await deafPeer(inbox);
    await ageSockets(inbox, 5000);
    await runDurableObjectAlarm(stubOf(inbox));
    // Far past the point the old code ended every connection (grace + 60 s): nothing is reset, and the
    // alarm stays set to look again.
    await ageSockets(inbox, CLOSE_ANSWER_GRACE_MS + 5 * UNANSWERED_RECHECK_MS);
    await expect(runDurableObjectAlarm(stubOf(inbox))).resolves.toBe(true);
    expect((await serverSockets(inbox)).sort((a, b) => a.readyState - b.readyState)).toEqual([
      { readyState: WebSocket.OPEN, authed: true },
      { readyState: WebSocket.CLOSING, authed: false },
    ]);
    await agent.expectQuiet();
    agent.ack(sent[0]!.id);
    await agent.sync();
    expect(agent.closed).toBeNull();
    expect(await queued(inbox)).toBe(0);

    // The agent leaves: nothing is left to spare, and the socket that never answered is ended.
    agent.close();
    await eventually(async () => expect(await serverSockets(inbox)).toEqual([{ readyState: WebSocket.CLOSING, authed: false }]));
    const warned = reapWarnings();
    await expect(runDurableObjectAlarm(stubOf(inbox))).rejects.toThrow(/did not answer the close frame/);
    expect(warned()).toEqual([`Inbox.alarm: 1 unauthenticated socket(s) did not answer the close frame within ${CLOSE_ANSWER_GRACE_MS / 1000} s; ending every connection of this inbox`]);
    expect(await runtimeReports(`clawrelay: 1 unauthenticated socket(s) did not answer the close frame within ${CLOSE_ANSWER_GRACE_MS / 1000} s`)).toEqual([expect.stringContaining("uncaught exception")]);
    expect(await serverSockets(inbox)).toEqual([]);
  });

  it("a peer that answers the close is simply gone: nothing is reset", async () => {
    const { inbox } = await inboxWithHooks(1);
    const agent = await connect(inbox.agent.id);
    await agent.auth(inbox.agent);
    await agent.next("message");
    const polite = await connect(inbox.agent.id);
    await polite.next("challenge");
    await ageSockets(inbox, 5000);
    await runDurableObjectAlarm(stubOf(inbox));
    expect((await polite.closeEvent()).code).toBe(CLOSE_CODES.authTimeout);
    await eventually(async () => expect(await serverSockets(inbox)).toEqual([{ readyState: WebSocket.OPEN, authed: true }]));
    await ageSockets(inbox, CLOSE_ANSWER_GRACE_MS + UNANSWERED_RECHECK_MS);
    await runDurableObjectAlarm(stubOf(inbox));
    await agent.sync();
    expect(agent.closed).toBeNull();
  });
});

describe("frames too big to take", () => {
  it.each([
    ["regression: a 33 MiB auth frame before auth (was parsed and answered)", 33 * 1024 * 1024, false],
    ["a frame of 1 MiB + 1 byte after auth", MAX_CLIENT_FRAME_BYTES + 1, true],
  ])("%s is answered frame_too_large and closed with 1009; nothing queued is lost", async (_name, size, authed) => {
    const { inbox } = await inboxWithHooks(1);
    const client = await connect(inbox.agent.id);
    await client.reach(inbox.agent, authed);
    const prefix = '{"type":"auth","key":"';
    client.send(prefix + "a".repeat(size - prefix.length - 2) + '"}');
    expect(await client.next("error", 10_000)).toMatchObject({ code: "frame_too_large" });
    expect(await client.closeEvent(5000)).toEqual({ code: CLOSE_MESSAGE_TOO_BIG, reason: "frame_too_large" });
    expect(await queued(inbox)).toBe(1);
  });

  it("a frame of exactly 1 MiB is still read (refused only for what it says)", async () => {
    const inbox = await claimInbox();
    const client = await connect(inbox.agent.id);
    await client.next("challenge");
    // Multi-byte text: 1 MiB of UTF-8 in far fewer UTF-16 units.
    const prefix = '{"type":"ping","pad":"';
    const units = (MAX_CLIENT_FRAME_BYTES - prefix.length - 2) / 2;
    client.send(prefix + "é".repeat(units) + '"}');
    expect(await client.next(undefined, 5000)).toMatchObject({ type: "pong" });
    client.send(prefix + "é".repeat(units + 1) + '"}');
    expect(await client.next("error", 5000)).toMatchObject({ code: "frame_too_large" });
  });

  it("regression: the runtime's refusal of a frame over 32 MiB (webSocketError) is a warning and a 1009 close, not a logged error", async () => {
    const inbox = await claimInbox();
    const client = await connect(inbox.agent.id);
    await client.next("challenge");
    const logged = await runInDurableObject(stubOf(inbox), async (instance) => {
      const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
      const warnings = vi.spyOn(console, "warn").mockImplementation(() => undefined);
      try {
        // What workerd hands webSocketError for a 34,603,030-byte frame (seen on local workerd).
        const tooBig = new Error("WebSocket protocol error; protocolError.statusCode = 1009; protocolError.description = Message is too large: 34603030 > 33554432");
        await instance.webSocketError(instance.sockets()[0]!, tooBig);
        return { errors: errors.mock.calls.length, warnings: warnings.mock.calls.map((c) => String(c[0])) };
      } finally {
        errors.mockRestore();
        warnings.mockRestore();
      }
    });
    expect(logged.errors).toBe(0);
    expect(logged.warnings).toEqual([expect.stringContaining("32 MiB")]);
    expect((await client.closeEvent()).code).toBe(CLOSE_MESSAGE_TOO_BIG);
  });
});
