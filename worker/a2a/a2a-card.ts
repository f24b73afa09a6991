// The Agent Card as the relay serves it: the gateway's card with every endpoint URL in it pointed at the
// inbox's own A2A endpoint, <origin>/inbox/<id>/a2a/v1 — behind the relay the gateway knows only its loopback
// origin unless channels.a2a.advertisedUrl is set. The fields rewritten: `url`, `supportedInterfaces[].url`
// (the only one OpenClaw 2026.9.6 writes), `additionalInterfaces[].url`, and any other string URL whose path
// ends in /a2a/v1. Pure; used by a2a-routes.ts; covered by test/worker/a2a-card.test.ts.
import { A2A_ENDPOINT_PATH, decodeUtf8 } from "../../protocol/index.ts";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isEndpointUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.pathname.replace(/\/+$/, "").endsWith(A2A_ENDPOINT_PATH);
  } catch {
    // Not a URL at all: a description or a name, left as it is.
    return false;
  }
}

function rewriteValue(value: unknown, endpoint: string, depth: number): unknown {
  if (depth > 16) return value;
  if (typeof value === "string") return isEndpointUrl(value) ? endpoint : value;
  if (Array.isArray(value)) return value.map((item) => rewriteValue(item, endpoint, depth + 1));
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rewriteValue(item, endpoint, depth + 1)]));
}

function withUrl(item: unknown, endpoint: string): unknown {
  return isRecord(item) && typeof item.url === "string" ? { ...item, url: endpoint } : item;
}

/** `card` with its endpoint URLs set to `endpoint` (the inbox's /a2a/v1 URL). */
export function rewriteCard(card: Record<string, unknown>, endpoint: string): Record<string, unknown> {
  const out = rewriteValue(card, endpoint, 0) as Record<string, unknown>;
  if (typeof out.url === "string") out.url = endpoint;
  for (const field of ["supportedInterfaces", "additionalInterfaces"]) {
    const list = out[field];
    if (Array.isArray(list)) out[field] = list.map((item) => withUrl(item, endpoint));
  }
  return out;
}

/** The JSON object in an answer's body, or null when it is not one (a card that is not JSON is passed through, never stored). */
export function cardIn(body: Uint8Array): Record<string, unknown> | null {
  try {
    const text = decodeUtf8(body);
    const value: unknown = text === null ? null : JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    // Not UTF-8 JSON: the answer goes back as it came.
    return null;
  }
}
