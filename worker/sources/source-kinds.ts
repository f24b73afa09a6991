// What the webhook-source verifiers share: a request as they see it, and what they return.
// Imported by every verifier (github.ts, stripe.ts, slack.ts, standard-webhooks.ts, token.ts, discord.ts) and by
// source-verify.ts, which picks one; covered by test/worker/sources-*.test.ts.
import { RelayError, assertStrictJson, decodeUtf8Text } from "../../protocol/index.ts";
import type { HmacKey } from "./hmac.ts";

/** Stripe, Slack and Standard Webhooks all document five minutes. */
export const TIMESTAMP_TOLERANCE_SEC = 300;

export interface SourceRequest {
  headers: Headers;
  /** The raw body, exactly as received: every scheme signs these bytes. */
  body: Uint8Array;
  nowSec: number;
  /** The path segment after the source's name (token sources carry their secret there). */
  pathSecret: string | null;
}

/** The current secret first, then the previous one while a rotation's grace lasts. */
export type SourceKeys = { kind: "hmac"; keys: HmacKey[] } | { kind: "hash"; hashes: string[] } | { kind: "ed25519"; publicKeys: Uint8Array[] };

export interface VerifiedEvent {
  /** The provider's id for this delivery (dedup key); null when the request carries none. */
  deliveryId: string | null;
  /**
   * Dedup by the body's SHA-256 instead: the delivery id is an unsigned header and nothing dates the
   * body, so the body is all that tells a replay (GitHub; source-intake.ts).
   */
  dedupByBody?: boolean;
  eventType: string | null;
  /** The provider's headers of interest, stored with the body and posted to the gateway. */
  headers: Record<string, string>;
}

/** An event to store, or an answer to give without storing anything (GitHub's ping, Slack's challenge, Discord's PING). */
export type Verdict = { event: VerifiedEvent } | { reply: Record<string, unknown> };

/** A refusal in the provider's expected status, its code naming the check that failed. */
export function refusal(status: number, code: string, message: string): RelayError {
  return new RelayError(status, code, message);
}

/** Refuses a timestamp that is not unix seconds within the tolerance of the relay's clock. */
export function checkTimestamp(text: string, nowSec: number, status: number, header: string): number {
  const ts = /^\d{1,12}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(ts)) throw refusal(status, "invalid_signature_header", `${header} must be unix seconds`);
  if (Math.abs(nowSec - ts) > TIMESTAMP_TOLERANCE_SEC) {
    throw refusal(status, "timestamp_out_of_range", `${header} ${ts} is more than ${TIMESTAMP_TOLERANCE_SEC}s from the relay's clock (${nowSec}): a replayed or delayed request; the sender retries with a fresh timestamp`);
  }
  return ts;
}

/**
 * The body as a JSON object, or null (a form body, or not JSON at all): only read after the signature
 * passed. JSON is read strictly (strict-json.ts): a body whose event id or type a first-wins parser
 * would read otherwise (a duplicate key), or that holds a lone surrogate, is refused with 400
 * invalid_json rather than filed under a reading nobody else shares. The stored body stays byte-exact.
 */
export function jsonObject(body: Uint8Array): Record<string, unknown> | null {
  const exact = decodeUtf8Text(body);
  const utf8 = exact !== null;
  const text = exact ?? new TextDecoder().decode(body);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!utf8) throw new RelayError(400, "invalid_json", "the body is JSON but not UTF-8 text; JSON must be sent as UTF-8");
  assertStrictJson(text);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

export function stringField(record: Record<string, unknown> | null | undefined, field: string): string | null {
  const value = record?.[field];
  return typeof value === "string" && value !== "" && value.length <= 256 ? value : null;
}

/** The named headers that are present (names lower-case). */
export function pickHeaders(headers: Headers, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}
