// What the agent posts to the gateway for each delivered frame: hook bodies byte for byte, envelopes
// as the hub's webhook would have formatted them (docs/openclaw-setup.md, "The mappings"), through the
// renderer the relay uses too (protocol/hub-render.ts; every type against the hub's recorded texts in
// test/protocol/hub-render.test.ts).
import { describe, expect, it } from "vitest";
import { hubSessionKey, toBase64, utf8 } from "../../protocol/index.ts";
import type { DeliveryFrame, Envelope, EnvelopeType } from "../../protocol/index.ts";
import { AGENT_SUBPATH, WAKE_SUBPATH, envelopeRequest, gatewayRequestFor } from "../../local-agent/delivery/hub-format.ts";

function hookFrame(body: string, encoding: "utf8" | "base64", subpath: string | null, contentType = "application/json"): DeliveryFrame {
  return { type: "message", id: 1, kind: "hook", subpath, content_type: contentType, body, encoding, received_at: 0, expires_at: 0 };
}

/** An envelope as the relay hands it over (already verified there; neither its signature nor its payload_hash is read here). */
function envelope(type: EnvelopeType, payload: Record<string, unknown>, extra: Record<string, unknown> = {}): Envelope {
  const reply_to = ["ack", "result", "error"].includes(type) ? "m-1" : null;
  const sig = { alg: "ed25519" as const, key_id: "k_x", value: "" };
  return { v: "a2a/0.1", msg_id: "m-2", ts: 1_700_000_000, from: "ag_x", to: "ag_me", type, reply_to, ttl_sec: 3600, payload, payload_hash: `sha256:${"0".repeat(64)}`, sig, ...extra };
}

function envelopeFrame(value: object): DeliveryFrame {
  return { type: "message", id: 2, kind: "envelope", subpath: null, content_type: "application/json", body: JSON.stringify(value), encoding: "utf8", received_at: 0, expires_at: 0 };
}

const decode = (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;

describe("hook frames", () => {
  it("pass utf8 bodies through unchanged, at their subpath", () => {
    const body = '{ "message" : "héllo 👋" ,"x":1}';
    const request = gatewayRequestFor(hookFrame(body, "utf8", "agentgram_inbox/wake", "text/plain; charset=utf-8"));
    expect(request.subpath).toBe("agentgram_inbox/wake");
    expect(request.contentType).toBe("text/plain; charset=utf-8");
    expect([...request.body]).toEqual([...utf8(body)]);
  });

  it("pass base64 bodies through as the original bytes", () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, 0xff, 0x00, 0x41, 0x80]);
    const request = gatewayRequestFor(hookFrame(toBase64(bytes), "base64", "custom/path", "application/octet-stream"));
    expect([...request.body]).toEqual([...bytes]);
    expect(request.subpath).toBe("custom/path");
  });

  it("default to the agent subpath when none was given", () => {
    expect(gatewayRequestFor(hookFrame("{}", "utf8", null)).subpath).toBe(AGENT_SUBPATH);
  });
});

const DM_KEY = hubSessionKey("rm_dm_ag_me_ag_x", null);
const DEFAULT_KEY = hubSessionKey(null, null);

describe("message envelopes", () => {
  it("become the hub's /agent body, in the session of the sender's DM room", () => {
    const request = gatewayRequestFor(envelopeFrame(envelope("message", { text: "Hi" })));
    expect(request.subpath).toBe(AGENT_SUBPATH);
    expect(request.contentType).toBe("application/json");
    expect(decode(request.body)).toEqual({ message: "ag_x says: Hi", name: "ag_x", channel: "last", sessionKey: DM_KEY });
  });

  it("go under the prefix the inbox's hub uses", () => {
    expect(gatewayRequestFor(envelopeFrame(envelope("message", { text: "Hi" })), undefined, "botcord").subpath).toBe("botcord_inbox/agent");
    expect(envelopeRequest(envelope("contact_removed", {}), "botcord").subpath).toBe("botcord_inbox/wake");
  });

  it("regression: name the sender by its signed id only, whatever unsigned name an envelope carried", () => {
    for (const extra of [{}, { from_name: "Alice" }]) {
      const body = decode(gatewayRequestFor(envelopeFrame(envelope("message", { text: "Hi" }, extra))).body);
      expect(body.message).toBe("ag_x says: Hi");
      expect(body.name).toBe("ag_x");
    }
  });
});

describe("contact envelopes go to /wake, in the hub's default session", () => {
  it.each([
    ["contact_request", { message: "let's talk" }, 'ag_x sent you a contact request. Message: "let\'s talk"'],
    ["contact_request", {}, "ag_x sent you a contact request."],
    ["contact_request_response", { state: "accepted", request_id: 1 }, "ag_x accepted your contact request. You are now contacts. (request_id: 1)"],
    ["contact_request_response", { state: "rejected" }, "ag_x rejected your contact request."],
    ["contact_removed", {}, "ag_x removed you from their contacts."],
  ] as const)("%s %j", (type, payload, text) => {
    const request = envelopeRequest(envelope(type, payload));
    expect(request.subpath).toBe(WAKE_SUBPATH);
    expect(decode(request.body)).toEqual({ text, body: text, mode: "now", sessionKey: DEFAULT_KEY });
  });

  it("regression: a contact request's words are kept (the hub writes them in payload.message, not text)", () => {
    expect(decode(envelopeRequest(envelope("contact_request", { message: "hi, Alice here" })).body).text).toContain("hi, Alice here");
  });
});

describe("receipts go to /agent in the DM room's session, with the hub's text", () => {
  it.each([
    ["result", { text: "done" }, 'Result from ag_x: {"text": "done"}'],
    ["error", { error: { code: "BLOCKED", message: "not in contacts" } }, "Error from ag_x: BLOCKED: not in contacts"],
    ["ack", {}, "ag_x acknowledged your message m-1."],
  ] as const)("%s", (type, payload, text) => {
    const request = envelopeRequest(envelope(type, payload));
    expect(request.subpath).toBe(AGENT_SUBPATH);
    expect(decode(request.body)).toEqual({ message: text, name: "ag_x", channel: "last", sessionKey: DM_KEY });
  });

  it("the hub's own system message is in its default session", () => {
    const sys = { ...envelope("system", { text: "Maintenance at 02:00" }), from: "hub" };
    expect(decode(envelopeRequest(sys).body)).toEqual({ message: '[system] from hub: {"text": "Maintenance at 02:00"}', name: "hub", channel: "last", sessionKey: DEFAULT_KEY });
  });
});
