// Lone UTF-16 surrogates and the other strict-JSON refusals where JSON enters the relay, one test per
// finding of the outside probe (each failed on the code before protocol/strict-json.ts refused them):
// a 400 invalid_json saying what to fix, never a 500, nothing stored; a bad record in a hub page shelved
// with its reason while the others are stored. An opaque webhook body is not JSON-checked (hook-body.ts):
// it is stored byte-exact whatever it holds.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { draftEnvelope, sha256Hex, signEnvelope, utf8 } from "../../../protocol/index.ts";
import type { Envelope } from "../../../protocol/index.ts";
import { HubCallError, REFUSED, readPage } from "../../../protocol/index.ts";
import { claimInbox, envelopeFrom, frameBytes, newAgent, poll, postHook, registeredAgent, relayFetch } from "../../support/workerd/agents.ts";
import { hubSide, inboxRecord, pullingInbox, pullNow, scriptInbox, signedBy } from "../../support/workerd/hub-link.ts";
import { addSource, pathOf, postToSource, stripeHeaders } from "../../support/workerd/sources.ts";
import { storedCount } from "./arbitraries.ts";

const STRIPE_SECRET = "whsec_surrogates_0123456789";

async function refusal(res: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await res.json()) as { error?: { code: string; message: string } };
  return { status: res.status, code: body.error?.code ?? "", message: body.error?.message ?? "" };
}

const postText = (to: string, body: string | Uint8Array) => relayFetch(`/inbox/${to}/envelopes`, { method: "POST", headers: { "content-type": "application/json" }, body });

/** A signed envelope's text with its payload's text replaced by JSON text `payloadText` (the signature then covers another payload). */
const withPayloadText = (envelope: Envelope, payloadText: string) => JSON.stringify(envelope).replace(JSON.stringify(envelope.payload), payloadText);

describe("finding: a lone surrogate in a payload or hook body value was a 500 without authentication", () => {
  it("POST /envelopes from a sender nobody knows, a payload holding \\ud800: 400 invalid_json naming the surrogate, nothing stored", async () => {
    const inbox = await claimInbox();
    const stranger = newAgent();
    const text = withPayloadText(await envelopeFrom(stranger, inbox.agent.id), '{"text":"\\ud800"}');
    const answer = await refusal(await postText(inbox.agent.id, text));
    expect(answer).toMatchObject({ status: 400, code: "invalid_json" });
    expect(answer.message).toMatch(/lone UTF-16 surrogate in a string/);
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });

  it("a hook body carrying such an envelope, as the body itself or as the text of `message`: 400 invalid_json, nothing stored", async () => {
    const inbox = await claimInbox();
    const text = withPayloadText(await envelopeFrom(await registeredAgent(), inbox.agent.id), '{"text":"x\\udfffy"}');
    for (const body of [text, JSON.stringify({ message: text })]) {
      const answer = await refusal(await postHook(inbox, "agentgram_inbox/agent", body));
      expect(answer).toMatchObject({ status: 400, code: "invalid_json" });
      expect(answer.message).toMatch(/lone UTF-16 surrogate/);
    }
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });

  it("a hook body carrying an envelope in bytes that are not UTF-8 (a surrogate's WTF-8 where U+FFFD was signed): 400 invalid_json, nothing stored", async () => {
    const inbox = await claimInbox();
    const signed = utf8(JSON.stringify(await envelopeFrom(await registeredAgent(), inbox.agent.id, { payload: { text: "a\ufffdb" } })));
    const at = signed.findIndex((b, i) => b === 0xef && signed[i + 1] === 0xbf && signed[i + 2] === 0xbd);
    const body = Uint8Array.from([...signed.subarray(0, at), 0xed, 0xa0, 0x80, ...signed.subarray(at + 3)]);
    const answer = await refusal(await postHook(inbox, "agentgram_inbox/agent", body));
    expect(answer).toMatchObject({ status: 400, code: "invalid_json" });
    expect(answer.message).toMatch(/not UTF-8/);
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });
});

describe("finding: a signed msg_id holding U+FFFD could be posted again with \\ud800 in its place and was stored twice", () => {
  it("the second spelling (which signs to the same bytes) is 400 invalid_json; the inbox holds the first message only", async () => {
    const inbox = await claimInbox();
    const envelope = await envelopeFrom(await registeredAgent(), inbox.agent.id, { msg_id: "m-\ufffd-1" });
    expect((await postText(inbox.agent.id, JSON.stringify(envelope))).status).toBe(202);
    const respelled = JSON.stringify(envelope).replace("m-\ufffd-1", "m-\\ud800-1");
    expect(respelled).not.toBe(JSON.stringify(envelope));
    expect(await refusal(await postText(inbox.agent.id, respelled))).toMatchObject({ status: 400, code: "invalid_json" });
    expect(await storedCount(inbox.agent.id)).toBe(1);
  });
});

describe('finding: {"\\ud800":1} hashed, and an envelope carrying it was queued', () => {
  it("an envelope whose payload key is a lone surrogate, signed over the hash the old JCS gave it, is 400 invalid_json naming a key; nothing is queued", async () => {
    const inbox = await claimInbox();
    const sender = await registeredAgent();
    // What the hand-written JCS made of it: the key escaped by JSON.stringify, hashed as that text.
    const unsigned = { ...(await draftEnvelope({ from: sender.id, to: inbox.agent.id, type: "message", payload: {} })), payload: { "\ud800": 1 }, payload_hash: `sha256:${await sha256Hex('{"\\ud800":1}')}` };
    const envelope = await signEnvelope(unsigned, sender.keyId, (m) => sender.sign(m));
    expect(JSON.stringify(envelope)).toContain('"payload":{"\\ud800":1}');
    const answer = await refusal(await postText(inbox.agent.id, JSON.stringify(envelope)));
    expect(answer).toMatchObject({ status: 400, code: "invalid_json" });
    expect(answer.message).toContain("an object key");
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });
});

describe("an opaque webhook body is not JSON-checked", () => {
  it("JSON with lone surrogates (escaped, in keys and values) and bytes that are not UTF-8 are stored byte-exact", async () => {
    const inbox = await claimInbox();
    const escaped = utf8('{"message":"hi \\ud800","\\udc00":["\\udbff"]}');
    const wtf8 = Uint8Array.from([...utf8('{"message":"hi '), 0xed, 0xa0, 0x80, ...utf8('"}')]);
    for (const body of [escaped, wtf8]) expect((await postHook(inbox, "custom/path", body)).status).toBe(202);
    const { messages } = await poll(inbox.agent);
    expect(messages.map((m) => [...frameBytes(m)])).toEqual([[...escaped], [...wtf8]]);
  });
});

describe("webhook sources read their JSON strictly", () => {
  it("a Stripe-signed event with a lone surrogate or a duplicate id is 400 invalid_json, noted as the source's last refusal, and not stored", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET });
    const bodies = ['{"id":"evt_1","type":"charge.\\ud800"}', '{"id":"evt_2","id":"evt_3","type":"charge.succeeded"}'];
    for (const body of bodies) {
      const answer = await refusal(await postToSource(pathOf(source.url), body, stripeHeaders(STRIPE_SECRET, body)));
      expect(answer).toMatchObject({ status: 400, code: "invalid_json" });
    }
    expect(await storedCount(inbox.agent.id)).toBe(0);
    const refused = await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (o) => o.sources.lastRefusal("stripe"));
    expect(refused?.code).toBe("invalid_json");
  });
});

describe("hub answers are read strictly", () => {
  it("a record with a lone surrogate in a /hub/inbox page is shelved with the reason; the records around it are stored; all are confirmed", async () => {
    const inbox = await pullingInbox();
    const alice = await registeredAgent();
    const dm = async (text: string) => signedBy(alice, await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text } }));
    const bad = { ...(await dm("was fine")), payload: { text: "lone \ud800 here" } };
    const records = [inboxRecord(await dm("before")), inboxRecord(bad), inboxRecord(await dm("after"))];
    await scriptInbox(inbox.agent.id, records);
    await pullNow(inbox);
    const { messages, dead } = await poll(inbox.agent, "ack=false");
    expect(messages.map((m) => (JSON.parse(m.body) as { hub_msg_id: string }).hub_msg_id)).toEqual([records[0]!.hub_msg_id, records[2]!.hub_msg_id]);
    expect(dead).toBe(1);
    const shelf = await runInDurableObject(env.INBOX.getByName(inbox.agent.id), (o) => o.store.list(0, 10, "dead", null));
    expect(shelf[0]!.reason).toContain(String(records[1]!.hub_msg_id));
    expect(shelf[0]!.reason).toMatch(/invalid_json: the JSON has a lone UTF-16 surrogate/);
    expect((await hubSide(inbox.agent.id)).acked.sort()).toEqual(records.map((r) => String(r.hub_msg_id)).sort());
  });

  it("readPage sets aside a record with a duplicate key or too deep, keeps the order, and refuses a bad page frame with a HubCallError", () => {
    const deep = '{"a":'.repeat(80) + "1" + "}".repeat(80);
    const page = `{"messages":[{"hub_msg_id":"h1","envelope":{}},{"hub_msg_id":"h2","envelope":{"v":1,"v":2}},{"hub_msg_id":"h3","envelope":${deep}},{"envelope":{"x":1,"x":2}},{"hub_msg_id":"h4"}],"has_more":true}`;
    const { messages, hasMore } = readPage(page, "inbox pull", 50);
    expect(hasMore).toBe(true);
    // The record with no hub_msg_id cannot be confirmed: it is left out, as any record without one.
    expect(messages.map((m) => m.hub_msg_id)).toEqual(["h1", "h2", "h3", "h4"]);
    expect(messages.map((m) => m[REFUSED]?.reason.slice(0, 40) ?? null)).toEqual([null, 'the JSON has the key "v" twice in one ob', "the JSON is nested more than 67 levels d", null]);
    expect(messages[1]![REFUSED]!.text).toBe('{"hub_msg_id":"h2","envelope":{"v":1,"v":2}}');
    expect(messages[1]!.envelope).toBeNull();
    for (const frame of ['{"messages":[],"messages":[]}', '{"messages":["\\ud800"]}', "[1]", "not json", '{"messages":[{"hub_msg_id":"h1"}],"extra":"\\udc00"}']) {
      expect(() => readPage(frame, "history", 100)).toThrow(HubCallError);
    }
  });
});
