// What the webhook-source verifiers share: a request as they see it, and what they return.
// Imported by every verifier (github.ts, stripe.ts, slack.ts, standard-webhooks.ts, token.ts) and by
// source-verify.ts, which picks one; covered by test/worker/sources-*.test.ts.
import { RelayError } from "../../protocol/index.ts";
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
export type SourceKeys = { kind: "hmac"; keys: HmacKey[] } | { kind: "hash"; hashes: string[] };

export interface VerifiedEvent {
  /** The provider's id for this delivery (dedup key); null when the request carries none. */
  deliveryId: string | null;
  eventType: string | null;
  /** The provider's headers of interest, stored with the body and posted to the gateway. */
  headers: Record<string, string>;
}

/** An event to store, or an answer to give without storing anything (GitHub's ping, Slack's challenge). */
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

/** The body as a JSON object, or null (a form body, or not JSON at all): only read after the signature passed. */
export function jsonObject(body: Uint8Array): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(body));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
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
