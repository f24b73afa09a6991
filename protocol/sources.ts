// Webhook sources on the wire, shared by the relay (worker/sources/) and the CLI (local-agent/relay/sources.ts):
// the kinds, a source as its owner is shown it, and the headers a source's event carries to the gateway.
// The relay keeps the provider's event type and delivery id with the stored body, and the local agent
// posts them with it (local-agent/delivery/gateway-forwarder.ts), so an OpenClaw mapping can read
// {{headers.x-github-event}}. Both sides let through only these shapes, so a stored header can never
// stand in for one the gateway reads itself (authorization, content-type, idempotency-key, x-openclaw-token).

import { isSmallOrderPoint } from "./ed25519.ts";

export const SOURCE_KINDS = ["github", "stripe", "slack", "standard-webhooks", "token", "discord"] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/**
 * A Discord source's "secret" is the application's public key (Developer Portal → the application →
 * General Information → Public Key): 32 bytes as 64 hex digits. Checked by the relay and, before it
 * asks the relay, by the CLI; null when `value` is one, else what is wrong with it.
 */
export function discordKeyProblem(value: string): string | null {
  if (/^[0-9a-fA-F]{64}$/.test(value)) {
    const bytes = Uint8Array.from(value.match(/../g)!, (pair) => parseInt(pair, 16));
    // Under the one signature rule (ed25519.ts) nothing would ever verify under such a key.
    return isSmallOrderPoint(bytes) ? "the Public Key given is not a usable Ed25519 public key (not a curve point, or one of small order): copy it again from the Developer Portal → your application → General Information" : null;
  }
  return `a Discord source's secret is the application's Public Key, 64 hex digits (Developer Portal → your application → General Information → Public Key); got ${value.length} characters${/^[0-9a-fA-F]*$/.test(value) ? "" : " that are not all hex digits"}`;
}

/** A source as GET /inbox/{id}/sources lists it: never a secret, nor a token source's hash. */
export interface SourceView {
  name: string;
  kind: SourceKind;
  subpath: string;
  /** Where the provider posts; a token source's ends in "/{secret}". */
  url: string;
  /** Whether its HMAC secret is sealed at rest (null for a token source, kept as a hash). */
  secret_sealed: boolean | null;
  previous_secret_until: number | null;
  created_at: number;
  updated_at: number;
  /** The last request refused since the inbox last woke (kept in memory only: refusals write nothing). */
  last_refusal: { at: number; code: string; message: string } | null;
  /** Where its events go: null = the gateway's hooks (at `subpath`); else a local app's URL (forward.ts). */
  forward: string | null;
  /** The owner allowed `forward` outside loopback and private networks. */
  allow_public_target: boolean;
  /** A post's time limit in seconds, as it applies (lanes.ts FORWARD_POLICY by default); absent from an older relay. */
  timeout_sec?: number;
  /** The head's retry budget, as it applies; absent from an older relay. */
  retries?: number;
  /** Whether its events are posted one at a time in order (true by default); absent from an older relay. */
  ordered?: boolean;
  /** Live sources (live.ts): the deadline in seconds a request waits for the app's answer; null: answered at once, delivered later. Absent from an older relay. */
  live_sec?: number | null;
}

/** Set on every source event, whatever the provider: one mapping template can serve them all. */
export const SOURCE_HEADERS = {
  source: "x-clawrelay-source",
  event: "x-clawrelay-event",
  delivery: "x-clawrelay-delivery",
} as const;

const FORWARDABLE_NAME = /^(?:x-[a-z0-9-]{1,62}|webhook-(?:id|timestamp))$/;
const NEVER_FORWARDED = new Set(["x-openclaw-token", "x-openclaw-idempotency-key", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-real-ip"]);
const MAX_VALUE_LENGTH = 512;
/** Printable ASCII only: Node refuses control characters in a header, and no provider sends others here. */
const PLAIN_VALUE = /^[\x20-\x7e]*$/;

/** The entries of `headers` that may be posted to the gateway (names lower-cased); the rest is left out. */
export function forwardableHeaders(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(headers)) {
    const name = rawName.toLowerCase();
    if (!FORWARDABLE_NAME.test(name) || NEVER_FORWARDED.has(name)) continue;
    if (typeof value !== "string" || value.length > MAX_VALUE_LENGTH || !PLAIN_VALUE.test(value)) continue;
    out[name] = value;
  }
  return out;
}
