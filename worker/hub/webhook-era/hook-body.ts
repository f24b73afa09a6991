// Webhook era: what a webhook body may be — a hub's registration probe, a body carrying a signed a2a
// envelope (1.x hubs put the envelope itself, or its JSON text in `message`/`text`), or anything else.
// A body that carries an envelope is read again strictly (UTF-8, no duplicate keys, no lone surrogates,
// bounded depth: strict-json.ts), the body and the envelope text inside it, as a posted envelope is: the
// signature must be checked over the one reading every parser agrees on. Anything else is stored
// byte-exact and never JSON-checked: a webhook body is the sender's business, not a protocol message.
// Used by hub-webhook.ts; covered by test/worker/hooks.test.ts and test/worker/bad-input/surrogates.test.ts.
import { ENVELOPE_VERSIONS, RelayError, assertStrictJson, decodeUtf8Text } from "../../../protocol/index.ts";

/**
 * A JSON string can spell an envelope version ("a2a/0.…") or the probe's key only if the text holds
 * it literally or uses a \u or \/ escape (no other escape makes those characters): a body with none of
 * them is opaque without being parsed, which is most of what a large webhook body costs.
 */
const MIGHT_BE_PROBE_OR_ENVELOPE = /a2a\/0\.|probe|\\u|\\\//;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function looksLikeEnvelope(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && (ENVELOPE_VERSIONS as readonly unknown[]).includes((value as Record<string, unknown>).v);
}

export type HookBody = { kind: "probe" } | { kind: "envelope"; envelope: unknown } | { kind: "opaque" };

/** Throws RelayError(400, invalid_json) when a body carrying an envelope is not strict JSON (strict-json.ts). */
export function classifyHookBody(bytes: Uint8Array): HookBody {
  const exact = decodeUtf8Text(bytes);
  const utf8 = exact !== null;
  // Read leniently only to tell whether it claims to carry an envelope, which must be UTF-8.
  const text = exact ?? new TextDecoder().decode(bytes);
  const strict = (envelopeText: string) => {
    if (!utf8) throw new RelayError(400, "invalid_json", "the body carries an a2a envelope but is not UTF-8 text; send it as UTF-8");
    assertStrictJson(text);
    if (envelopeText !== text) assertStrictJson(envelopeText);
  };
  if (!MIGHT_BE_PROBE_OR_ENVELOPE.test(text)) return { kind: "opaque" };
  const value = parseJson(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "opaque" };
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && record.probe === true) return { kind: "probe" };
  if (looksLikeEnvelope(record)) {
    strict(text);
    return { kind: "envelope", envelope: record };
  }
  for (const field of ["message", "text"] as const) {
    const inner = record[field];
    const candidate = typeof inner === "string" ? parseJson(inner) : inner;
    if (looksLikeEnvelope(candidate)) {
      // The body that holds it, and the envelope's own text when it came as a string.
      strict(typeof inner === "string" ? inner : text);
      return { kind: "envelope", envelope: candidate };
    }
  }
  return { kind: "opaque" };
}
