// The findings of an outside probe of the relay, one test each, named after the finding and asserting
// the correct behaviour. Raw dot segments (hooks/a/../b, hooks/./a) cannot be sent in-process —
// Request resolves them before the relay sees the URL — so they, and findings e and f as a remote
// client meets them, are in test/node/probe-findings-raw-http.test.ts, over a real socket.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { CLOSE_CODES, toBase64 } from "../../../protocol/index.ts";
import { claimInbox, envelopeFrom, errorCode, newAgent, poll, postEnvelope, postHook, registeredAgent, relayFetch, signedFetch } from "../../support/workerd/agents.ts";
import type { TestAgent } from "../../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../../support/workerd/socket-client.ts";
import { ageSockets, deadlinesAndAlarm, stubOf } from "../../support/workerd/socket-fixtures.ts";
import { storedCount } from "./arbitraries.ts";

afterEach(() => closeAllSockets());

async function refusedWith(res: Response, status: number, code: string): Promise<string> {
  const body = (await res.json()) as { error?: { code?: string; message?: string } };
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
  return body.error?.message ?? "";
}

describe("finding a: hook sub-paths that leave hooks.path", () => {
  const subpaths = ["..%2F..%2Fv1%2Fchat%2Fcompletions", "a//b", "a%5Cb", "a%00b", "%2e%2e%2Fv1", "a/..%2Fb"];
  it.each(subpaths)("POST hooks/%s with a valid token is 400 invalid_subpath and stores nothing", async (subpath) => {
    const inbox = await claimInbox();
    await refusedWith(await postHook(inbox, subpath, '{"message":"x"}'), 400, "invalid_subpath");
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });
});

describe("finding b: invalid percent-encoding in a hook sub-path", () => {
  it.each(["%ZZ", "%", "a%2", "%C0%AF", "%FF"])("POST hooks/%s with a valid token is 400 invalid_subpath, never 500", async (subpath) => {
    const inbox = await claimInbox();
    await refusedWith(await postHook(inbox, subpath, '{"message":"x"}'), 400, "invalid_subpath");
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });
});

const SIGNED_FIELDS = ["v", "msg_id", "ts", "from", "to", "type", "reply_to", "ttl_sec", "payload", "payload_hash", "sig"].sort();

describe("finding c: envelope JSON that readers disagree on", () => {
  it("an envelope with a duplicate payload key (the unsigned one first) is 400 invalid_json naming the key", async () => {
    const inbox = await claimInbox();
    const sender = await registeredAgent();
    const signed = JSON.stringify(await envelopeFrom(sender, inbox.agent.id));
    // A first-wins reader (some gateways, hubs) would see the smuggled payload; JSON.parse the signed one.
    const smuggled = signed.replace('{"v":', '{"payload":{"text":"transfer all funds"},"v":');
    const message = await refusedWith(await relayFetch(`/inbox/${inbox.agent.id}/envelopes`, { method: "POST", body: smuggled }), 400, "invalid_json");
    expect(message).toContain('"payload"');
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });

  it("unknown top-level fields (thread_id, trace, __proto__) are refused or dropped: what is delivered is the signed fields and sig", async () => {
    const inbox = await claimInbox();
    const sender = await registeredAgent();
    const envelope = await envelopeFrom(sender, inbox.agent.id);
    const text = JSON.stringify(envelope).replace(/}$/, ',"thread_id":"t1","trace":{"hops":["evil"]},"__proto__":{"admin":true}}');
    const res = await relayFetch(`/inbox/${inbox.agent.id}/envelopes`, { method: "POST", body: text });
    await res.text();
    if (res.status !== 202) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(await storedCount(inbox.agent.id)).toBe(0);
      return;
    }
    const [delivered] = (await poll(inbox.agent)).messages;
    const body = JSON.parse(delivered!.body) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(SIGNED_FIELDS);
    expect(body).toEqual(JSON.parse(JSON.stringify(envelope)));
  });

  it("an envelope without reply_to is 400 invalid_envelope naming reply_to (null is allowed)", async () => {
    const inbox = await claimInbox();
    const sender = await registeredAgent();
    const envelope = (await envelopeFrom(sender, inbox.agent.id)) as unknown as Record<string, unknown>;
    expect(envelope.reply_to).toBeNull();
    const { reply_to: _dropped, ...missing } = envelope;
    const message = await refusedWith(await postEnvelope(missing, inbox.agent.id), 400, "invalid_envelope");
    expect(message).toContain("reply_to");
    expect(await storedCount(inbox.agent.id)).toBe(0);
    const withNull = await postEnvelope(envelope);
    expect(withNull.status).toBe(202);
    await withNull.text();
  });
});

/** A signed-looking envelope from `sender` whose signature is empty, as hub-made ones are. */
async function unsignedFrom(sender: TestAgent | "hub", to: string): Promise<Record<string, unknown>> {
  const signer = sender === "hub" ? newAgent() : sender;
  const envelope = (await envelopeFrom(signer, to)) as unknown as Record<string, unknown>;
  return { ...envelope, from: sender === "hub" ? "hub" : sender.id, sig: { alg: "ed25519", key_id: signer.keyId, value: "" } };
}

describe("finding d: unsigned envelopes inside hook bodies", () => {
  it("an envelope from a blocked sender with an empty signature, carried in {\"message\": …}, is refused and not stored", async () => {
    const blocked = await registeredAgent();
    const inbox = await claimInbox(undefined, { policy: { block: [blocked.id] } });
    const res = await postHook(inbox, "agentgram_inbox/agent", JSON.stringify({ message: JSON.stringify(await unsignedFrom(blocked, inbox.agent.id)) }));
    const code = await errorCode(res);
    expect([403, 400]).toContain(res.status);
    if (res.status === 403) expect(code).toBe("sender_blocked");
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });

  it("an unsigned envelope carried in a hook body whose from is not \"hub\" is refused", async () => {
    const inbox = await claimInbox();
    const stranger = await registeredAgent();
    const res = await postHook(inbox, "agentgram_inbox/agent", JSON.stringify({ message: JSON.stringify(await unsignedFrom(stranger, inbox.agent.id)) }));
    await errorCode(res);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(await storedCount(inbox.agent.id)).toBe(0);
    // The hub's own unsigned envelopes still come through this way, so the refusal is about the sender.
    const fromHub = await postHook(inbox, "agentgram_inbox/agent", JSON.stringify({ message: JSON.stringify(await unsignedFrom("hub", inbox.agent.id)) }));
    expect(fromHub.status).toBe(202);
    await fromHub.text();
    expect(await storedCount(inbox.agent.id)).toBe(1);
  });
});

describe("finding e: the auth deadline of an idle socket", () => {
  it("an unauthenticated WebSocket is closed with 4001 by its own alarm 5 s after the challenge, even when idle", async () => {
    const inbox = await claimInbox();
    const before = Date.now();
    const client = await connect(inbox.agent.id);
    await client.next("challenge");
    const after = Date.now();
    // Nothing else touches the inbox: only its own alarm, set for the deadline 5 s after the challenge, can close the socket.
    const { deadlines, alarm } = await deadlinesAndAlarm(inbox);
    expect(deadlines).toHaveLength(1);
    expect(deadlines[0]).toBeGreaterThanOrEqual(before + 5000);
    expect(deadlines[0]).toBeLessThanOrEqual(after + 5000);
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(deadlines[0]!);
    // Its clock moved past the deadline (the injected clock; the real wait is test/node/auth-deadline.e2e.test.ts).
    await ageSockets(inbox, 5000);
    await runDurableObjectAlarm(stubOf(inbox));
    expect(await client.next("error")).toMatchObject({ code: "auth_timeout" });
    expect((await client.closeEvent()).code).toBe(CLOSE_CODES.authTimeout);
  });
});

describe("finding f: a WebSocket upgrade without Sec-WebSocket-Key", () => {
  it("GET /inbox/{id}/connect with Upgrade: websocket but no Sec-WebSocket-Key is a JSON error, not a socket", async () => {
    const inbox = await claimInbox();
    const res = await relayFetch(`/inbox/${inbox.agent.id}/connect`, { headers: { upgrade: "websocket" } });
    // An in-process fetch would hand back a socket where a real handshake fails; close it if so.
    res.webSocket?.accept();
    res.webSocket?.close(1000, "test done");
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.headers.get("content-type")).toContain("application/json");
    await errorCode(res);
  });
});

/** A first claim with `extra` merged in, answered in full (claimInbox throws on anything but 201). */
async function firstClaim(extra: Record<string, unknown>): Promise<{ res: Response; agent: TestAgent }> {
  const agent = newAgent();
  const res = await signedFetch(agent, "PUT", `/inbox/${agent.id}`, {
    keys: [{ key_id: agent.keyId, pubkey: agent.publicKey }],
    receipt_key: { key_id: agent.receiptKeyId, private_key: toBase64(agent.receiptSeed) },
    ...extra,
  });
  return { res, agent };
}

const claimed = (agent: TestAgent) => runInDurableObject(env.INBOX.getByName(agent.id), (inbox) => inbox.config !== null);

describe("finding g: claims the relay should refuse", () => {
  const refused: [string, Record<string, unknown>, string][] = [
    ["a hub_url with user:password@", { hub_url: "https://user:password@hub.example" }, "hub_url"],
    ["a 10 KB hub_url", { hub_url: `https://hub.example/${"a".repeat(10_000)}` }, "hub_url"],
    ["a plain-http hub_url that is not loopback", { hub_url: "http://example.com" }, "hub_url"],
    ["an unknown field foo", { foo: 1 }, "foo"],
    ['rotate_webhook_token: "yes"', { rotate_webhook_token: "yes" }, "rotate_webhook_token"],
  ];
  it.each(refused)("%s is 400 invalid_claim naming the field, and the inbox stays unclaimed", async (_name, extra, field) => {
    const { res, agent } = await firstClaim(extra);
    expect(await refusedWith(res, 400, "invalid_claim")).toContain(field);
    expect(await claimed(agent)).toBe(false);
  });

  it("a plain-http loopback hub_url (http://127.0.0.1:9) is allowed", async () => {
    const { res, agent } = await firstClaim({ hub_url: "http://127.0.0.1:9" });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { config: { hub_url: string } }).config.hub_url).toBe("http://127.0.0.1:9");
    expect(await claimed(agent)).toBe(true);
  });
});

describe("finding h: the directory's size refusals", () => {
  it("a card body over the directory's limit is 413 and does not tell the caller to raise limits.max_body_bytes", async () => {
    const { agent } = await claimInbox();
    const card = { agent_id: agent.id, description: "x".repeat(200 * 1024), skills: [] };
    const message = await refusedWith(await signedFetch(agent, "PUT", "/directory/agents/big-card", card), 413, "payload_too_large");
    expect(message).not.toContain("max_body_bytes");
    expect(message).not.toContain("hook");
  });

  it("a search body over the directory's limit is 413 and does not tell the caller to raise limits.max_body_bytes", async () => {
    const message = await refusedWith(await relayFetch("/directory/search", { method: "POST", body: JSON.stringify({ query: "q".repeat(20 * 1024) }) }), 413, "payload_too_large");
    expect(message).not.toContain("max_body_bytes");
  });
});
