// parseEnvelope is the gate in front of verification: every malformed field must come back as
// RelayError(400, "invalid_envelope") naming that field, so a sender can fix it without guessing.
import { describe, expect, it } from "vitest";
import { RelayError, parseEnvelope, signingInput } from "../../protocol/index.ts";

function validEnvelope(): Record<string, unknown> {
  return {
    v: "a2a/0.1",
    msg_id: "00000000-0000-4000-8000-000000000001",
    ts: 1700000000,
    from: "ag_ff73a0647bbc",
    to: "ag_000000000000",
    type: "message",
    reply_to: null,
    ttl_sec: 3600,
    payload: { text: "hello" },
    payload_hash: "sha256:cbbbdcd27692344de5dbab3abcaba413fb0f45307267de7081401576df1cb176",
    sig: { alg: "ed25519", key_id: "k_test", value: "AAAA" },
  };
}

function rejection(value: unknown): RelayError {
  try {
    parseEnvelope(value);
  } catch (error) {
    if (error instanceof RelayError) return error;
    throw error;
  }
  throw new Error(`parseEnvelope accepted ${JSON.stringify(value)}`);
}

const MISSING = Symbol("missing");
const cases: Array<[field: string, value: unknown]> = [
  ["v", MISSING], ["v", "a2a/0.3"], ["v", 0.1],
  ["msg_id", MISSING], ["msg_id", ""], ["msg_id", "x".repeat(129)], ["msg_id", 42],
  ["ts", MISSING], ["ts", "1700000000"], ["ts", 1700000000.5], ["ts", 2 ** 53], ["ts", null],
  ["from", MISSING], ["from", ""], ["from", 7],
  ["to", MISSING], ["to", ""], ["to", ["ag_000000000000"]],
  ["type", MISSING], ["type", "bogus"], ["type", "MESSAGE"],
  ["reply_to", 5], ["reply_to", ""], ["reply_to", "x".repeat(129)],
  ["ttl_sec", MISSING], ["ttl_sec", -1], ["ttl_sec", 1.5], ["ttl_sec", "3600"], ["ttl_sec", 30 * 24 * 3600 + 1],
  ["payload", MISSING], ["payload", null], ["payload", [1]], ["payload", "hello"],
  ["payload_hash", MISSING], ["payload_hash", "md5:abc"], ["payload_hash", 1],
  ["sig", MISSING], ["sig", null], ["sig", "AAAA"],
  ["sig", { alg: "rsa", key_id: "k_test", value: "AAAA" }],
  ["sig", { alg: "ed25519", value: "AAAA" }],
  ["sig", { alg: "ed25519", key_id: "k_test" }],
  ["sig", { alg: "ed25519", key_id: "k_test", value: 5 }],
];

describe("parseEnvelope", () => {
  it("accepts the valid envelope", () => {
    expect(parseEnvelope(validEnvelope())).toEqual(validEnvelope());
  });

  for (const [field, value] of cases) {
    const label = value === MISSING ? "missing" : JSON.stringify(value)?.slice(0, 40);
    it(`rejects ${field} = ${label}, naming the field`, () => {
      const envelope = validEnvelope();
      if (value === MISSING) delete envelope[field];
      else envelope[field] = value;
      const error = rejection(envelope);
      expect(error.status).toBe(400);
      expect(error.code).toBe("invalid_envelope");
      expect(error.message).toContain(`"${field}"`);
    });
  }

  for (const body of [null, "envelope", 42, [validEnvelope()]]) {
    it(`rejects a body that is not an object: ${JSON.stringify(body)?.slice(0, 20)}`, () => {
      expect(rejection(body).code).toBe("invalid_envelope");
    });
  }

  for (const type of ["ack", "result", "error"]) {
    it(`requires reply_to on a ${type} receipt`, () => {
      for (const replyTo of [null, undefined]) {
        const error = rejection({ ...validEnvelope(), type, reply_to: replyTo });
        expect(error.code).toBe("invalid_envelope");
        expect(error.message).toContain('"reply_to"');
      }
      expect(parseEnvelope({ ...validEnvelope(), type, reply_to: "m1" }).reply_to).toBe("m1");
    });
  }

  it("accepts every non-receipt type without reply_to", () => {
    for (const type of ["message", "contact_request", "contact_request_response", "contact_removed", "system"]) {
      expect(parseEnvelope({ ...validEnvelope(), type }).type).toBe(type);
    }
  });

  it("regression: drops every field a2a/0.1 does not sign (topic, goal, a display name, __proto__), in sig too", () => {
    const input = JSON.parse(
      JSON.stringify({ ...validEnvelope(), topic: "t1", goal: "g", display_name: "Alice", thread_id: "x" }).replace(/^\{/, '{"__proto__":{"polluted":true},'),
    ) as Record<string, unknown>;
    (input.sig as Record<string, unknown>).extra = "unsigned";
    const parsed = parseEnvelope(input);
    expect(Object.keys(parsed).sort()).toEqual(["from", "msg_id", "payload", "payload_hash", "reply_to", "sig", "to", "ts", "ttl_sec", "type", "v"]);
    expect(Object.keys(parsed.sig).sort()).toEqual(["alg", "key_id", "value"]);
    expect(JSON.stringify(parsed)).not.toContain("polluted");
  });

  it("regression: a missing reply_to is refused (null must be said), naming the field", () => {
    const envelope = validEnvelope();
    delete envelope.reply_to;
    expect(() => parseEnvelope(envelope)).toThrow(/reply_to/);
    expect(parseEnvelope({ ...validEnvelope(), reply_to: null }).reply_to).toBeNull();
  });

  it("refuses versions whose signing input it does not know (a2a/0.1 and a2a/0.2 only)", () => {
    expect(() => parseEnvelope({ ...validEnvelope(), v: "a2a/0.3" })).toThrow(/"v"/);
    expect(() => parseEnvelope({ ...validEnvelope(), v: "a2a/1.0" })).toThrow(/"v"/);
  });

  it("keeps topic and goal of an a2a/0.2 envelope (they are signed there) and drops them from a2a/0.1", () => {
    const extras = { topic: "deploy", goal: "ship it", mentions: ["ag_000000000001"] };
    const v2 = parseEnvelope({ ...validEnvelope(), v: "a2a/0.2", ...extras });
    expect([v2.v, v2.topic, v2.goal, "mentions" in v2]).toEqual(["a2a/0.2", "deploy", "ship it", false]);
    const absent = parseEnvelope({ ...validEnvelope(), v: "a2a/0.2" });
    expect([absent.topic, absent.goal]).toEqual([null, null]);
    const v1 = parseEnvelope({ ...validEnvelope(), ...extras });
    expect(["topic" in v1, "goal" in v1]).toEqual([false, false]);
    expect(() => parseEnvelope({ ...validEnvelope(), v: "a2a/0.2", topic: 5 })).toThrow(/"topic"/);
  });

  it("signs topic and goal after the nine fields in a2a/0.2, \"\" for null, as the hub's crypto.py does", () => {
    const base = parseEnvelope({ ...validEnvelope(), v: "a2a/0.2", topic: "t", goal: null });
    const text = new TextDecoder().decode(signingInput(base));
    expect(text.split("\n")).toEqual(["a2a/0.2", base.msg_id, "1700000000", base.from, base.to, "message", "", "3600", base.payload_hash, "t", ""]);
    const v1 = new TextDecoder().decode(signingInput(parseEnvelope(validEnvelope())));
    expect(v1.split("\n")).toHaveLength(9);
  });

  it("accepts the ttl_sec bounds 0 and 30 days", () => {
    expect(parseEnvelope({ ...validEnvelope(), ttl_sec: 0 }).ttl_sec).toBe(0);
    expect(parseEnvelope({ ...validEnvelope(), ttl_sec: 30 * 24 * 3600 }).ttl_sec).toBe(30 * 24 * 3600);
  });
});
