// The runtime's ping auto-response, hibernation, and the HTTP refusals of /connect.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { PING_FRAME, PONG_FRAME } from "../../protocol/index.ts";
import { claimInbox, errorCode, newAgent, relayFetch } from "../support/workerd/agents.ts";
import { UPGRADE_HEADERS, authFrame, closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { ids, inboxWithHooks, queued, sendHook, stubOf } from "../support/workerd/socket-fixtures.ts";

afterEach(() => closeAllSockets());

describe("runtime ping auto-response", () => {
  it(`answers exactly ${PING_FRAME} with ${PONG_FRAME} through the runtime, even before auth`, async () => {
    const inbox = await claimInbox();
    const client = await connect(inbox.agent.id);
    await client.next("challenge");
    client.send(PING_FRAME);
    await client.next("pong");
    expect(client.raw.at(-1)).toBe(PONG_FRAME);
    const answeredAt = await runInDurableObject(stubOf(inbox), (_instance, state) =>
      state.getWebSockets().map((ws) => state.getWebSocketAutoResponseTimestamp(ws)),
    );
    expect(answeredAt).toHaveLength(1);
    expect(answeredAt[0]).toBeInstanceOf(Date);
  });

  it("answers a ping on a hibernated socket through the runtime, not the object", async () => {
    const inbox = await claimInbox();
    const stub = stubOf(inbox);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await runInDurableObject(stub, (instance) => {
      (instance as unknown as { marker?: string }).marker = "before eviction";
    });
    await evictDurableObject(stub, { webSockets: "hibernate" });
    const sentAt = Date.now();
    client.send(PING_FRAME);
    await client.next("pong");
    expect(client.raw.at(-1)).toBe(PONG_FRAME);
    const seen = await runInDurableObject(stub, (instance, state) => ({
      marker: (instance as unknown as { marker?: string }).marker,
      answeredAt: state.getWebSockets().map((ws) => state.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? null),
    }));
    expect(seen.marker, "the object was not evicted, so this test proves nothing").toBeUndefined();
    expect(seen.answeredAt).toHaveLength(1);
    expect(seen.answeredAt[0]).toBeGreaterThanOrEqual(sentAt);
  });
});

describe("hibernation", () => {
  it("keeps delivering and taking acks on the same socket across evictions", async () => {
    const inbox = await claimInbox();
    const stub = stubOf(inbox);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { window: 1 });
    const first = await sendHook(inbox, '{"n":1}');
    expect(ids(await client.messages(1))).toEqual([first.id]);

    await evictDurableObject(stub, { webSockets: "hibernate" });
    const second = await sendHook(inbox, '{"n":2}');
    await client.expectQuiet(); // the window (1) survived in the socket's attachment
    client.ack(first.id);
    expect(await client.next("message")).toMatchObject(second);

    await evictDurableObject(stub, { webSockets: "hibernate" });
    client.ack(second.id);
    await client.sync();
    expect(await queued(inbox)).toBe(0);

    await evictDurableObject(stub, { webSockets: "hibernate" });
    const third = await sendHook(inbox, '{"n":3}');
    expect(await client.next("message")).toMatchObject(third);
    expect(client.closed).toBeNull();
  });

  it("an unauthenticated socket can still answer its challenge after hibernation", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const client = await connect(inbox.agent.id);
    const challenge = await client.next("challenge");
    await evictDurableObject(stubOf(inbox), { webSockets: "hibernate" });
    client.send(authFrame(challenge, inbox.agent));
    expect(await client.next("ready")).toMatchObject({ backlog: 1 });
    expect(ids(await client.messages(1))).toEqual(ids(sent));
  });
});

describe("HTTP refusals of /connect", () => {
  it("answers 404 inbox_not_claimed for an inbox nobody claimed", async () => {
    const res = await relayFetch(`/inbox/${newAgent().id}/connect`, { headers: UPGRADE_HEADERS });
    expect(res.status).toBe(404);
    expect(res.webSocket).toBeNull();
    expect(await errorCode(res)).toBe("inbox_not_claimed");
  });

  it("answers 426 upgrade_required without an Upgrade header", async () => {
    const inbox = await claimInbox();
    const res = await relayFetch(`/inbox/${inbox.agent.id}/connect`);
    expect(res.status).toBe(426);
    expect(await errorCode(res)).toBe("upgrade_required");
  });

  it("regression: a handshake without Sec-WebSocket-Key or version 13 is refused in the JSON shape, not the runtime's plain text", async () => {
    const inbox = await claimInbox();
    const noKey = await relayFetch(`/inbox/${inbox.agent.id}/connect`, { headers: { Upgrade: "websocket", "Sec-WebSocket-Version": "13" } });
    expect(noKey.status).toBe(400);
    expect(await errorCode(noKey)).toBe("invalid_websocket_handshake");
    const oldVersion = await relayFetch(`/inbox/${inbox.agent.id}/connect`, { headers: { ...UPGRADE_HEADERS, "Sec-WebSocket-Version": "8" } });
    expect(oldVersion.status).toBe(426);
    expect(oldVersion.headers.get("sec-websocket-version")).toBe("13");
    expect(await errorCode(oldVersion)).toBe("upgrade_required");
  });

  it("answers 400 invalid_agent_id for a path that is not an agent id", async () => {
    const res = await relayFetch("/inbox/not-an-agent/connect", { headers: { Upgrade: "websocket" } });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("invalid_agent_id");
  });
});
