// GET /inbox/{agent_id}/connect: the challenge, authentication, the auth deadline and bad frames.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { AUTH_DEADLINE_MS, CLOSE_CODES, PING_FRAME, toBase64, utf8 } from "../../protocol/index.ts";
import { claimInbox, newAgent, postHook, registerAtHub, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { authFrame, closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { accepted, ageSockets, deadlinesAndAlarm, ids, inboxWithHooks, queued, sendEnvelope, sendHook, stubOf } from "../support/workerd/socket-fixtures.ts";
import type { Expected } from "../support/workerd/socket-fixtures.ts";

afterEach(() => closeAllSockets());

describe("connect and authenticate", () => {
  it("sends a challenge naming the inbox with a fresh nonce", async () => {
    const inbox = await claimInbox();
    const first = await (await connect(inbox.agent.id)).next("challenge");
    const second = await (await connect(inbox.agent.id)).next("challenge");
    expect(first.agent_id).toBe(inbox.agent.id);
    expect(first.nonce).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(second.nonce).not.toBe(first.nonce);
  });

  it("names the inbox's epoch (its first claim), the same on every connection and after a re-claim", async () => {
    const inbox = await claimInbox();
    const claimedAt = (inbox.response.config as { claimed_at: number }).claimed_at;
    const first = await (await connect(inbox.agent.id)).next("challenge");
    expect(first.epoch).toBe(String(claimedAt));
    const again = await signedFetch(inbox.agent, "PUT", `/inbox/${inbox.agent.id}`, { rate_per_minute: 30 });
    expect(again.status).toBe(200);
    await again.json();
    expect((await (await connect(inbox.agent.id)).next("challenge")).epoch).toBe(first.epoch);
  });

  it("answers a good auth with ready, then the backlog in id order with each message's fields", async () => {
    const inbox = await claimInbox();
    const sender = newAgent();
    await registerAtHub(sender);
    const binary = new Uint8Array([0xff, 0xfe, 0x00, 0x41]);
    const sent = [
      await sendEnvelope(inbox, sender, "one"),
      await sendHook(inbox, '{"n":2}'),
      await sendEnvelope(inbox, sender, "three"),
      {
        id: await accepted(await postHook(inbox, "raw/bytes", binary, { "content-type": "application/octet-stream" })),
        kind: "hook", subpath: "raw/bytes", content_type: "application/octet-stream", body: toBase64(binary), encoding: "base64",
      } satisfies Expected,
    ];
    const client = await connect(inbox.agent.id);
    const ready = await client.auth(inbox.agent);
    expect(ready).toEqual({ type: "ready", after: 0, backlog: 4, window: 16, dead: 0, last_id: 4, hub_prefix: "agentgram", hub_mode: "off" });
    const frames = await client.messages(4);
    expect(ids(frames)).toEqual([...ids(sent)].sort((a, b) => a - b));
    frames.forEach((frame, i) => {
      expect(frame).toMatchObject(sent[i]!);
      expect(frame.expires_at).toBeGreaterThan(frame.received_at);
    });
    await client.expectQuiet();
  });

  it("accepts an active non-root key from the inbox's key list", async () => {
    const agent = newAgent();
    const second = newAgent();
    const inbox = await claimInbox(agent, {
      keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }, { key_id: second.keyId, pubkey: second.publicKey }],
    });
    const ready = await (await connect(inbox.agent.id)).auth(second);
    expect(ready.type).toBe("ready");
  });

  it("still authenticates after a ping was sent before the auth frame", async () => {
    const inbox = await claimInbox();
    const client = await connect(inbox.agent.id);
    const challenge = await client.next("challenge");
    client.send(PING_FRAME);
    expect(await client.next("pong")).toEqual({ type: "pong" });
    client.send(authFrame(challenge, inbox.agent));
    expect((await client.next("ready")).type).toBe("ready");
  });
});

describe("refused auth closes with 4003", () => {
  const refusals: [string, (inbox: ClaimedInbox) => Promise<(challenge: { agent_id: string; nonce: string; epoch: string }) => unknown>][] = [
    ["a key the inbox does not hold", async () => {
      const stranger = newAgent();
      return (challenge) => authFrame({ type: "challenge", ...challenge }, stranger);
    }],
    ["the key of another claimed inbox's agent", async () => {
      const other = await claimInbox();
      return (challenge) => authFrame({ type: "challenge", ...challenge }, other.agent);
    }],
    ["the inbox's own key with a signature by another key", async (inbox) => {
      const forger = newAgent();
      return (challenge) => ({ ...authFrame({ type: "challenge", ...challenge }, forger), key: inbox.agent.publicKey });
    }],
    ["a signature over another nonce", async (inbox) => {
      return (challenge) => authFrame({ type: "challenge", ...challenge, nonce: challenge.nonce + "x" }, inbox.agent);
    }],
    ["a signature that is not base64", async (inbox) => {
      return () => ({ type: "auth", key: inbox.agent.publicKey, signature: "not base64 at all!" });
    }],
    ["a key that is not an ed25519 key", async () => {
      return () => ({ type: "auth", key: "rsa:AAAA", signature: toBase64(new Uint8Array(64)) });
    }],
  ];

  it.each(refusals)("refuses %s", async (_name, makeFrame) => {
    const inbox = await claimInbox();
    await sendHook(inbox, '{"secret":true}');
    const frameFor = await makeFrame(inbox);
    const client = await connect(inbox.agent.id);
    const challenge = await client.next("challenge");
    client.send(frameFor(challenge));
    expect(await client.next("error")).toMatchObject({ code: "auth_failed" });
    expect((await client.closeEvent()).code).toBe(CLOSE_CODES.authFailed);
    expect(client.pending()).toEqual([]);
    expect(await queued(inbox)).toBe(1);
  });

  it("refuses a revoked key of the inbox's key list", async () => {
    const agent = newAgent();
    const revoked = newAgent();
    const inbox = await claimInbox(agent, {
      keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }, { key_id: revoked.keyId, pubkey: revoked.publicKey, state: "revoked" }],
    });
    const client = await connect(inbox.agent.id);
    client.send(authFrame(await client.next("challenge"), revoked));
    expect(await client.next("error")).toMatchObject({ code: "auth_failed" });
    expect((await client.closeEvent()).code).toBe(4003);
  });

  it("refuses an ack before auth", async () => {
    const { inbox } = await inboxWithHooks(1);
    const client = await connect(inbox.agent.id);
    await client.next("challenge");
    client.ack(1);
    expect(await client.next("error")).toMatchObject({ code: "auth_required" });
    expect((await client.closeEvent()).code).toBe(4003);
    expect(await queued(inbox)).toBe(1);
  });
});

describe("auth deadline", () => {
  it("closes a socket that never authenticates with 4001 once the deadline passes, and only then", async () => {
    const inbox = await claimInbox();
    const opened = Date.now();
    const idle = await connect(inbox.agent.id);
    await idle.next("challenge");
    // An alarm that runs before the deadline must leave the socket alone (a pong: every earlier frame came).
    await runDurableObjectAlarm(stubOf(inbox));
    await idle.sync();
    const authed = await connect(inbox.agent.id);
    await authed.auth(inbox.agent);
    // The deadline is AUTH_DEADLINE_MS after the challenge, and the object's alarm is set for it at the latest.
    const { deadlines, alarm } = await deadlinesAndAlarm(inbox);
    expect(deadlines).toHaveLength(1);
    expect(deadlines[0]).toBeGreaterThanOrEqual(opened + AUTH_DEADLINE_MS);
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(deadlines[0]!);
    // The socket's clock moved past its deadline (the injected clock), the alarm runs: 4001.
    await ageSockets(inbox, AUTH_DEADLINE_MS);
    await runDurableObjectAlarm(stubOf(inbox));
    expect(await idle.next("error")).toMatchObject({ code: "auth_timeout" });
    expect((await idle.closeEvent()).code).toBe(CLOSE_CODES.authTimeout);
    // The deadline is for unauthenticated sockets only.
    const live = await sendHook(inbox, '{"after":"deadline"}');
    expect(ids([await authed.next("message")])).toEqual([live.id]);
  });

  it("regression: an auth frame that arrives after the deadline, before any alarm ran (alarms may run late), is refused with 4001", async () => {
    const inbox = await claimInbox();
    const client = await connect(inbox.agent.id);
    const challenge = await client.next("challenge");
    // Age the socket past its deadline without letting the alarm run.
    await runInDurableObject(stubOf(inbox), (instance) => {
      for (const ws of instance.sockets()) {
        const state = ws.deserializeAttachment() as { authed: boolean; deadline: number };
        if (!state.authed) ws.serializeAttachment({ ...state, deadline: Date.now() - 1 });
      }
    });
    client.send(authFrame(challenge, inbox.agent));
    expect(await client.next("error")).toMatchObject({ code: "auth_timeout" });
    expect((await client.closeEvent()).code).toBe(CLOSE_CODES.authTimeout);
  });
});

describe("malformed frames close with 4400", () => {
  const frames: [string, string | Uint8Array][] = [
    ["text that is not JSON", "hello"],
    ["a JSON array", "[1,2]"],
    ["an unknown type", '{"type":"subscribe"}'],
    ["an ack with a negative id", '{"type":"ack","id":-1}'],
    ["an ack with a string id", '{"type":"ack","id":"1"}'],
    ["an auth frame with a fractional window", '{"type":"auth","key":"k","signature":"s","window":1.5}'],
    ["a binary frame", utf8('{"type":"ping"}')],
  ];

  it.each(frames)("before auth: %s", async (_name, frame) => {
    const inbox = await claimInbox();
    const client = await connect(inbox.agent.id);
    await client.next("challenge");
    client.ws.send(frame);
    expect(await client.next("error")).toMatchObject({ code: "bad_frame" });
    expect((await client.closeEvent()).code).toBe(CLOSE_CODES.badFrame);
  });

  it.each(frames)("after auth: %s", async (_name, frame) => {
    const { inbox } = await inboxWithHooks(1);
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.next("message");
    client.ws.send(frame);
    expect(await client.next("error")).toMatchObject({ code: "bad_frame" });
    expect((await client.closeEvent()).code).toBe(CLOSE_CODES.badFrame);
    expect(await queued(inbox)).toBe(1);
  });
});
