// The owner's signed upgrade (protocol/upgrade-proof.ts, worker/delivery/upgrade-proof.ts): anonymous
// sockets filling the cap on unauthenticated sockets never keep the inbox's own agent out, a proof that
// does not hold is no proof (it waits under the cap, and the 429 says why), and while the owner's proven
// socket is open a peer that ignores closes resets nothing.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { CLOSE_CODES, upgradeProofHeaders } from "../../protocol/index.ts";
import { UNAUTHENTICATED_SOCKET_CAP } from "../../worker/delivery/socket-limits.ts";
import type { SocketState } from "../../worker/delivery/socket-session.ts";
import { newAgent, relayFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox, TestAgent } from "../support/workerd/agents.ts";
import { SocketClient, UPGRADE_HEADERS, authFrame, closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { ageSockets, eventually, ids, inboxWithHooks, stubOf } from "../support/workerd/socket-fixtures.ts";

afterEach(() => closeAllSockets());

const connectPath = (inbox: ClaimedInbox) => `/inbox/${inbox.agent.id}/connect`;

/** The upgrade as the agent makes it: the handshake's headers and a proof signed by `signer`. */
function provenUpgrade(inbox: ClaimedInbox, signer: TestAgent = inbox.agent, nowSec?: number): Record<string, string> {
  return { ...UPGRADE_HEADERS, ...upgradeProofHeaders(signer.publicKey, connectPath(inbox), (m) => signer.sign(m), nowSec) };
}

async function upgrade(inbox: ClaimedInbox, headers: Record<string, string>): Promise<SocketClient> {
  const res = await relayFetch(connectPath(inbox), { headers });
  if (res.status !== 101 || !res.webSocket) throw new Error(`connect refused: ${res.status} ${await res.text()}`);
  return new SocketClient(res.webSocket);
}

/** The 429 an upgrade meets, with its error's message. */
async function refusedMessage(inbox: ClaimedInbox, headers: Record<string, string>): Promise<string> {
  const res = await relayFetch(connectPath(inbox), { headers });
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status).toBe(429);
  expect(body.error.code).toBe("too_many_connections");
  return body.error.message;
}

async function fillCap(inbox: ClaimedInbox): Promise<SocketClient[]> {
  const waiting: SocketClient[] = [];
  for (let i = 0; i < UNAUTHENTICATED_SOCKET_CAP; i++) {
    const client = await connect(inbox.agent.id);
    await client.next("challenge");
    waiting.push(client);
  }
  return waiting;
}

const socketStates = (inbox: ClaimedInbox) =>
  runInDurableObject(stubOf(inbox), (instance) => instance.sockets().map((ws) => ({ readyState: ws.readyState, state: ws.deserializeAttachment() as SocketState })));

describe("the owner's proven upgrade", () => {
  it("regression: is taken while the cap is full of anonymous sockets, and delivers (it was refused 429 for as long as the flood lasted)", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const anonymous = await fillCap(inbox);
    // An anonymous (or older) agent still waits, and is told how its own agent gets past the cap.
    expect(await refusedMessage(inbox, UPGRADE_HEADERS)).toMatch(/update clawrelay/);

    const agent = await upgrade(inbox, provenUpgrade(inbox));
    // The in-band challenge and auth still run on it, unchanged.
    await agent.auth(inbox.agent);
    expect(ids(await agent.messages(1))).toEqual(ids(sent));

    // Not counted under the cap either: one anonymous socket leaving frees a place though the agent's is open.
    anonymous[0]!.close();
    await eventually(async () => void (await (await connect(inbox.agent.id)).next("challenge")));
  });

  it("is spared only the cap: a proven socket that never answers its challenge is closed at its deadline like any other", async () => {
    const { inbox } = await inboxWithHooks(0);
    const agent = await upgrade(inbox, provenUpgrade(inbox));
    await agent.next("challenge");
    expect((await socketStates(inbox)).map((s) => s.state)).toEqual([expect.objectContaining({ authed: false, proven: true })]);
    await ageSockets(inbox, 5000);
    await runDurableObjectAlarm(stubOf(inbox));
    expect(await agent.next("error")).toMatchObject({ code: "auth_timeout" });
    expect((await agent.closeEvent()).code).toBe(CLOSE_CODES.authTimeout);
  });
});

describe("a proof that does not hold", () => {
  it.each([
    ["signed by a key that is not the inbox's", (inbox: ClaimedInbox) => provenUpgrade(inbox, newAgent()), /key_not_authorised/],
    ["with a timestamp outside the window", (inbox: ClaimedInbox) => provenUpgrade(inbox, inbox.agent, Math.floor(Date.now() / 1000) - 3600), /timestamp_out_of_range/],
  ])("%s waits under the cap, and the 429 names why", async (_, headers, why) => {
    const { inbox } = await inboxWithHooks(0);
    await fillCap(inbox);
    expect(await refusedMessage(inbox, headers(inbox))).toMatch(why);
  });

  it("a replayed proof waits under the cap (its nonce is spent), and the 429 names the replay", async () => {
    const { inbox } = await inboxWithHooks(0);
    const proof = provenUpgrade(inbox);
    await (await upgrade(inbox, proof)).next("challenge");
    await fillCap(inbox);
    expect(await refusedMessage(inbox, proof)).toMatch(/replayed_request/);
  });

  it("is no refusal while the cap has room: an agent with a skewed clock still connects in-band", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const agent = await upgrade(inbox, provenUpgrade(inbox, inbox.agent, Math.floor(Date.now() / 1000) - 3600));
    await agent.auth(inbox.agent);
    expect(ids(await agent.messages(1))).toEqual(ids(sent));
    // It was taken as anonymous: counted under the cap until it authenticated.
    expect((await socketStates(inbox)).map((s) => s.state)).toEqual([expect.objectContaining({ authed: true })]);
  });
});

/** Moves the clock of the anonymous unauthenticated sockets back by `ms` (socket-fixtures.ts ageSockets, sparing the proven). */
const ageAnonymous = (inbox: ClaimedInbox, ms: number) =>
  runInDurableObject(stubOf(inbox), (instance) => {
    for (const ws of instance.sockets()) {
      const state = ws.deserializeAttachment() as SocketState;
      if (state.authed || state.proven) continue;
      ws.serializeAttachment({ ...state, deadline: state.deadline - ms, ...(state.closedAt !== undefined ? { closedAt: state.closedAt - ms } : {}) });
    }
  });

describe("a peer that ignores closes while the owner's proven socket is open", () => {
  it("resets nothing: the agent's socket, still before its auth, is kept and then authenticates and delivers", async () => {
    const { inbox, sent } = await inboxWithHooks(1);
    const deaf = await relayFetch(connectPath(inbox), { headers: UPGRADE_HEADERS });
    deaf.webSocket!.accept({ allowHalfOpen: true });
    await ageAnonymous(inbox, 5000);
    await runDurableObjectAlarm(stubOf(inbox));
    const agent = await upgrade(inbox, provenUpgrade(inbox));
    const challenge = await agent.next("challenge");
    await ageAnonymous(inbox, 60_000);
    // The anonymous socket's grace ran out long ago; with the owner's socket open the alarm ends nothing
    // (it used to reset the inbox, every connection with it) and looks again later.
    await expect(runDurableObjectAlarm(stubOf(inbox))).resolves.toBe(true);
    expect((await socketStates(inbox)).map((s) => s.readyState).sort()).toEqual([WebSocket.OPEN, WebSocket.CLOSING].sort());
    agent.send(authFrame(challenge, inbox.agent));
    await agent.next("ready");
    expect(ids(await agent.messages(1))).toEqual(ids(sent));
  });
});
