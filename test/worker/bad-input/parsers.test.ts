// The relay's parsers, called directly on generated bad input: each either returns a value or throws
// the one error type, RelayError with a 4xx status — never a TypeError, RangeError or URIError, which
// the edge would answer with 500 (http-errors.ts). Pure functions, so many runs are cheap.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ENVELOPE_VERSION,
  RelayError,
  agentIdFor,
  draftEnvelope,
  formatPublicKey,
  fromBase64,
  generateSeed,
  parseClientFrame,
  parseEnvelope,
  parsePublicKey,
  publicKeyFromSeed,
  toBase64,
  utf8,
} from "../../../protocol/index.ts";
import { parseCard } from "../../../worker/directory/card.ts";
import { classifyHookBody } from "../../../worker/hub/webhook-era/hook-body.ts";
import { applyClaim } from "../../../worker/inbox-config.ts";
import type { InboxConfig } from "../../../worker/inbox-config.ts";
import { parseJsonBody } from "../../../worker/intake/request-body.ts";
import { SNAKE_CASE, anyBody, anyJsonText, anyJsonValue, badBase64, malformedJsonText, objectText, settings, withFieldText, wrongTyped } from "./arbitraries.ts";

// Fixed so every run is the same; replay a failure with `{ ...settings(SEED, RUNS), path: "<reported path>" }`.
const SEED = 0x5eed_0001;
const RUNS = 1000;

/** A RelayError with a 4xx and a snake_case code is a refusal; anything else thrown fails the run. */
function expectRefusal(err: unknown): true {
  if (!(err instanceof RelayError)) throw new Error(`threw ${(err as Error)?.name ?? typeof err} instead of a RelayError: ${String((err as Error)?.message ?? err).slice(0, 200)}`);
  expect(err.status).toBeGreaterThanOrEqual(400);
  expect(err.status).toBeLessThan(500);
  expect(err.code).toMatch(SNAKE_CASE);
  return true;
}

/** Runs `parse`: it returns a value or refuses. */
function returnsOrRefuses(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch (err) {
    return expectRefusal(err);
  }
}

/** The same for a parser that answers with a promise (applyClaim derives the receipt key with WebCrypto). */
async function resolvesOrRefuses(parse: () => Promise<unknown>): Promise<boolean> {
  try {
    await parse();
    return true;
  } catch (err) {
    return expectRefusal(err);
  }
}

const seed = generateSeed();
const key = formatPublicKey(publicKeyFromSeed(seed));
const agentId = await agentIdFor(key);
/** A valid envelope's fields (hashing is async: built once, at load). */
const drafted = await draftEnvelope({ from: agentId, to: agentId, type: "message", payload: { text: "hi" } });
const draftedEmpty = await draftEnvelope({ from: agentId, to: agentId, type: "message", payload: {} });

/** A valid envelope's fields with some of them replaced by generated values of any type. */
const envelopeLike = fc
  .record({
    field: fc.constantFrom("v", "msg_id", "ts", "from", "to", "type", "reply_to", "ttl_sec", "payload", "payload_hash", "sig", "__proto__", "thread_id"),
    value: anyJsonValue,
    sigValue: fc.record({ alg: fc.oneof(fc.constant("ed25519"), anyJsonValue), key_id: anyJsonValue, value: fc.oneof(badBase64, anyJsonValue) }, { requiredKeys: [] }),
  })
  .map(({ field, value, sigValue }) => {
    const base: Record<string, unknown> = { ...drafted, sig: sigValue };
    // An own "__proto__" key, as JSON.parse makes one (plain assignment would set the prototype).
    Object.defineProperty(base, field, { value, enumerable: true, writable: true, configurable: true });
    return base;
  });

/** The same as text: a valid envelope's JSON with one field's text replaced by any JSON text. */
const envelopeText = fc
  .record({ field: fc.constantFrom("v", "msg_id", "ts", "from", "to", "type", "reply_to", "ttl_sec", "payload", "payload_hash", "sig", "thread_id"), value: anyJsonText })
  .map(({ field, value }) => withFieldText({ ...drafted, sig: { alg: "ed25519", key_id: "k_x", value: "" } }, field, value));

describe("parsers on generated bad input return or throw a 4xx RelayError", () => {
  it("parseEnvelope: any JSON value, and envelopes with one field of any type", () => {
    fc.assert(fc.property(fc.oneof(anyJsonValue, envelopeLike), (value) => returnsOrRefuses(() => parseEnvelope(value))), settings(SEED, RUNS));
  });

  it("parseEnvelope: a refused envelope names a field it checks", () => {
    const fields = ["v", "msg_id", "ts", "from", "to", "type", "reply_to", "ttl_sec", "payload", "payload_hash", "sig"];
    fc.assert(
      fc.property(envelopeLike, (value) => {
        try {
          parseEnvelope(value);
        } catch (err) {
          expect((err as RelayError).code).toBe("invalid_envelope");
          expect(fields.some((f) => (err as RelayError).message.includes(`"${f}"`))).toBe(true);
        }
      }),
      settings(SEED, RUNS),
    );
  });

  it("parseClientFrame: any text, JSON of any value, and frames with fields of any type", () => {
    const frameLike = fc
      .record({ type: fc.constantFrom("auth", "ack", "reject", "ping"), fields: fc.uniqueArray(fc.tuple(fc.constantFrom("type", "id", "key", "signature", "after", "window", "reason", "status", "attempts"), anyJsonText), { selector: ([k]) => k, maxLength: 5 }) })
      .map(({ type, fields }) => objectText([["type", JSON.stringify(type)], ...fields]));
    const frameText = fc.oneof(malformedJsonText, fc.string({ unit: "binary" }), anyJsonText, frameLike);
    fc.assert(fc.property(frameText, (input) => returnsOrRefuses(() => parseClientFrame(input))), settings(SEED, RUNS));
  });

  it("classifyHookBody: any bytes, and hook bodies carrying any value in message/text", () => {
    // The envelope travels as an object or as its JSON text in a string; either may be deep.
    const inner = fc.oneof(anyJsonText, envelopeText, malformedJsonText.map((t) => JSON.stringify(t)));
    const carried = fc
      .record({ field: fc.constantFrom("message", "text"), inner, asString: fc.boolean() })
      .map(({ field, inner, asString }) => objectText([[field, asString ? JSON.stringify(inner) : inner]]));
    const body = fc.oneof(anyBody.map((b) => (typeof b === "string" ? utf8(b) : b)), carried.map(utf8));
    fc.assert(fc.property(body, (bytes) => returnsOrRefuses(() => classifyHookBody(bytes))), settings(SEED, RUNS));
  });

  it("parseJsonBody: any bytes", () => {
    const bytes = fc.oneof(anyBody.map((b) => (typeof b === "string" ? utf8(b) : b)), fc.uint8Array({ maxLength: 200 }));
    fc.assert(fc.property(bytes, (body) => returnsOrRefuses(() => parseJsonBody(body))), settings(SEED, RUNS));
  });

  it("applyClaim: any body, and claims with one field of a wrong type, on a new and an existing inbox", async () => {
    const valid = {
      keys: [{ key_id: "k_root", pubkey: key }],
      receipt_key: { key_id: "k_receipt", private_key: toBase64(generateSeed()) },
      hub_url: "https://hub.example",
      policy: { mode: "open", allow: [], block: [] },
      rate_per_minute: 20,
      limits: { max_body_bytes: 1000 },
    };
    const existing: InboxConfig = await applyClaim({ agentId, signerKey: key, body: valid, existing: null, webhookTokenHash: "00", nowMs: 1 });
    const fieldArb = fc.constantFrom("keys", "receipt_key", "hub_url", "policy", "rate_per_minute", "limits", "rotate_webhook_token", "keys.0", "keys.0.pubkey", "keys.0.state", "receipt_key.private_key", "policy.mode", "policy.allow", "policy.block", "limits.max_body_bytes", "limits.dead_ttl_sec");
    const claim = fc.record({ path: fieldArb, value: fc.oneof(anyJsonValue, badBase64) }).map(({ path, value }) => {
      const body = structuredClone(valid) as Record<string, unknown>;
      const parts = path.split(".");
      let node = body as Record<string, unknown>;
      for (const part of parts.slice(0, -1)) node = node[part] as Record<string, unknown>;
      node[parts[parts.length - 1]!] = value;
      return body;
    });
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyJsonValue, claim), fc.boolean(), (body, first) =>
        resolvesOrRefuses(() => applyClaim({ agentId, signerKey: key, body, existing: first ? null : existing, webhookTokenHash: first ? "00" : null, nowMs: 2 })),
      ),
      settings(SEED, RUNS),
    );
  });

  it("applyClaim refuses every wrong-typed rate_per_minute and limit with invalid_claim", async () => {
    const body = { keys: [{ key_id: "k_root", pubkey: key }], receipt_key: { key_id: "k_receipt", private_key: toBase64(generateSeed()) } };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("rate_per_minute", "max_body_bytes", "hook_ttl_sec"), wrongTyped("integer"), async (field, value) => {
        const claim = field === "rate_per_minute" ? { ...body, rate_per_minute: value } : { ...body, limits: { [field]: value } };
        await expect(applyClaim({ agentId, signerKey: key, body: claim, existing: null, webhookTokenHash: "00", nowMs: 1 })).rejects.toThrow(RelayError);
      }),
      settings(SEED, RUNS),
    );
  });

  it("parseCard: any value and any name, and cards with one field of any type", () => {
    const card = fc
      .record({ field: fc.constantFrom("name", "agent_id", "description", "skills", "skills.0", "skills.0.id", "skills.0.name", "skills.0.tags", "skills.0.examples", "skills.0.description"), value: anyJsonValue })
      .map(({ field, value }) => {
        const body: Record<string, unknown> = { agent_id: agentId, description: "d", skills: [{ id: "s", name: "S", description: "", tags: ["t"], examples: ["e"] }] };
        const parts = field.split(".");
        let node = body as Record<string, unknown>;
        for (const part of parts.slice(0, -1)) node = node[part] as Record<string, unknown>;
        node[parts[parts.length - 1]!] = value;
        return body;
      });
    const name = fc.oneof(fc.constantFrom("weather-bot", "", "a", "A", "-x", "x".repeat(64)), fc.string({ unit: "binary", maxLength: 70 }));
    fc.assert(fc.property(fc.oneof(anyJsonValue, card), name, (value, n) => returnsOrRefuses(() => parseCard(value, n))), settings(SEED, RUNS));
  });

  it("fromBase64 and parsePublicKey: any text and any value give bytes or null, and never throw", () => {
    fc.assert(
      fc.property(fc.oneof(badBase64, fc.string({ unit: "binary" }), anyJsonValue), (value) => {
        const decoded = typeof value === "string" ? fromBase64(value) : null;
        if (decoded) expect(toBase64(decoded)).toBe(value);
        const parsed = parsePublicKey(value);
        if (parsed) expect(parsed).toHaveLength(32);
        const prefixed = typeof value === "string" ? parsePublicKey(`ed25519:${value}`) : null;
        if (prefixed) expect(prefixed).toHaveLength(32);
      }),
      settings(SEED, RUNS),
    );
  });
});

describe("the generators reach the refusals they are for", () => {
  it("a valid envelope parses and a version-less one is refused, so the properties above can fail", () => {
    const draft = { ...draftedEmpty, sig: { alg: "ed25519", key_id: "k_x", value: "" } };
    expect(parseEnvelope(draft).v).toBe(ENVELOPE_VERSION);
    expect(() => parseEnvelope({ ...draft, v: 1 })).toThrow(RelayError);
  });
});
