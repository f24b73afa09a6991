// What a webhook body may be: the hub's registration probe, a body carrying a signed a2a envelope
// (1.x hubs put the envelope itself, or its JSON text in `message`/`text`), or anything else.
import { ENVELOPE_VERSION } from "../protocol/index.ts";

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function looksLikeEnvelope(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && (value as Record<string, unknown>).v === ENVELOPE_VERSION;
}

export type HookBody = { kind: "probe" } | { kind: "envelope"; envelope: unknown } | { kind: "opaque" };

export function classifyHookBody(bytes: Uint8Array): HookBody {
  const value = parseJson(new TextDecoder().decode(bytes));
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "opaque" };
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && record.probe === true) return { kind: "probe" };
  if (looksLikeEnvelope(record)) return { kind: "envelope", envelope: record };
  for (const field of ["message", "text"] as const) {
    const inner = record[field];
    const candidate = typeof inner === "string" ? parseJson(inner) : inner;
    if (looksLikeEnvelope(candidate)) return { kind: "envelope", envelope: candidate };
  }
  return { kind: "opaque" };
}

/** Sub-paths are what the local agent appends to the gateway's hooks.path: keep them plain. */
export function isValidSubpath(subpath: string): boolean {
  return subpath.length > 0 && subpath.length <= 256 && /^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/.test(subpath);
}
