// The hub's flat bodies both ways: reading what a webhook-era hub posts (sender, text, session key in
// any namespace, room header and topic lines before the "says:" line), the hub's session key
// (UUIDv5 values computed with Python's uuid module), and the body the relay writes for a pulled record.
import { describe, expect, it } from "vitest";
import {
  BOTCORD_SESSION_NAMESPACE,
  hubSessionKey,
  hubText,
  messageBody,
  parseEnvelope,
  parseFlatHubBody,
  pulledRecordBody,
  pythonJson,
  readPulledRecord,
  sessionKeyNamesRoom,
  utf8,
  uuidV5,
} from "../../protocol/index.ts";

const body = (value: unknown) => utf8(JSON.stringify(value));
const ALICE = "ag_601bedfbfc34";
const BOB = "ag_3659fcd334a9";
const DM = `rm_dm_${BOB}_${ALICE}`;

describe("the hub's session key", () => {
  it("is botcord:UUIDv5(UUIDv5(DNS, 'botcord'), room[:topic]) — the values Python's uuid module gives", () => {
    expect(uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "botcord")).toBe(BOTCORD_SESSION_NAMESPACE);
    expect(hubSessionKey(DM, null)).toBe("botcord:a4699e1c-e78b-520c-8fce-e66b7b492193");
    expect(hubSessionKey(null, null)).toBe("botcord:4df4f28c-26a6-57e0-9ff4-34f0f41c3242");
    expect(hubSessionKey("rm_x", "topic é")).toBe("botcord:b9424f02-e505-52f8-8e5e-73f51e2978a5");
  });

  it("names a room in the hub's form or Agentline's, and says nothing for another namespace", () => {
    expect(sessionKeyNamesRoom("botcord:a4699e1c-e78b-520c-8fce-e66b7b492193", DM, null)).toBe(true);
    expect(sessionKeyNamesRoom("botcord:a4699e1c-e78b-520c-8fce-e66b7b492193", "rm_other", null)).toBe(false);
    expect(sessionKeyNamesRoom(`agentline:${DM}`, DM, null)).toBe(true);
    expect(sessionKeyNamesRoom("agentline:rm_other", DM, null)).toBe(false);
    expect(sessionKeyNamesRoom(`agentline:${ALICE}`, DM, null)).toBeNull();
    expect(sessionKeyNamesRoom("hook:whatever", DM, null)).toBeNull();
  });
});

describe("reading a flat /agent body", () => {
  it("takes the sender from the says line and name, and the text after it, for any session-key namespace", () => {
    for (const sessionKey of ["botcord:a4699e1c-e78b-520c-8fce-e66b7b492193", `agentline:${DM}`, "custom:anything"]) {
      const flat = parseFlatHubBody(body({ message: `Alice (${ALICE}) says: hello bob`, name: `Alice (${ALICE})`, channel: "last", sessionKey }));
      expect(flat).toEqual({ sender: ALICE, text: "hello bob", sessionKey, context: [] });
    }
  });

  it("keeps header lines apart and multi-line text whole; a display-less sender is the id alone", () => {
    const message = `[群聊「Project」(rm_abc) | 3人: Alice, Bob, Carol]\n【Topic: plan】\n${ALICE} says: line one\nline two says: no`;
    const flat = parseFlatHubBody(body({ message, name: ALICE, channel: "last", sessionKey: "botcord:x" }));
    expect(flat?.sender).toBe(ALICE);
    expect(flat?.text).toBe("line one\nline two says: no");
    expect(flat?.context).toEqual(["[群聊「Project」(rm_abc) | 3人: Alice, Bob, Carol]", "【Topic: plan】"]);
  });

  it("is not a flat message body: a wake body, a probe, a name naming someone else, no session key, not JSON", () => {
    expect(parseFlatHubBody(body({ body: `Alice (${ALICE}) sent you a contact request.`, mode: "now", sessionKey: "botcord:x" }))).toBeNull();
    expect(parseFlatHubBody(body({ probe: true }))).toBeNull();
    expect(parseFlatHubBody(body({ message: `Alice (${ALICE}) says: hi`, name: `Bob (${BOB})`, sessionKey: "botcord:x" }))).toBeNull();
    expect(parseFlatHubBody(body({ message: `Alice (${ALICE}) says: hi`, name: `Alice (${ALICE})` }))).toBeNull();
    expect(parseFlatHubBody(utf8("not json"))).toBeNull();
  });
});

describe("rendering as the hub does", () => {
  it("uses text, else body, else message, else the payload as Python's json.dumps writes it", () => {
    expect(messageBody({ text: "hi", body: "b" })).toBe("hi");
    expect(messageBody({ text: "", body: "b" })).toBe("b");
    expect(messageBody({ data: { x: 1, y: [1, 2.5, true, null] }, note: "é" })).toBe('{"data": {"x": 1, "y": [1, 2.5, true, null]}, "note": "é"}');
    expect(pythonJson([])).toBe("[]");
  });

  it("lists attachments, with relative URLs made absolute against the hub", () => {
    const text = messageBody({ text: "see", attachments: [{ filename: "a.txt", url: "/files/1", size_bytes: 12 }, { url: "https://x/y" }] }, "https://hub.test");
    expect(text).toBe("see\n【Attachments】\n  📎 a.txt, 12 bytes: https://hub.test/files/1\n  📎 file: https://x/y");
  });

  it("heads a group room's message and marks topic and goal, as the webhook-era hub did", () => {
    const envelope = parseEnvelope({
      v: "a2a/0.1", msg_id: "m1", ts: 1, from: ALICE, to: "rm_abc", type: "message", reply_to: null, ttl_sec: 3600,
      payload: { text: "hi all" }, payload_hash: "sha256:0", sig: { alg: "ed25519", key_id: "k_1", value: "x" },
    });
    const room = { id: "rm_abc", name: "Project", memberCount: 3, memberNames: ["Alice", "Bob", "Carol"], myRole: "member", myCanSend: true };
    expect(hubText(envelope, { senderName: "Alice", topic: "plan", goal: "ship", room })).toBe(
      `[群聊「Project」(rm_abc) | 3人: Alice, Bob, Carol | 权限: member, 可发言]\n【Topic: plan】\n【Goal: ship】\nAlice (${ALICE}) says: hi all`,
    );
    // Two members: a DM, no header.
    expect(hubText(envelope, { room: { ...room, memberCount: 2 } })).toBe(`${ALICE} says: hi all`);
  });
});

describe("the body written for a pulled record", () => {
  const signed = parseEnvelope({
    v: "a2a/0.2", msg_id: "m2", ts: 1, from: ALICE, to: BOB, type: "message", reply_to: null, ttl_sec: 3600, topic: "plan", goal: null,
    payload: { text: "hi bob" }, payload_hash: "sha256:0", sig: { alg: "ed25519", key_id: "k_1", value: "x" },
  });
  const record = readPulledRecord({
    hub_msg_id: "h_1", text: "hi bob", room_id: DM, room_name: "DM", room_member_count: 2, room_member_names: ["Bob", "Alice"],
    my_role: "member", my_can_send: true, topic: "plan", topic_id: "tp_1", goal: null, mentioned: true, source_type: "agent", source_user_name: null,
  })!;

  it("is the webhook-era /agent body with the room's session key, plus the record's ids, room and topic", () => {
    const { leaf, body: out } = pulledRecordBody(record, signed, "signature", null);
    expect(leaf).toBe("agent");
    expect(out).toEqual({
      message: `【Topic: plan | ID: tp_1】\n${ALICE} says: hi bob`,
      name: ALICE,
      channel: "last",
      sessionKey: hubSessionKey(DM, "plan"),
      hub_msg_id: "h_1", msg_id: "m2", from: ALICE, type: "message", room_id: DM, room_name: "DM", topic: "plan", topic_id: "tp_1", goal: null,
      source_type: "agent", source_user_name: null, verified_by: "signature",
    });
  });

  it("names a dashboard user by the name the hub gives, marked as vouched for by the hub", () => {
    const human = parseEnvelope({ ...signed, from: "hu_0123", v: "a2a/0.1", sig: { alg: "ed25519", key_id: "hub", value: "" } });
    const { body: out } = pulledRecordBody({ ...record, source_type: "dashboard_user_chat", source_user_name: "Carol" }, human, "hub", null);
    expect([out.name, out.verified_by, out.message]).toEqual(["Carol (hu_0123)", "hub", "【Topic: plan | ID: tp_1】\nCarol (hu_0123) says: hi bob"]);
  });

  it("goes to /wake for contact requests, with the text under both names the gateway and the hub use", () => {
    const request = parseEnvelope({ ...signed, v: "a2a/0.1", type: "contact_request", payload: { message: "let's talk" } });
    const { leaf, body: out } = pulledRecordBody({ ...record, topic: null, topic_id: null, room_id: null }, request, "signature", null);
    expect(leaf).toBe("wake");
    expect(out.text).toBe(`${ALICE} sent you a contact request. Message: "let's talk"`);
    expect(out.body).toBe(out.text);
    expect(out.sessionKey).toBe(hubSessionKey(null, null));
  });
});
