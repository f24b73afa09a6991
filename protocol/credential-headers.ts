// Which of a sender's headers are credentials (a bearer token, a session cookie, an API key), and the
// one way both sides show them: redacted. The relay seals these at rest and sends them only for a
// source with a forward target (the app may need them); the CLI and the inspector never print them.
// Provider signatures (stripe-signature, x-hub-signature-256, …) are not credentials: they are a MAC of
// one body, useless for another, and the app may need to check them. Imported by worker/sources/ and
// local-agent/ (cli, inspector); covered by test/protocol/credential-headers.test.ts.

/** Shown in place of a credential's value. */
export const REDACTED_VALUE = "[redacted]";

/** Header names that carry a credential whatever their value (lower case). */
const CREDENTIAL_NAMES: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "api-key",
  "apikey",
  "x-auth-token",
  "x-access-token",
  "x-csrf-token",
  "x-xsrf-token",
]);

/**
 * Names that say they hold a key, token, secret or password as one of their dash- or underscore-separated
 * words (x-gitlab-token, x-myapp-api-key, x-webhook-secret, x_session_id …); a bare "key" is not one (x-idempotency-key is not a secret). Signature headers
 * do not match: "signature" is not one of these words.
 */
const CREDENTIAL_WORDS = /(^|[-_])(api[-_]?key|token|secret|password|passwd|session|auth)([-_]|$)/;

/** True for a header whose value is a credential (name compared case-insensitively). */
export function isCredentialHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return CREDENTIAL_NAMES.has(lower) || CREDENTIAL_WORDS.test(lower);
}

/** The pairs with each credential's value replaced by REDACTED_VALUE (names and order kept). */
export function redactHeaderPairs(pairs: readonly (readonly [string, string])[]): [string, string][] {
  return pairs.map(([name, value]) => [name, isCredentialHeader(name) ? REDACTED_VALUE : value]);
}

/** The same for a header record (the hook headers an event carries). */
export function redactHeaderRecord(record: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([name, value]) => [name, isCredentialHeader(name) ? REDACTED_VALUE : value]));
}
