// Secrets the inbox must be able to use at rest: receipt keys (it signs acks as the agent) and the
// HMAC secrets of webhook sources (it computes the provider's signature), so neither can be hashed.
// When the operator sets the Worker secret RECEIPT_KEY_SECRET they are stored encrypted: AES-256-GCM
// under a key derived from the secret with HKDF-SHA-256, with what the value belongs to as associated
// data (the agent id for a receipt key, agent id + source name for a source secret), so a sealed
// value copied into another row does not open. What this protects: the SQLite files and any copy or
// export of them. What it does not: a Worker running with the secret, which can decrypt (as it must,
// to sign). Without the secret values stay as they are, as before.
// Used by inbox.ts (receipt key) and sources/source-book.ts; covered by test/worker/secret-box.test.ts.
import { RelayError, fromBase64, toBase64, utf8 } from "../../protocol/index.ts";

const PREFIX = "enc:v1:";
// The HKDF label predates source secrets; changing it would orphan every sealed receipt key.
const INFO = utf8("clawrelay receipt key v1");
const MIN_SECRET_LENGTH = 16;

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

async function keyFrom(secret: string): Promise<CryptoKey> {
  if (secret.length < MIN_SECRET_LENGTH) throw new Error(`RECEIPT_KEY_SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  const material = await crypto.subtle.importKey("raw", utf8(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: INFO },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** Seals `plain` for `owner` (what it belongs to): "enc:v1:<iv b64>:<ciphertext b64>". */
export async function sealSecret(plain: string, owner: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(owner) }, await keyFrom(secret), utf8(plain));
  return `${PREFIX}${toBase64(iv)}:${toBase64(new Uint8Array(sealed))}`;
}

/**
 * The plain value; throws RelayError 503 `code` (naming the setting) when it is sealed and the secret is
 * missing or wrong: the operator's configuration, not the sender's input. `what` names it in the message.
 */
export async function openSecret(stored: string, owner: string, secret: string | undefined, what = "receipt key", code = "receipt_key_unavailable"): Promise<string> {
  if (!isSealed(stored)) return stored;
  const unavailable = (message: string) => new RelayError(503, code, message);
  if (!secret) throw unavailable(`this inbox's ${what} is encrypted, and the Worker has no RECEIPT_KEY_SECRET: its operator must set the secret it was sealed with`);
  const [ivText, dataText] = stored.slice(PREFIX.length).split(":");
  const iv = fromBase64(ivText ?? "");
  const data = fromBase64(dataText ?? "");
  if (!iv || !data) throw unavailable(`this inbox's sealed ${what} is malformed`);
  try {
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: utf8(owner) }, await keyFrom(secret), data);
    return new TextDecoder().decode(plain);
  } catch {
    throw unavailable(`this inbox's ${what} does not open with the Worker's RECEIPT_KEY_SECRET (was the secret changed?)`);
  }
}
