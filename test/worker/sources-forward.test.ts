// Forward targets (issue 23): a source whose events go to a local app. Setting, changing and showing a
// target and its refusals; the request kept with each event (the sender's headers, signatures
// included); the delivery frame's `forward`, read when the frame is built (a target switched later,
// a replay, a removed source, an event stored before schema 5); the bytes the request counts.
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { DeliveryFrame, SourceView, StoredRequest } from "../../protocol/index.ts";
import { SCHEMA_VERSION } from "../../worker/storage/schema.ts";
import { claimInbox, errorCode, poll, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";
import { addSource, pathOf, postToSource, stripeHeaders } from "../support/workerd/sources.ts";

afterEach(() => closeAllSockets());

const STRIPE_SECRET = "whsec_test_9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const TARGET = "http://127.0.0.1:3000/webhooks/stripe";

const stub = (inbox: ClaimedInbox) => env.INBOX.getByName(inbox.agent.id);
const sourcesPath = (inbox: ClaimedInbox, rest = "") => `/inbox/${inbox.agent.id}/sources${rest}`;

async function view(inbox: ClaimedInbox, body: Record<string, unknown>): Promise<SourceView> {
  return (await addSource(inbox, body)).source as unknown as SourceView;
}

async function refused(res: Response, status: number, code: string, message: RegExp): Promise<void> {
  const json = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status, json.error.message).toBe(status);
  expect(json.error.code).toBe(code);
  expect(json.error.message).toMatch(message);
}

const add = (inbox: ClaimedInbox, body: unknown) => signedFetch(inbox.agent, "POST", sourcesPath(inbox), body);
const change = (inbox: ClaimedInbox, name: string, body: unknown) => signedFetch(inbox.agent, "PATCH", sourcesPath(inbox, `/${name}`), body);

async function listed(inbox: ClaimedInbox, name: string): Promise<SourceView> {
  const { sources } = (await (await signedFetch(inbox.agent, "GET", sourcesPath(inbox))).json()) as { sources: SourceView[] };
  return sources.find((s) => s.name === name)!;
}

/** A Stripe source (optionally forwarding) and one event posted to it: its id and what was sent. */
async function stripeEvent(inbox: ClaimedInbox, forward?: string) {
  const { source } = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET, ...(forward ? { forward } : {}) });
  const body = JSON.stringify({ id: "evt_1", object: "event", type: "payment_intent.succeeded" });
  const headers: Record<string, string> = { ...stripeHeaders(STRIPE_SECRET, body), "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)", "x-forwarded-for": "203.0.113.9", connection: "keep-alive" };
  const res = await postToSource(pathOf(source.url), body, headers);
  expect(res.status).toBe(200);
  const { id } = (await res.json()) as { id: number };
  return { id, body, headers, path: pathOf(source.url) };
}

async function frameOf(inbox: ClaimedInbox, id: number): Promise<DeliveryFrame> {
  const frame = (await poll(inbox.agent)).messages.find((m) => m.id === id);
  expect(frame, `message ${id} is queued`).toBeDefined();
  return frame!;
}

async function detail(inbox: ClaimedInbox, id: number): Promise<{ request: StoredRequest | null; forward: string | null; headers: Record<string, string> | null }> {
  const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/queue/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { request: StoredRequest | null; forward: string | null; headers: Record<string, string> | null };
}

describe("setting a target", () => {
  it("adds a source with a target, normalized; shows forward and allow_public_target (null and false without one)", async () => {
    const inbox = await claimInbox();
    const forwarding = await view(inbox, { name: "app", kind: "token", forward: "http://[::1]:3000" });
    expect(forwarding).toMatchObject({ forward: "http://[::1]:3000/", allow_public_target: false });
    const plain = await view(inbox, { name: "gh", kind: "github" });
    expect(plain).toMatchObject({ forward: null, allow_public_target: false });
    const gateway = await view(inbox, { name: "gw", kind: "github", forward: null, allow_public_target: false });
    expect(gateway.forward).toBeNull();
    const publicOne = await view(inbox, { name: "pub", kind: "token", forward: "https://8.8.8.8/hook", allow_public_target: true });
    expect(publicOne).toMatchObject({ forward: "https://8.8.8.8/hook", allow_public_target: true });
    expect(await listed(inbox, "app")).toMatchObject({ forward: "http://[::1]:3000/", allow_public_target: false });
  });

  it("refuses a target that cannot be one, saying why, and stores no source", async () => {
    const inbox = await claimInbox();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ forward: "http://8.8.8.8:3000/x" }, /public address.*--allow-public-target/],
      [{ forward: "http://[2001:db8::1]/" }, /--allow-public-target/],
      [{ forward: "ftp://127.0.0.1/x" }, /http:\/\/ or https:\/\/, not ftp:/],
      [{ forward: "http://user:pw@127.0.0.1:3000/" }, /user name or password/],
      [{ forward: "http://127.0.0.1:3000/#x" }, /fragment/],
      [{ forward: "127.0.0.1:3000" }, /http:\/\/ or https:\/\/|not a URL/],
      [{ forward: 3000 }, /forward must be a URL/],
      [{ forward: "http://127.0.0.1/", allow_public_target: "yes" }, /allow_public_target must be true or false/],
      [{ allow_public_target: true }, /goes with a forward target/],
      [{ forward: null, allow_public_target: true }, /goes with a forward target/],
    ];
    for (const [extra, message] of cases) await refused(await add(inbox, { name: "x", kind: "token", ...extra }), 400, "invalid_source", message);
    const { sources } = (await (await signedFetch(inbox.agent, "GET", sourcesPath(inbox))).json()) as { sources: unknown[] };
    expect(sources).toEqual([]);
  });

  it("changes a target, back to the gateway, and re-checks the current target when only allow_public_target changes", async () => {
    const inbox = await claimInbox();
    await addSource(inbox, { name: "app", kind: "token" });
    const set = async (body: Record<string, unknown>) => {
      const res = await change(inbox, "app", body);
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as { source: SourceView }).source;
    };
    expect(await set({ forward: "http://192.168.1.20:8080/hooks" })).toMatchObject({ forward: "http://192.168.1.20:8080/hooks", allow_public_target: false });
    await refused(await change(inbox, "app", { forward: "http://1.1.1.1/" }), 400, "invalid_source", /--allow-public-target/);
    expect(await set({ forward: "http://1.1.1.1/", allow_public_target: true })).toMatchObject({ forward: "http://1.1.1.1/", allow_public_target: true });
    // Taking the allowance back while the target is a public address is refused; the source is unchanged.
    await refused(await change(inbox, "app", { allow_public_target: false }), 400, "invalid_source", /public address/);
    expect(await listed(inbox, "app")).toMatchObject({ forward: "http://1.1.1.1/", allow_public_target: true });
    expect(await set({ forward: "http://127.0.0.1:3000/" })).toMatchObject({ forward: "http://127.0.0.1:3000/", allow_public_target: false });
    expect(await set({ allow_public_target: true })).toMatchObject({ forward: "http://127.0.0.1:3000/", allow_public_target: true });
    expect(await set({ forward: null, allow_public_target: false })).toMatchObject({ forward: null, allow_public_target: false });
    await refused(await change(inbox, "app", { allow_public_target: true }), 400, "invalid_source", /goes with a forward target/);
    await refused(await change(inbox, "app", {}), 400, "invalid_source", /nothing to change.*forward/);
    await refused(await change(inbox, "app", { forward: "file:///etc/passwd" }), 400, "invalid_source", /not file:/);
  });
});

describe("the request kept, and the frame's forward", () => {
  it("a Stripe event keeps its request with Stripe-Signature; the frame forwards it with the relay's headers after, the gateway headers stay without it", async () => {
    const inbox = await claimInbox();
    const sent = await stripeEvent(inbox, TARGET);
    const shown = await detail(inbox, sent.id);
    expect(shown.forward).toBe(TARGET);
    expect(shown.request).toMatchObject({ method: "POST", tail: "" });
    const kept = new Map(shown.request!.headers);
    expect(kept.get("stripe-signature")).toBe(sent.headers["stripe-signature"]);
    expect(kept.get("content-type")).toBe("application/json; charset=utf-8");
    expect(kept.get("user-agent")).toBe(sent.headers["user-agent"]);
    // Hop-by-hop and added on the way: never the app's to see.
    for (const name of ["x-forwarded-for", "connection", "host", "content-length"]) expect(kept.has(name), name).toBe(false);
    const frame = await frameOf(inbox, sent.id);
    expect(frame.headers).toEqual({ "x-clawrelay-source": "stripe", "x-clawrelay-event": "payment_intent.succeeded", "x-clawrelay-delivery": "evt_1" });
    expect(JSON.stringify(frame.headers)).not.toContain("stripe-signature");
    expect(frame.forward).toEqual({
      source: "stripe",
      target: TARGET,
      allow_public: false,
      method: "POST",
      tail: "",
      headers: [...shown.request!.headers, ["x-clawrelay-source", "stripe"], ["x-clawrelay-event", "payment_intent.succeeded"], ["x-clawrelay-delivery", "evt_1"]],
    });
    expect(frame.body).toBe(sent.body);
    const row = await runInDurableObject(stub(inbox), (_i, state) => String(state.storage.sql.exec(`SELECT request FROM messages WHERE seq = ?`, sent.id).one().request));
    expect(JSON.parse(row)).toEqual(shown.request);
  });

  it("a source without a target keeps the request too, but its frame is the gateway's as before (no forward key)", async () => {
    const inbox = await claimInbox();
    const sent = await stripeEvent(inbox);
    const shown = await detail(inbox, sent.id);
    expect(shown.forward).toBeNull();
    expect(new Map(shown.request!.headers).get("stripe-signature")).toBe(sent.headers["stripe-signature"]);
    const frame = await frameOf(inbox, sent.id);
    expect(Object.keys(frame)).toEqual(["type", "id", "kind", "subpath", "content_type", "body", "encoding", "received_at", "expires_at", "headers"]);
  });

  it("the target is read when the frame is built: set after storing, it applies to the waiting event; --gateway takes it off", async () => {
    const inbox = await claimInbox();
    const sent = await stripeEvent(inbox);
    expect((await frameOf(inbox, sent.id)).forward).toBeUndefined();
    expect((await change(inbox, "stripe", { forward: TARGET })).status).toBe(200);
    expect((await frameOf(inbox, sent.id)).forward).toMatchObject({ source: "stripe", target: TARGET, method: "POST" });
    // Over the socket too.
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    const [frame] = await client.messages(1);
    expect(frame!.forward?.target).toBe(TARGET);
    client.close();
    await client.closeEvent();
    expect((await change(inbox, "stripe", { forward: null })).status).toBe(200);
    expect((await frameOf(inbox, sent.id)).forward).toBeUndefined();
    expect((await detail(inbox, sent.id)).forward).toBeNull();
  });

  it("a replay keeps the request; a removed source's events go to the gateway (no forward)", async () => {
    const inbox = await claimInbox();
    const sent = await stripeEvent(inbox, TARGET);
    const before = (await detail(inbox, sent.id)).request;
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    await client.messages(1);
    client.reject(sent.id, "the app answered 400: bad signature", { status: 400 });
    await client.next("rejected");
    const replay = await signedFetch(inbox.agent, "POST", `/inbox/${inbox.agent.id}/queue/${sent.id}/replay`);
    const { id } = (await replay.json()) as { id: number };
    expect(id).toBeGreaterThan(sent.id);
    const [again] = await client.messages(1);
    expect(again).toMatchObject({ id, forward: { target: TARGET, headers: expect.arrayContaining([["stripe-signature", sent.headers["stripe-signature"]]]) } });
    expect((await detail(inbox, id)).request).toEqual(before);
    client.close();
    await client.closeEvent();
    expect((await signedFetch(inbox.agent, "DELETE", sourcesPath(inbox, "/stripe"))).status).toBe(200);
    const frame = await frameOf(inbox, id);
    expect(frame.forward).toBeUndefined();
    expect(frame.subpath).toBe("sources/stripe");
    expect(await detail(inbox, id)).toMatchObject({ forward: null, request: before });
  });

  it("counts the kept request against max_queue_bytes, across a restart too", async () => {
    const inbox = await claimInbox(undefined, { limits: { max_queue_bytes: 2000 } });
    const added = await addSource(inbox, { name: "hook", kind: "token" });
    const path = pathOf(added.post_url);
    const bytes = () => runInDurableObject(stub(inbox), (instance) => instance.store.queueStats().bytes);
    // Read the answer: an unread response body is an in-flight request, and eviction waits for those.
    expect(await (await postToSource(path, "{}", { "x-note": "a".repeat(500) })).json()).toMatchObject({ queued: true });
    const counted = await bytes();
    expect(counted).toBeGreaterThan(500);
    await evictDurableObject(stub(inbox));
    expect(await bytes()).toBe(counted);
    // The body alone would fit; with its 1500 bytes of headers it does not.
    expect(await errorCode(await postToSource(path, "{}", { "x-note": "b".repeat(1500) }))).toBe("inbox_full");
    const { messages } = await poll(inbox.agent, `after=${(await poll(inbox.agent)).messages[0]!.id}&ack=true`);
    expect(messages).toEqual([]);
    expect(await bytes()).toBe(0);
  });
});

describe("schema 5", () => {
  it("migrates from 4: a stored event gets request null; a source stored without forward has none; a target set later forwards the old event as POST with its content type and headers", async () => {
    const inbox = await claimInbox();
    const sent = await stripeEvent(inbox);
    await runInDurableObject(stub(inbox), (_i, state) => {
      const sql = state.storage.sql;
      // Back to what schema 4 stored: no request column (nor schema 6's outbox kind, schema 7's lane and restored), a source's JSON without forward.
      sql.exec(`ALTER TABLE messages DROP COLUMN request`);
      sql.exec(`ALTER TABLE messages DROP COLUMN lane`);
      sql.exec(`ALTER TABLE messages DROP COLUMN restored`);
      sql.exec(`ALTER TABLE outbox DROP COLUMN kind`);
      sql.exec(`UPDATE meta SET value = '4' WHERE key = 'schema_version'`);
      const json = JSON.parse(String(sql.exec(`SELECT json FROM sources WHERE name = 'stripe'`).one().json)) as Record<string, unknown>;
      delete json.forward;
      sql.exec(`UPDATE sources SET json = ? WHERE name = 'stripe'`, JSON.stringify(json));
    });
    await evictDurableObject(stub(inbox));
    const after = await runInDurableObject(stub(inbox), (_i, state) => ({
      version: state.storage.sql.exec(`SELECT value FROM meta WHERE key = 'schema_version'`).one().value,
      request: state.storage.sql.exec(`SELECT request FROM messages WHERE seq = ?`, sent.id).one().request,
    }));
    expect(after).toEqual({ version: String(SCHEMA_VERSION), request: null });
    expect(await listed(inbox, "stripe")).toMatchObject({ forward: null, allow_public_target: false });
    expect(await detail(inbox, sent.id)).toMatchObject({ request: null, forward: null });
    expect((await frameOf(inbox, sent.id)).forward).toBeUndefined();
    expect((await change(inbox, "stripe", { forward: TARGET })).status).toBe(200);
    expect((await frameOf(inbox, sent.id)).forward).toEqual({
      source: "stripe",
      target: TARGET,
      allow_public: false,
      method: "POST",
      tail: "",
      headers: [["content-type", "application/json; charset=utf-8"], ["x-clawrelay-source", "stripe"], ["x-clawrelay-event", "payment_intent.succeeded"], ["x-clawrelay-delivery", "evt_1"]],
    });
  });
});
