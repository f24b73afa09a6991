// Agentline identities: "ed25519:<base64 of 32 raw bytes>" keys and the ag_ ids derived from them.
// Rule (docs/protocol.md, "Agent ids"): ag_ + first 12 hex of sha256 over the 44-char base64 TEXT, not the raw bytes.
import { sha256Hex } from "./sha256.ts";
import { fromBase64, toBase64 } from "./encoding.ts";
import { isSmallOrderPoint } from "./ed25519.ts";

export const AGENT_ID_PATTERN = /^ag_[0-9a-f]{12}$/;
export const KEY_ID_PATTERN = /^k_[A-Za-z0-9_-]{1,64}$/;
const PUBKEY_PREFIX = "ed25519:";
/** Parsed key texts (null: refused), per isolate: every message's signature check parses its key. */
const parsedKeys = new Map<string, Uint8Array | null>();
const PARSED_KEY_CACHE_LIMIT = 4096;

export function isAgentId(value: unknown): value is string {
  return typeof value === "string" && AGENT_ID_PATTERN.test(value);
}

export function isKeyId(value: unknown): value is string {
  return typeof value === "string" && KEY_ID_PATTERN.test(value);
}

export function formatPublicKey(raw: Uint8Array): string {
  return PUBKEY_PREFIX + toBase64(raw);
}

/**
 * Parses "ed25519:<b64>" into the 32 raw bytes (a fresh copy), or null. Small-order points are refused:
 * a signature under such a key can verify for messages its holder never signed, so they can never be
 * an identity. Each text is parsed and checked once; later calls get a copy of the bytes.
 */
export function parsePublicKey(text: unknown): Uint8Array | null {
  if (typeof text !== "string" || !text.startsWith(PUBKEY_PREFIX)) return null;
  let raw = parsedKeys.get(text);
  if (raw === undefined) {
    const bytes = fromBase64(text.slice(PUBKEY_PREFIX.length));
    raw = bytes && bytes.length === 32 && !isSmallOrderPoint(bytes) ? bytes : null;
    if (parsedKeys.size >= PARSED_KEY_CACHE_LIMIT) parsedKeys.clear();
    parsedKeys.set(text, raw);
  }
  return raw && raw.slice();
}

/** ag_ id for a key given as text; the text must already be the canonical "ed25519:<b64>" form. */
export async function agentIdFor(publicKeyText: string): Promise<string> {
  const base64Text = publicKeyText.startsWith(PUBKEY_PREFIX)
    ? publicKeyText.slice(PUBKEY_PREFIX.length)
    : publicKeyText;
  return "ag_" + (await sha256Hex(base64Text)).slice(0, 12);
}

/** A key id for keys that never met a hub: k_ + 12 hex of sha256 over the key text. */
export async function defaultKeyIdFor(publicKeyText: string): Promise<string> {
  return "k_" + (await sha256Hex(publicKeyText)).slice(0, 12);
}
