// Senders' credentials kept with source events (issue 32, item 11): sealed in the inbox's SQLite under
// RECEIPT_KEY_SECRET (set for every workerd test in vitest.config.ts), none kept for a source that
// delivers to the gateway, posted unchanged only to a forward target (WebSocket, lanes and older agents,
// and polling), shown redacted by the owner's queue API; a row stored in clear before this change still
// forwards; the queue summary says how they are kept. The seal itself: KeptCredentials with and without
// the secret, and with one that no longer opens it.
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { REDACTED_VALUE } from "../../protocol/index.ts";
import type { DeliveryFrame, QueueSummary, StoredRequest } from "../../protocol/index.ts";
import { KeptCredentials } from "../../worker/sources/kept-credentials.ts";
import { claimInbox, poll, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { addSource, pathOf, postToSource } from "../support/workerd/sources.ts";

afterEach(() => closeAllSockets());

const TARGET = "http://127.0.0.1:3000/hooks";
const CREDENTIALS = {
  authorization: "Bearer sk_live_a1b2c3d4e5f6a7b8c9d0",
  cookie: "session=7f3e9a0b1c2d3e4f",
  "x-api-key": "key-5566778899aabbccdd",
};
const stub = (inbox: ClaimedInbox) => env.INBOX.getByName(inbox.agent.id);

/** A token source (forwarding to `forward`, or to the gateway with null) and one event posted to it with credentials. */
async function eventWithCredentials(inbox: ClaimedInbox, forward: string | null): Promise<number> {
  const added = await addSource(inbox, { name: "app", kind: "token", forward });
  return postWithCredentials(pathOf(added.post_url));
}

async function postWithCredentials(path: string): Promise<number> {
  const res = await postToSource(`${path}/orders?x=1`, '{"order":1}', { "content-type": "application/json", "x-note": "kept", ...CREDENTIALS });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: number }).id;
}

async function storedRow(inbox: ClaimedInbox, id: number): Promise<string> {
  return runInDurableObject(stub(inbox), (_i, state) => String(state.storage.sql.exec(`SELECT request FROM messages WHERE seq = ?`, id).one().request));
}

async function detail(inbox: ClaimedInbox, id: number): Promise<{ request: StoredRequest | null }> {
  const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/queue/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { request: StoredRequest | null };
}

function expectCredentialsIn(frame: DeliveryFrame): void {
  expect(frame.forward, "the frame forwards").toBeDefined();
  const headers = new Map(frame.forward!.headers);
  for (const [name, value] of Object.entries(CREDENTIALS)) expect(headers.get(name), name).toBe(value);
  expect(headers.get("x-note")).toBe("kept");
}

describe("at rest", () => {
  it("a forward target's credentials are sealed in the inbox's SQLite: no value readable in clear", async () => {
    const inbox = await claimInbox();
    const id = await eventWithCredentials(inbox, TARGET);
    const row = await storedRow(inbox, id);
    for (const value of Object.values(CREDENTIALS)) expect(row).not.toContain(value);
    // Even the parts of a value: the session id, the key's tail.
    expect(row).not.toContain("7f3e9a0b1c2d3e4f");
    const kept = JSON.parse(row) as StoredRequest & { sealed?: string };
    expect(kept.sealed).toMatch(/^enc:v1:/);
    expect(new Map(kept.headers).get("authorization")).toBe(REDACTED_VALUE);
    expect(new Map(kept.headers).get("x-note")).toBe("kept");
  });

  it("a source that delivers to the gateway keeps no credentials at all, and its frame carries none", async () => {
    const inbox = await claimInbox();
    const id = await eventWithCredentials(inbox, null);
    const row = await storedRow(inbox, id);
    const kept = JSON.parse(row) as StoredRequest & { sealed?: string };
    expect(kept.headers.map(([name]) => name)).not.toContain("authorization");
    expect(kept.headers.map(([name]) => name)).not.toContain("cookie");
    expect(kept.headers.map(([name]) => name)).not.toContain("x-api-key");
    expect(kept.sealed).toBeUndefined();
    expect(new Map(kept.headers).get("x-note")).toBe("kept");
    const frame = (await poll(inbox.agent)).messages.find((m) => m.id === id)!;
    expect(frame.forward).toBeUndefined();
    for (const value of Object.values(CREDENTIALS)) expect(JSON.stringify(frame)).not.toContain(value);
  });
});

describe("delivered to the forward target unchanged", () => {
  it("over a lanes agent's WebSocket, after the object was evicted (nothing opened in memory)", async () => {
    const inbox = await claimInbox();
    const id = await eventWithCredentials(inbox, TARGET);
    await evictDurableObject(stub(inbox));
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { features: ["lanes"] });
    const [frame] = await client.messages(1);
    expect(frame!.id).toBe(id);
    expectCredentialsIn(frame!);
  });

  it("over an older agent's WebSocket, in id order", async () => {
    const inbox = await claimInbox();
    const added = await addSource(inbox, { name: "app", kind: "token", forward: TARGET });
    const ids = [await postWithCredentials(pathOf(added.post_url)), await postWithCredentials(pathOf(added.post_url))];
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    const frames = await client.messages(2);
    expect(frames.map((f) => f.id)).toEqual(ids);
    for (const frame of frames) expectCredentialsIn(frame);
  });

  it("by polling", async () => {
    const inbox = await claimInbox();
    const id = await eventWithCredentials(inbox, TARGET);
    const frame = (await poll(inbox.agent)).messages.find((m) => m.id === id)!;
    expectCredentialsIn(frame);
  });

  it("an event stored in clear before credentials were sealed is forwarded as it was stored", async () => {
    const inbox = await claimInbox();
    const id = await eventWithCredentials(inbox, TARGET);
    const old: StoredRequest = { method: "POST", tail: "/orders", headers: [["content-type", "application/json"], ["x-note", "kept"], ...Object.entries(CREDENTIALS)] };
    await runInDurableObject(stub(inbox), (_i, state) => {
      state.storage.sql.exec(`UPDATE messages SET request = ? WHERE seq = ?`, JSON.stringify(old), id);
    });
    await evictDurableObject(stub(inbox));
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent, { features: ["lanes"] });
    const [frame] = await client.messages(1);
    expectCredentialsIn(frame!);
    expect((await detail(inbox, id)).request!.headers).toContainEqual(["authorization", REDACTED_VALUE]);
  });
});

describe("what the owner sees", () => {
  it("the queue API shows every credential as [redacted], sealed or not, and never the seal", async () => {
    const inbox = await claimInbox();
    const id = await eventWithCredentials(inbox, TARGET);
    const shown = await detail(inbox, id);
    const headers = new Map(shown.request!.headers);
    for (const name of Object.keys(CREDENTIALS)) expect(headers.get(name), name).toBe(REDACTED_VALUE);
    expect(headers.get("x-note")).toBe("kept");
    expect(shown.request).not.toHaveProperty("sealed");
    const text = JSON.stringify(shown);
    for (const value of Object.values(CREDENTIALS)) expect(text).not.toContain(value);
  });

  it("the queue summary says the relay seals them (RECEIPT_KEY_SECRET is set)", async () => {
    const inbox = await claimInbox();
    const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/queue`);
    expect(((await res.json()) as { summary: QueueSummary }).summary.credentials).toBe("sealed");
  });
});

describe("KeptCredentials", () => {
  const SECRET = "a-test-secret-of-sufficient-length";
  const request: StoredRequest = { method: "PUT", tail: "/x", headers: [["authorization", "Bearer abc"], ["x-note", "n"], ["cookie", "c=1"]] };
  const keeper = (secret: string | undefined, agentId = "ag_000000000001") => new KeptCredentials({ agentId: () => agentId, secret: () => secret, opened: () => {} });

  it("without the secret keeps a forward target's credentials in clear and says so", async () => {
    const clear = keeper(undefined);
    expect(clear.keeping()).toBe("clear");
    const json = await clear.storedJson(request, true);
    expect(JSON.parse(json)).toEqual(request);
    expect(clear.requestNow(json)).toEqual(request);
  });

  it("with it, seals and opens them back in their places; a seal does not open in another inbox (the request goes without them)", async () => {
    const json = await keeper(SECRET).storedJson(request, true);
    expect(json).not.toContain("Bearer abc");
    expect(keeper(SECRET).requestNow(json), "opening is async").toBeNull();
    expect(await keeper(SECRET).request(json)).toEqual(request);
    expect(await keeper(SECRET, "ag_000000000002").request(json)).toEqual({ method: "PUT", tail: "/x", headers: [["x-note", "n"]] });
    expect(await keeper("another-secret-of-some-length").request(json)).toEqual({ method: "PUT", tail: "/x", headers: [["x-note", "n"]] });
  });

  it("calls `opened` when an opening the pump started ends, and has the request at once from then on", async () => {
    let opened!: () => void;
    const done = new Promise<void>((resolve) => (opened = resolve));
    const kept = new KeptCredentials({ agentId: () => "ag_000000000001", secret: () => SECRET, opened: () => opened() });
    const json = await kept.storedJson(request, true);
    expect(kept.requestNow(json)).toBeNull();
    await done;
    expect(kept.requestNow(json)).toEqual(request);
  });

  it("calls `opened` once for the openings one pump started, when the last ends (each call is a pump reading the window again)", async () => {
    let calls = 0;
    const kept = new KeptCredentials({ agentId: () => "ag_000000000001", secret: () => SECRET, opened: () => (calls += 1) });
    const jsons = await Promise.all([1, 2, 3, 4, 5].map((n) => kept.storedJson({ ...request, tail: `/x${n}` }, true)));
    for (const json of jsons) expect(kept.requestNow(json)).toBeNull();
    await vi.waitFor(() => expect(calls).toBeGreaterThan(0));
    for (const json of jsons) expect(kept.requestNow(json)).not.toBeNull();
    expect(calls).toBe(1);
  });
});
