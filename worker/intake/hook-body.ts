// What a webhook body may be: the hub's registration probe, a body carrying a signed a2a envelope
// (1.x hubs put the envelope itself, or its JSON text in `message`/`text`), or anything else.
// A body that carries an envelope is read again strictly (no duplicate keys), as a posted envelope is:
// the signature must be checked over the one reading every parser agrees on.
import { ENVELOPE_VERSIONS, assertStrictJson } from "../../protocol/index.ts";

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

/** Throws RelayError(400, invalid_json) when a body carrying an envelope has duplicate keys or is too deep. */
export function classifyHookBody(bytes: Uint8Array): HookBody {
  const text = new TextDecoder().decode(bytes);
  const value = parseJson(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "opaque" };
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && record.probe === true) return { kind: "probe" };
  if (looksLikeEnvelope(record)) {
    assertStrictJson(text);
    return { kind: "envelope", envelope: record };
  }
  for (const field of ["message", "text"] as const) {
    const inner = record[field];
    const candidate = typeof inner === "string" ? parseJson(inner) : inner;
    if (looksLikeEnvelope(candidate)) {
      // The envelope's own text when it came as a string, else the body that holds it.
      assertStrictJson(typeof inner === "string" ? inner : text);
      return { kind: "envelope", envelope: candidate };
    }
  }
  return { kind: "opaque" };
}
