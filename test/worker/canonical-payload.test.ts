// POST /inbox/{id}/envelopes with the payload in JCS form (protocol/posted-payload.ts, as `clawrelay send`
// posts it) and without: both are accepted and stored as sent, and each wrong hash is refused the same
// way on both paths, including a sender that hashed its own non-canonical bytes (every verifier that
// re-canonicalizes refuses that, so the relay does too). A payload taken this way is parsed only when read:
// test/worker/outbox.test.ts's error receipt ({"error":{"code","message"}}, in JCS form as JSON.stringify
// writes it) is filed from its payload that way.
import { describe, expect, it } from "vitest";
import { envelopeText, sha256Hex, signEnvelope, utf8 } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import type { TestAgent } from "../support/workerd/agents.ts";
import { claimInbox, envelopeFrom, errorCode, poll, registeredAgent, relayFetch } from "../support/workerd/agents.ts";

const PAYLOAD = { text: "deploy / review", items: [{ id: "a-1", score: 0.25, done: false }], n: -3 };

function postText(to: string, text: string): Promise<Response> {
  return relayFetch(`/inbox/${to}/envelopes`, { method: "POST", headers: { "content-type": "application/json" }, body: text });
}

/** `envelope` signed again after `change` (so only what is tested is wrong, never the signature). */
async function resigned(sender: TestAgent, envelope: Envelope, change: Partial<Envelope>): Promise<Envelope> {
  const { sig: _sig, ...unsigned } = { ...envelope, ...change };
  return signEnvelope(unsigned, sender.keyId, (m) => sender.sign(m));
}

describe("a payload posted in its JCS form", () => {
  it("is accepted and stored byte for byte as sent, as is the same payload written by JSON.stringify", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const canonical = envelopeText(await envelopeFrom(alice, inbox.agent.id, { payload: PAYLOAD }));
    const stringified = JSON.stringify(await envelopeFrom(alice, inbox.agent.id, { payload: PAYLOAD }));
    expect(canonical).toContain('"payload":{"items":[{"done":false,"id":"a-1","score":0.25}],"n":-3,"text":"deploy / review"}');
    expect(stringified).not.toContain('"payload":{"items"');
    for (const text of [canonical, stringified]) expect((await postText(inbox.agent.id, text)).status).toBe(202);
    const { messages } = await poll(inbox.agent);
    expect(messages.map((m) => m.body)).toEqual([canonical, stringified]);
    expect(messages.map((m) => (JSON.parse(m.body) as Envelope).payload)).toEqual([PAYLOAD, PAYLOAD]);
  });

  it("refuses a payload_hash that is not the payload's with payload_hash_mismatch, in JCS form and not", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const envelope = await envelopeFrom(alice, inbox.agent.id, { payload: PAYLOAD });
    const wrong = await resigned(alice, envelope, { payload_hash: `sha256:${"0".repeat(64)}` });
    expect(await errorCode(await postText(inbox.agent.id, envelopeText(wrong)))).toBe("payload_hash_mismatch");
    expect(await errorCode(await postText(inbox.agent.id, JSON.stringify(wrong)))).toBe("payload_hash_mismatch");
    expect((await poll(inbox.agent)).messages).toHaveLength(0);
  });

  it("answers a body whose other members are not strict JSON as the slow path does (a key twice after the payload)", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const envelope = await envelopeFrom(alice, inbox.agent.id, { payload: PAYLOAD });
    const twice = envelopeText(envelope).replace(/}$/, ',"v":"a2a/0.1"}');
    const res = await postText(inbox.agent.id, twice);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "invalid_json", message: expect.stringContaining('the key "v" twice') });
  });

  it("refuses a payload hashed as its sender wrote it (spaces, unsorted keys) rather than in JCS form", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const envelope = await envelopeFrom(alice, inbox.agent.id, { payload: PAYLOAD });
    const written = JSON.stringify(PAYLOAD, null, 1);
    const ownHash = await resigned(alice, envelope, { payload_hash: `sha256:${await sha256Hex(utf8(written))}` });
    const { payload: _payload, ...rest } = ownHash;
    const text = `${JSON.stringify(rest).slice(0, -1)},"payload":${written}}`;
    expect(await errorCode(await postText(inbox.agent.id, text))).toBe("payload_hash_mismatch");
  });
});
