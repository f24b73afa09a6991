// A source's secret by kind: which the relay may make, what a given one must look like, and the HMAC
// key bytes each scheme uses (a Discord source's is its application's public key, not a secret: kept as the
// others are, sealed or not, since one path for every kind is simpler than a second for a public value). Pure; used by source-book.ts and token.ts, covered by
// test/worker/sources-config.test.ts.
import { RelayError, discordKeyProblem, randomBytes, sha256Hex, toBase64, toBase64Url, utf8 } from "../../protocol/index.ts";
import type { SourceKind } from "../../protocol/index.ts";
import { standardWebhooksKey } from "./standard-webhooks.ts";

const invalid = (message: string) => new RelayError(400, "invalid_source", message);
/** Spaces are allowed: GitHub's own guide uses a secret with spaces. */
const PRINTABLE = /^[\x20-\x7e]+$/;

/** Token secrets are stored as this hash only: the relay compares them, it never needs them again. */
export function hashTokenSecret(secret: string): Promise<string> {
  return sha256Hex(secret);
}

/** A fresh secret for the kinds whose secret the user chooses; null where the provider issues it. */
export function mintSecret(kind: SourceKind): string | null {
  if (kind === "standard-webhooks") return `whsec_${toBase64(randomBytes(32))}`;
  if (kind === "github" || kind === "token") return toBase64Url(randomBytes(32));
  return null;
}

/** Refuses a given secret that cannot be the kind's; names where the right one is found. */
export function checkSecret(kind: SourceKind, secret: string): void {
  if (secret.length > 256 || !PRINTABLE.test(secret)) throw invalid("secret must be 1 to 256 printable ASCII characters");
  if (kind === "token") throw invalid("a token source's secret is made by the relay (a long random one): leave --secret out");
  if (kind === "stripe" && !/^whsec_.{8,}$/.test(secret)) throw invalid("a Stripe secret is the endpoint's signing secret, whsec_… (Dashboard → Developers → Webhooks → the endpoint → Signing secret)");
  if (kind === "discord" && discordKeyProblem(secret) !== null) throw invalid(discordKeyProblem(secret)!);
  if (kind === "standard-webhooks" && !standardWebhooksKey(secret)) throw invalid('a Standard Webhooks secret is "whsec_" followed by base64 of 24 to 64 bytes (the endpoint\'s signing secret)');
  if ((kind === "github" || kind === "slack") && secret.length < 16) {
    throw invalid(`the secret is ${secret.length} characters; use at least 16 (${kind === "github" ? "or leave --secret out and the relay makes one" : "Slack's Signing Secret is 32"})`);
  }
}

/** The HMAC key a scheme uses for `secret` (checked by checkSecret when it was stored). */
export function hmacKeyBytes(kind: SourceKind, secret: string): Uint8Array {
  return kind === "standard-webhooks" ? (standardWebhooksKey(secret) ?? new Uint8Array(0)) : utf8(secret);
}
