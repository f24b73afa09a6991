// The stand-in hub's wire and text rules against the recordings of the real hub (test/fixtures/hub/,
// facts numbered as in its README): every recorded signature verifies under the stand-in's signing
// inputs but the one invalid on purpose (23, 33), ids and session keys derive as recorded (1, 9, 18),
// the recorded envelopes re-serialise in the hub model's order (15, 22), and the flat texts and webhook
// bodies of the recorded payloads come out byte for byte (4, 6, 10, 11, 12, 13, 17, 22, 26). The
// servers of both generations: agentline-hub-webhook-era.test.ts and agentline-hub-current.test.ts.
import { describe, expect, it } from "vitest";
import type { RoomContext } from "../support/node/agentline-hub-text.ts";
import { bodyText, envelopeText, flatText, pyJson, webhookBody } from "../support/node/agentline-hub-text.ts";
import { SESSION_NAMESPACE, agentIdFor, hubMadeEnvelope, modelEnvelope, payloadHashOf, readJwt, sessionKey, signingInput, signJwt, verifyBytes } from "../support/node/agentline-hub-wire.ts";
import type { Envelope } from "../support/node/agentline-hub-wire.ts";
import { envelopesIn, exchange, fixture, hubToAgent } from "../support/node/hub-fixtures.ts";

const OLD = fixture("webhook-era", "agents");
const NOW = fixture("current", "agents");
const keys = new Map<string, string>();
for (const agents of [OLD.agents, OLD.agents_postgres_run as typeof OLD.agents, NOW.agents]) {
  for (const a of Object.values(agents ?? {})) {
    keys.set(a.key_id, a.pubkey);
    if (a.second_key) keys.set(a.second_key.key_id, a.second_key.pubkey);
  }
}
const OLD_FILES = ["agent-webhook-dm", "agent-webhook-no-text", "agent-webhook-room", "endpoint-register-probe", "endpoint-register-update-and-unverified", "history", "hold-history-postgres", "hold-history-sqlite", "receipt-ack", "register-agent", "session-keys", "token-refresh", "wake-contact-request", "webhook-retry-500"];
const NOW_FILES = ["endpoint-register-deprecated", "history", "inbox-record-a2a-0.1", "inbox-record-a2a-0.2", "inbox-record-dashboard", "inbox-record-room", "inbox-record-system", "install-claim", "lease-ack-status", "lease-expiry", "policy-403", "rate-limit-429", "second-key", "token-refresh", "ws-frames"];
const all = [...OLD_FILES.map((f) => ["webhook-era", f] as const), ...NOW_FILES.map((f) => ["current", f] as const)];
const verifies = (e: Envelope) => payloadHashOf(e.payload) === e.payload_hash && verifyBytes(keys.get(e.sig.key_id) ?? "", signingInput(e), e.sig.value);
const rawOf = (f: ReturnType<typeof fixture>, label: string, nth = 0) => exchange(f, label, nth).request.raw!;

describe("ids, keys and signatures as the hub derives them", () => {
  it("verifies every signed envelope of every recording with the a2a/0.1 or a2a/0.2 input, except the one invalid on purpose (facts 23, 33)", () => {
    const failing: string[] = [];
    let checked = 0;
    for (const [generation, name] of all) {
      for (const { at, envelope } of envelopesIn(fixture(generation, name))) {
        checked++;
        if (!verifies(envelope)) failing.push(`${generation}/${name} ${at} ${envelope.msg_id}`);
      }
    }
    expect(checked).toBeGreaterThan(60);
    const invalid = exchange(fixture("current", "inbox-record-a2a-0.2"), "a2a/0.2 envelope signed with the 0.1 (nine-field) input -> rejected?").request.body as Envelope;
    expect(failing).toEqual([expect.stringContaining(invalid.msg_id)]);
    // …and the nine-field a2a/0.1 input is what it was signed over: in 0.2 topic and goal are lines 10 and 11.
    expect(verifyBytes(keys.get(invalid.sig.key_id)!, signingInput({ ...invalid, v: "a2a/0.1" }), invalid.sig.value)).toBe(true);
    const noTopic = (fixture("current", "inbox-record-a2a-0.2").envelopes_sent as Record<string, Envelope>).no_topic!;
    expect(signingInput(noTopic).toString("utf8").endsWith(`${noTopic.payload_hash}\n\n`)).toBe(true);
  });

  it("derives every recorded agent id from the base64 text of its key (facts 1, 18)", () => {
    for (const agents of [OLD.agents, NOW.agents]) for (const [id, a] of Object.entries(agents ?? {})) expect(agentIdFor(a.pubkey)).toBe(id);
    const claim = exchange(fixture("current", "install-claim"), "Alice: install-claim");
    expect(agentIdFor((claim.request.body as { agent: { pubkey: string } }).agent.pubkey)).toBe((claim.response.body as { agent: { id: string } }).agent.id);
  });

  it("computes all seven recorded session keys: the DM room, not the sender; room:topic; default (fact 9)", () => {
    const f = fixture("webhook-era", "session-keys");
    expect(SESSION_NAMESPACE).toBe(f.namespace);
    const recorded = f.keys as { seed: string; sessionKey: string }[];
    expect(recorded).toHaveLength(7);
    for (const { seed, sessionKey: key } of recorded) {
      const [room, ...topic] = seed === "default" ? [null] : seed.split(":");
      expect(sessionKey(room ?? null, topic.length > 0 ? topic.join(":") : null)).toBe(key);
    }
    expect(sessionKey(null, null)).toBe("botcord:4df4f28c-26a6-57e0-9ff4-34f0f41c3242");
  });

  it("mints JWTs with exactly the recorded header and claims, the same string within a second (facts 16, 30)", () => {
    const recorded = fixture("current", "token-refresh");
    const token = signJwt({ agent_id: "ag_da7a6bc1d6ce", exp: 1796259702, iss: "botcord" }, "s");
    const [head, claims] = token.split(".").slice(0, 2).map((part) => JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as unknown);
    expect(head).toEqual(recorded.jwt_header);
    expect(Object.keys(claims as object)).toEqual(recorded.jwt_claim_names);
    expect(signJwt({ agent_id: "ag_da7a6bc1d6ce", exp: 1796259702, iss: "botcord" }, "s")).toBe(token);
    expect(readJwt(token, "s", 1796259701)).toEqual(recorded.jwt_claims_example);
    expect(readJwt(token, "s", 1796259702)).toBe("expired");
    expect(readJwt(token, "other", 0)).toBeNull();
  });
});

describe("envelopes as the hub's model re-serialises them", () => {
  it("adds topic, goal and mentions as null in the model's order, and trace_id at HEAD (facts 15, 22)", () => {
    const dm = fixture("webhook-era", "hold-history-postgres");
    const listed = (exchange(dm, "history after send answered (Bob)").response.body as { messages: { envelope: unknown }[] }).messages[0]!.envelope;
    expect(JSON.stringify(modelEnvelope(dm.envelope_sent as Envelope, false))).toBe(JSON.stringify(listed));
    const room = fixture("webhook-era", "agent-webhook-room");
    const history = (exchange(room, "Bob room history").response.body as { messages: { envelope: unknown }[] }).messages;
    const sent = room.envelopes_sent as Record<string, Envelope>;
    expect(history.map((m) => JSON.stringify(m.envelope))).toEqual([sent.a2a_0_2_topic_goal!, sent.query_topic!, sent.no_topic!, sent.envelope_topic!].map((e) => JSON.stringify(modelEnvelope(e, false))));
    const now = fixture("current", "inbox-record-a2a-0.1");
    const record = (exchange(now, "Bob pull ack=false").response.body as { messages: { envelope: unknown }[] }).messages[0]!;
    expect(JSON.stringify(modelEnvelope(now.envelope_sent as Envelope, true))).toBe(JSON.stringify(record.envelope));
  });
});

describe("flat text and webhook bodies, byte for byte", () => {
  const dm = fixture("webhook-era", "agent-webhook-dm");
  const alice = "ag_0aca6e6209c1";

  it("renders a DM as the recorded body: key order, compact, raw UTF-8, the DM room's session key (fact 6)", () => {
    const e = dm.envelope_sent as Envelope;
    const { leaf, body } = webhookBody(e, "Alice", `rm_dm_${alice}_ag_fdc6234fdfbc`, null, null);
    expect(leaf).toBe("agent");
    expect(JSON.stringify(body)).toBe(rawOf(dm, "webhook to Bob"));
    expect(Buffer.byteLength(JSON.stringify(body))).toBe(exchange(dm, "webhook to Bob").request.raw_bytes);
  });

  it("renders a payload without text as Python's json.dumps, and text with newlines, quotes and CJK verbatim (fact 11)", () => {
    const f = fixture("webhook-era", "agent-webhook-no-text");
    const [noText, cjk] = f.envelopes_sent as Envelope[];
    const room = `rm_dm_${alice}_ag_fdc6234fdfbc`;
    expect([noText!, cjk!].map((e) => JSON.stringify(webhookBody(e, "Alice", room, null, null).body))).toEqual([rawOf(f, "webhook to Bob", 0), rawOf(f, "webhook to Bob", 1)]);
    expect(pyJson({ data: { x: 1 }, note: "é", list: [1, "a"], empty: {} })).toBe('{"data": {"x": 1}, "note": "é", "list": [1, "a"], "empty": {}}');
  });

  it("renders room messages under the header with 权限 on the first push, topic/goal lines from the envelope only, and drops 权限 on retries (facts 10, 17)", () => {
    const f = fixture("webhook-era", "agent-webhook-room");
    const r = f.room as { room_id: string; name: string; members: { agent_id: string }[] };
    const names = r.members.map((m) => OLD.agents![m.agent_id]!.display_name);
    const ctx: RoomContext = { room_id: r.room_id, name: r.name, member_count: 3, member_names: names, my_role: "member", my_can_send: true };
    const sent = f.envelopes_sent as Record<string, Envelope>;
    const cases: [Envelope, string | null][] = [[sent.envelope_topic!, "design-review"], [sent.no_topic!, null], [sent.query_topic!, "query-topic"], [sent.a2a_0_2_topic_goal!, "signed-topic"]];
    const bodies = cases.map(([e, topic]) => JSON.stringify(webhookBody(e, "Alice", r.room_id, topic, ctx).body));
    const pushed = hubToAgent(f).map((x) => x.request.raw!);
    expect(pushed).toEqual(bodies.flatMap((b) => [b, b])); // Carol's and Bob's are identical
    const retry = fixture("webhook-era", "webhook-retry-500");
    const roomRetry = (retry.envelopes_sent as Envelope[])[1]!;
    const raws = hubToAgent(retry).map((x) => x.request.raw!);
    expect(JSON.stringify(webhookBody(roomRetry, "Alice", r.room_id, "design-review", ctx).body)).toBe(raws[2]);
    expect(JSON.stringify(webhookBody(roomRetry, "Alice", r.room_id, "design-review", { ...ctx, my_role: null, my_can_send: null }).body)).toBe(raws[4]);
    expect(raws[1]).toBe(raws[0]); // a DM retry: the same bytes
  });

  it("renders the welcome, the wake bodies of a contact request and its acceptance, and the forwarded ack (facts 4, 12, 13)", () => {
    const probe = fixture("webhook-era", "endpoint-register-probe");
    const welcome = hubMadeEnvelope("hub", "ag_fdc6234fdfbc", "system", { text: "[BotCord Hub] Welcome! Your webhook endpoint is active. This test message confirms delivery is working." }, "hub");
    expect(JSON.stringify(webhookBody(welcome, "BotCord Hub", null, null, null).body)).toBe(rawOf(probe, "welcome webhook (system message from the hub)"));
    const wake = fixture("webhook-era", "wake-contact-request");
    const request = webhookBody(wake.envelope_sent as Envelope, "Carol", null, null, null);
    const accepted = webhookBody(hubMadeEnvelope("ag_fdc6234fdfbc", "ag_16968264a4e7", "contact_request_response", { state: "accepted", request_id: 1 }, "system"), "Bob", null, null, null);
    expect([request.leaf, accepted.leaf]).toEqual(["wake", "wake"]);
    expect([JSON.stringify(request.body), JSON.stringify(accepted.body)]).toEqual([rawOf(wake, "/wake webhook to Bob"), rawOf(wake, "/wake webhook to Carol")]);
    const receipt = fixture("webhook-era", "receipt-ack");
    expect(JSON.stringify(webhookBody(receipt.ack_envelope as Envelope, "Bob", null, null, null).body)).toBe(rawOf(receipt, "the hub forwards the ack receipt to Alice's endpoint as a webhook"));
  });

  it("writes the webhook era's inbox text with the sender's name, and today's as the body alone or the hub's own words (facts 15, 22, 26)", () => {
    const held = (exchange(fixture("webhook-era", "hold-history-sqlite"), "inbox during hold (Bob)").response.body as { messages: { envelope: Envelope; text: string; mentioned: boolean }[] }).messages[0]!;
    expect(flatText(held.envelope, "Alice", null, held.mentioned)).toBe(held.text);
    let checked = 0;
    for (const name of NOW_FILES) {
      for (const x of fixture("current", name).exchanges) {
        const messages = (x.response.body as { messages?: { envelope: Envelope; text?: string }[] } | null)?.messages ?? [];
        for (const m of messages.filter((m) => m.text !== undefined)) {
          expect(bodyText(m.envelope), `${name}: ${m.envelope.msg_id}`).toBe(m.text);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(15);
    expect(envelopeText({ ...(dm.envelope_sent as Envelope), mentions: ["ag_x"] }, "Alice", { mentioned: true })).toBe("【Mentions: ag_x】\n【⚠️ You were mentioned】\nAlice (ag_0aca6e6209c1) says: hello bob");
  });
});
