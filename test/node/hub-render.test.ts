// One renderer, two paths: every envelope type the hub or a peer sends reaches the gateway with the same
// text, name, session key and conversation, whether the relay pulled it from the hub (the record through
// protocol/hub-flat.ts pulledRecordBody, stored as a hook body) or it was sent straight to the inbox (an
// envelope frame through the agent's local-agent/delivery/pending-message.ts). The expected texts are the
// real hub's, recorded from its builds (test/fixtures/hub/README.md); the expected key is the hub's for the
// room and topic its record was stored with. The only differences allowed are hub-only context, each
// named where it is asserted: the sender's display name, a group room's header line, a topic's hub id
// and the mention markers.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { hubSessionKey, hubSubpaths, parseEnvelope, payloadHash, pulledRecordBody, readPulledRecord, renderHubMessage } from "../../protocol/index.ts";
import type { DeliveryFrame } from "../../protocol/index.ts";
import { pendingFor, postableRequest } from "../../local-agent/delivery/pending-message.ts";

type Json = Record<string, unknown>;
interface Exchange { label: string; direction?: string; request: { raw?: string }; response: { body?: unknown } }
interface Fixture { exchanges: Exchange[]; envelopes_sent?: Record<string, Json>; ack_envelope?: Json }

const read = (path: string): Fixture => JSON.parse(readFileSync(new URL(`../fixtures/hub/${path}`, import.meta.url), "utf8")) as Fixture;

/** Every record a history or inbox answer in the file holds. */
function recordsOf(fixture: Fixture): Json[] {
  return fixture.exchanges.flatMap((e) => ((e.response.body as { messages?: Json[] } | undefined)?.messages ?? []));
}
const envelopeOf = (record: Json) => record.envelope as Json;
const recordOf = (fixture: Fixture, match: (envelope: Json) => boolean): Json => recordsOf(fixture).find((r) => match(envelopeOf(r)))!;

/** The webhook body the hub pushed in the exchange labelled `label`. */
function pushed(fixture: Fixture, label: string): { message?: string; body?: string; name?: string; sessionKey: string } {
  const exchange = fixture.exchanges.find((e) => e.label === label && e.direction === "hub->agent");
  return JSON.parse(exchange!.request.raw!) as { sessionKey: string };
}

interface Arrival { subpath: string; text: string; name: string | null; sessionKey: string; conversation: string }

function arrival(frame: DeliveryFrame): Arrival {
  const pending = pendingFor(frame);
  const request = postableRequest(pending, "botcord");
  const body = JSON.parse(new TextDecoder().decode(request.body)) as Record<string, string>;
  // A wake body says its text twice (the hub's `body`, the gateway's `text`).
  if (body.mode === "now") expect(body.body).toBe(body.text);
  return { subpath: request.subpath, text: body.message ?? body.text!, name: body.name ?? null, sessionKey: body.sessionKey!, conversation: pending.conversation };
}

const frame = (kind: "envelope" | "hook", subpath: string | null, body: unknown): DeliveryFrame =>
  ({ type: "message", id: 1, kind, subpath, content_type: "application/json", body: JSON.stringify(body), encoding: "utf8", received_at: 0, expires_at: 0 });

/** The direct path: the relay delivers the envelope as itself, the agent renders it. */
const direct = (envelope: Json) => arrival(frame("envelope", null, envelope));

/** The pulled path: the relay renders the hub's record and stores the body; the agent posts it as it came. */
function pulled(record: Json): Arrival {
  const raw = envelopeOf(record);
  const mentions = Array.isArray(raw.mentions) ? (raw.mentions as string[]) : null;
  const { leaf, body } = pulledRecordBody(readPulledRecord(record)!, parseEnvelope(raw), "signature", mentions);
  return arrival(frame("hook", hubSubpaths("botcord")[leaf], body));
}

/** Hub-only: the display name the hub put in "Bob (ag_…)"; neither path knows an agent's. */
const withoutDisplayName = (text: string, name: string | null, id: string) => (name ? text.split(`${name} (${id})`).join(id) : text);

interface Case { type: string; envelope: Json; record: Json; hubText: string; displayName: string | null; pushedKey?: string }

const notices = read("webhook-era/receipts-and-contact-notices.json");
const receipt = read("webhook-era/receipt-ack.json");
const current = read("current/inbox-record-system.json");

function sentCase(type: string, sent: string, pushLabel: string, displayName: string): Case {
  const envelope = notices.envelopes_sent![sent]!;
  const push = pushed(notices, pushLabel);
  return { type, envelope, record: recordOf(notices, (e) => e.msg_id === envelope.msg_id), hubText: push.message ?? push.body!, displayName, pushedKey: push.sessionKey };
}

function hubMadeCase(type: string, pushLabel: string): Case {
  const record = recordOf(notices, (e) => e.type === type);
  return { type, envelope: envelopeOf(record), record, hubText: pushed(notices, pushLabel).body!, displayName: "Bob", pushedKey: pushed(notices, pushLabel).sessionKey };
}

/** Today's hub writes a non-message record's whole text (to_text) itself: the hub's text, no display name. */
function currentCase(type: string, from: string): Case {
  const record = recordOf(current, (e) => e.type === type && e.from === from);
  return { type, envelope: envelopeOf(record), record, hubText: record.text as string, displayName: null };
}

const CASES: Case[] = [
  sentCase("message", "Alice -> Bob message 1", "the hub pushes: Alice -> Bob message 1", "Alice"),
  sentCase("result", "Bob's result for message 1", "the hub forwards: Bob's result for message 1", "Bob"),
  sentCase("error", "Bob's error for message 2", "the hub forwards: Bob's error for message 2", "Bob"),
  sentCase("error", "Bob's error without a message for message 3", "the hub forwards: Bob's error without a message for message 3", "Bob"),
  {
    type: "ack",
    envelope: receipt.ack_envelope!,
    record: recordOf(receipt, (e) => e.msg_id === receipt.ack_envelope!.msg_id),
    hubText: pushed(receipt, "the hub forwards the ack receipt to Alice's endpoint as a webhook").message!,
    displayName: "Bob",
  },
  currentCase("ack", "ag_652eca9ef86c"),
  sentCase("contact_request", "Alice -> Bob contact_request", "the hub pushes: Alice -> Bob contact_request", "Alice"),
  hubMadeCase("contact_request_response", "the hub pushes the accept notice to Alice (contact_request_response)"),
  hubMadeCase("contact_removed", "the hub pushes the removal notice to Alice (contact_removed)"),
  currentCase("system", "hub"),
  currentCase("error", "hub"),
];

describe("every envelope type through both paths", () => {
  it("covers every type the hub sends", () => {
    expect(new Set(CASES.map((c) => c.type))).toEqual(new Set(["message", "ack", "result", "error", "contact_request", "contact_request_response", "contact_removed", "system"]));
  });

  it.each(CASES.map((c) => [`${c.type}: ${c.hubText.slice(0, 60)}`, c] as const))("%s", (_, c) => {
    const from = c.envelope.from as string;
    const key = hubSessionKey(c.record.room_id as string | null, c.record.topic as string | null);
    const wake = ["contact_request", "contact_request_response", "contact_removed"].includes(c.type);
    const expected: Arrival = {
      subpath: wake ? "botcord_inbox/wake" : "botcord_inbox/agent",
      text: withoutDisplayName(c.hubText, c.displayName, from),
      name: wake ? null : from,
      sessionKey: key,
      // The agent orders per session: the conversation is the session key.
      conversation: key,
    };
    expect(direct(c.envelope)).toEqual(expected);
    expect(pulled(c.record)).toEqual(expected);
    // With the display name the hub knows, the renderer writes the hub's text to the byte.
    expect(renderHubMessage(parseEnvelope(c.envelope), { senderName: c.displayName }).text).toBe(c.hubText);
  });

  it("a DM's key is the webhook-era hub's own; its receipts and contact notices went out under 'default' but are stored with their room", () => {
    const [message, result] = CASES;
    expect(message!.pushedKey).toBe(direct(message!.envelope).sessionKey);
    expect(message!.record.room_id).toMatch(/^rm_dm_ag_[0-9a-f]{12}_ag_[0-9a-f]{12}$/);
    // Receipt forwarding passed no room to the push; the record (and so a pulled one) has the DM room.
    expect(result!.pushedKey).toBe(hubSessionKey(null, null));
    expect(result!.record.room_id).toBe(message!.record.room_id);
    expect(direct(result!.envelope).sessionKey).toBe(direct(message!.envelope).sessionKey);
  });
});

describe("the hub-only differences, and nothing else", () => {
  const room = read("current/inbox-record-room.json");
  const record = recordOf(room, (e) => e.v === "a2a/0.2" && Array.isArray(e.mentions));

  it("a signed a2a/0.2 room message: the same session; the pulled text adds only the room header, the topic's hub id and the mention markers", () => {
    const fromHub = pulled(record);
    const sentDirect = direct(envelopeOf(record));
    expect(fromHub.sessionKey).toBe(hubSessionKey(record.room_id as string, "signed-topic"));
    expect(sentDirect.sessionKey).toBe(fromHub.sessionKey);
    expect(sentDirect.conversation).toBe(fromHub.conversation);
    const lines = fromHub.text.split("\n");
    const header = lines[0]!;
    expect(header).toBe(`[群聊「Project Alpha」(${record.room_id as string}) | 3人: Alice, Bob, Carol | 权限: member, 可发言]`);
    const topicId = ` | ID: ${record.topic_id as string}`;
    expect(lines[1]).toBe(`【Topic: signed-topic${topicId}】`);
    const markers = ["【Mentions: ag_652eca9ef86c】", "【⚠️ You were mentioned】"];
    expect(lines.slice(3, 5)).toEqual(markers);
    const hubOnly = lines.filter((line) => line !== header && !markers.includes(line)).join("\n").replace(topicId, "");
    expect(hubOnly).toBe(sentDirect.text);
    expect(sentDirect.text).toBe(`【Topic: signed-topic】\n【Goal: agree on a plan】\n${String(envelopeOf(record).from)} says: room hello a2a/0.2`);
  });

  it("a display name is the hub's alone: a dashboard user's name reaches the gateway only through the hub", async () => {
    const dashboard = read("current/inbox-record-dashboard.json");
    const found = recordOf(dashboard, (e) => String(e.from).startsWith("hu_"));
    // Unsigned and unhashed: the relay computes the hash to read its shape (worker/hub/hub-pull.ts).
    const envelope: Json = { ...envelopeOf(found), payload_hash: await payloadHash(envelopeOf(found).payload as Json) };
    const human: Json = { ...found, envelope };
    expect(pulled(human).name).toBe(`${String(human.source_user_name)} (${String(envelope.from)})`);
    expect(direct(envelope).name).toBe(envelope.from);
    expect(pulled(human).text).toBe(`${String(human.source_user_name)} (${String(envelope.from)}) says: hello Bob, I am Hana (human)`);
    expect(direct(envelope).text).toBe(`${String(envelope.from)} says: hello Bob, I am Hana (human)`);
  });
});
