// The claim body's vocabulary, checked before anything in it is applied: a field the relay does not
// know, or one of the wrong type, is refused by name rather than silently ignored (a mistyped
// "rotate_webhook_token": "yes" used to do nothing). Used by inbox-config.ts (applyClaim).
import { RelayError } from "../../protocol/index.ts";

const bad = (message: string) => new RelayError(400, "invalid_claim", message);

const FIELDS: Record<string, readonly string[] | null> = {
  keys: null,
  receipt_key: null,
  hub_url: null,
  policy: ["mode", "allow", "block"],
  rate_per_minute: null,
  limits: ["max_body_bytes", "max_queue_messages", "max_queue_bytes", "hook_ttl_sec", "dead_ttl_sec", "retention_sec"],
  rotate_webhook_token: null,
  hub: ["mode", "prefix", "pull_interval_sec"],
};

const KEY_FIELDS = ["key_id", "pubkey", "state"];
const RECEIPT_KEY_FIELDS = ["key_id", "private_key"];

export const HUB_URL_MAX_LENGTH = 2048;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function unknownFields(value: Record<string, unknown>, known: readonly string[], where: string): void {
  const extra = Object.keys(value).filter((k) => !known.includes(k));
  if (extra.length > 0) {
    const names = extra.slice(0, 5).map((k) => `"${k.slice(0, 40)}"`).join(", ");
    throw bad(`${where} has unknown field${extra.length > 1 ? "s" : ""} ${names}; known: ${known.join(", ")}`);
  }
}

/** Refuses unknown fields at every level of a claim body and a non-boolean rotate_webhook_token. */
export function checkClaimFields(body: Record<string, unknown>): void {
  unknownFields(body, Object.keys(FIELDS), "the claim body");
  for (const [field, nested] of Object.entries(FIELDS)) {
    const value = body[field];
    if (nested && isRecord(value)) unknownFields(value, nested, field);
  }
  if (Array.isArray(body.keys)) body.keys.forEach((k, i) => isRecord(k) && unknownFields(k, KEY_FIELDS, `keys[${i}]`));
  if (isRecord(body.receipt_key)) unknownFields(body.receipt_key, RECEIPT_KEY_FIELDS, "receipt_key");
  if (body.rotate_webhook_token !== undefined && typeof body.rotate_webhook_token !== "boolean") {
    throw bad("rotate_webhook_token must be true or false");
  }
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The hub the inbox asks for keys and sends receipts to: https (http only on loopback, for a local
 * hub), no user name or password in it, no query or fragment, at most HUB_URL_MAX_LENGTH characters.
 */
export function parseHubUrl(value: unknown): string {
  if (typeof value !== "string") throw bad("hub_url must be a string URL");
  if (value.length > HUB_URL_MAX_LENGTH) throw bad(`hub_url must be at most ${HUB_URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad("hub_url must be an absolute https URL, e.g. https://agentgram.chat");
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname))) {
    throw bad("hub_url must be an https URL (http is allowed only for a hub on loopback: localhost, 127.x, [::1])");
  }
  if (url.username || url.password) throw bad("hub_url must not carry a user name or password");
  if (url.search || url.hash) throw bad("hub_url must not have a query or a fragment");
  return url.origin + url.pathname.replace(/\/+$/, "");
}
