// POST /inbox/{id}/envelopes: each verification step's code, in order; key look-up and its cache.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { draftEnvelope, payloadHash, signEnvelope } from "../../protocol/index.ts";
import {
  claimInbox,
  envelopeFrom,
  errorCode,
  hubLookups,
  newAgent,
  poll,
  postEnvelope,
  registerAtHub,
  registeredAgent,
} from "../support/workerd/agents.ts";


describe("signed envelope intake", () => {
  it("accepts a valid envelope with 202, queues it, and stores exactly its signed fields (an unsigned extra is dropped)", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const envelope = { ...(await envelopeFrom(alice, inbox.agent.id)), topic: "unsigned extra" };
    const res = await postEnvelope(envelope);
    expect(res.status).toBe(202);
    const answer = (await res.json()) as { queued: boolean; id: number };
    expect(answer.queued).toBe(true);
    const { messages } = await poll(inbox.agent);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.kind).toBe("envelope");
    expect(messages[0]!.id).toBe(answer.id);
    const { topic: _dropped, ...signed } = envelope;
    expect(messages[0]!.body).toBe(JSON.stringify(signed));
    expect(messages[0]!.expires_at - messages[0]!.received_at).toBe(envelope.ttl_sec * 1000);
  });

  it("verifies an a2a/0.2 envelope over the eleven fields: topic and goal are kept, and changing either breaks the signature", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const unsigned = { ...(await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text: "on topic" } })), v: "a2a/0.2" as const, topic: "deploy", goal: "ship friday" };
    const envelope = await signEnvelope(unsigned, alice.keyId, alice.sign);
    expect((await postEnvelope(envelope)).status).toBe(202);
    const { messages } = await poll(inbox.agent);
    expect(JSON.parse(messages[0]!.body)).toMatchObject({ v: "a2a/0.2", topic: "deploy", goal: "ship friday" });
    for (const tampered of [{ ...envelope, topic: "other" }, { ...envelope, goal: null }]) {
      expect(await errorCode(await postEnvelope(tampered))).toBe("invalid_signature");
    }
  });

  const failures: [string, (e: Record<string, unknown>) => Record<string, unknown>, string][] = [
    ["shape", (e) => ({ ...e, v: "a2a/0.3" }), "invalid_envelope"],
    ["recipient", (e) => ({ ...e, to: "ag_000000000000" }), "wrong_recipient"],
    ["timestamp in the past", (e) => ({ ...e, ts: (e.ts as number) - 301 }), "timestamp_out_of_range"],
    ["timestamp in the future", (e) => ({ ...e, ts: (e.ts as number) + 301 }), "timestamp_out_of_range"],
    ["payload hash", (e) => ({ ...e, payload: { text: "changed" } }), "payload_hash_mismatch"],
    ["unknown key", (e) => ({ ...e, sig: { ...(e.sig as object), key_id: "k_nosuchkey" } }), "unknown_signing_key"],
    ["signature", (e) => ({ ...e, msg_id: "another-id" }), "invalid_signature"],
  ];
  for (const [name, tamper, code] of failures) {
    it(`refuses a bad ${name} with ${code} and stores nothing`, async () => {
      const inbox = await claimInbox();
      const alice = await registeredAgent();
      const good = (await envelopeFrom(alice, inbox.agent.id)) as unknown as Record<string, unknown>;
      const bad = tamper(good);
      const res = await postEnvelope(bad, inbox.agent.id);
      expect(res.status).toBe(400);
      expect(await errorCode(res)).toBe(code);
      expect((await poll(inbox.agent)).count).toBe(0);
    });
  }

  it("accepts a timestamp exactly 300 s old (the window is inclusive)", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const res = await postEnvelope(await envelopeFrom(alice, inbox.agent.id, { ts: Math.floor(Date.now() / 1000) - 299 }));
    expect(res.status).toBe(202);
  });

  it("refuses revoked and pending keys, and a key the hub says belongs to someone else", async () => {
    const inbox = await claimInbox();
    const revoked = newAgent();
    await registerAtHub(revoked, "revoked");
    const res = await postEnvelope(await envelopeFrom(revoked, inbox.agent.id));
    expect(await errorCode(res)).toBe("signing_key_not_active");
    const pending = newAgent();
    await registerAtHub(pending, "pending");
    expect(await errorCode(await postEnvelope(await envelopeFrom(pending, inbox.agent.id)))).toBe("signing_key_not_active");
    const borrowed = newAgent();
    await registerAtHub(borrowed, "active", "ag_aaaaaaaaaaaa");
    expect(await errorCode(await postEnvelope(await envelopeFrom(borrowed, inbox.agent.id)))).toBe("key_not_owned_by_sender");
  });

  it("asks the hub for a key once, not for every message", async () => {
    const inbox = await claimInbox(undefined, { rate_per_minute: 100 });
    const alice = await registeredAgent();
    for (let i = 0; i < 5; i++) expect((await postEnvelope(await envelopeFrom(alice, inbox.agent.id))).status).toBe(202);
    expect(await hubLookups(alice.id, alice.keyId)).toBe(1);
  });

  it("verifies keys registered on this relay without asking the hub", async () => {
    const bob = await claimInbox();
    const alice = await claimInbox();
    const res = await postEnvelope(await envelopeFrom(alice.agent, bob.agent.id));
    expect(res.status).toBe(202);
    expect(await hubLookups(alice.agent.id, alice.agent.keyId)).toBe(0);
  });

  it("refuses unsigned hub-made envelopes posted directly", async () => {
    const inbox = await claimInbox();
    const draft = await draftEnvelope({ from: "hub", to: inbox.agent.id, type: "system", payload: { text: "hi" } });
    const res = await postEnvelope({ ...draft, sig: { alg: "ed25519", key_id: "hub", value: "" } });
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("unsigned_envelope_refused");
  });

  it("refuses a signature made with a key other than the one named", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const mallory = newAgent();
    const draft = await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text: "hi" } });
    const forged = await signEnvelope(draft, alice.keyId, mallory.sign);
    expect(await errorCode(await postEnvelope(forged))).toBe("invalid_signature");
  });

  it("refuses invalid JSON with invalid_json", async () => {
    const inbox = await claimInbox();
    const res = await postEnvelope("not json" as unknown, inbox.agent.id);
    expect(res.status).toBe(400);
    expect(await errorCode(res)).toBe("invalid_envelope");
    const raw = await fetchRaw(inbox.agent.id, "{not json");
    expect(raw.status).toBe(400);
    expect(await errorCode(raw)).toBe("invalid_json");
  });

  it("payload hashes follow JCS, so key order in the sent JSON does not matter", async () => {
    const inbox = await claimInbox();
    const alice = await registeredAgent();
    const envelope = await envelopeFrom(alice, inbox.agent.id, { payload: { b: 1, a: { d: [1, 2], c: "x" } } });
    expect(envelope.payload_hash).toBe(await payloadHash({ a: { c: "x", d: [1, 2] }, b: 1 }));
    expect((await postEnvelope(envelope)).status).toBe(202);
  });
});

function fetchRaw(agentId: string, body: string): Promise<Response> {
  return env.INBOX.getByName(agentId).fetch(`https://relay.test/inbox/${agentId}/envelopes`, { method: "POST", body });
}
