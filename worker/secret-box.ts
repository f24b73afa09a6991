// Receipt keys at rest. A receipt key must be usable by the inbox (it signs acks as the agent), so it
// cannot be hashed; when the operator sets the Worker secret RECEIPT_KEY_SECRET it is stored
// encrypted: AES-256-GCM under a key derived from the secret with HKDF-SHA-256, the agent id as
// associated data (a sealed seed copied into another inbox's row does not open). What this protects:
// the SQLite files and any copy or export of them. What it does not: a Worker running with the secret,
// which can decrypt (as it must, to sign). Without the secret seeds stay in plain base64, as before.
// Used by inbox.ts (on load and save); covered by test/worker/secret-box.test.ts.
import { RelayError, fromBase64, toBase64, utf8 } from "../protocol/index.ts";

const PREFIX = "enc:v1:";
const INFO = utf8("clawrelay receipt key v1");
const MIN_SECRET_LENGTH = 16;

const unavailable = (message: string) => new RelayError(503, "receipt_key_unavailable", message);

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

/** Seals a base64 seed for `agentId`: "enc:v1:<iv b64>:<ciphertext b64>". */
export async function sealSeed(seed: string, agentId: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(agentId) }, await keyFrom(secret), utf8(seed));
  return `${PREFIX}${toBase64(iv)}:${toBase64(new Uint8Array(sealed))}`;
}

/**
 * The base64 seed; throws RelayError 503 receipt_key_unavailable (naming the setting) when it is sealed
 * and the secret is missing or wrong: the operator's configuration, not the sender's input.
 */
export async function openSeed(stored: string, agentId: string, secret: string | undefined): Promise<string> {
  if (!isSealed(stored)) return stored;
  if (!secret) throw unavailable("this inbox's receipt key is encrypted, and the Worker has no RECEIPT_KEY_SECRET: its operator must set the secret it was sealed with");
  const [ivText, dataText] = stored.slice(PREFIX.length).split(":");
  const iv = fromBase64(ivText ?? "");
  const data = fromBase64(dataText ?? "");
  if (!iv || !data) throw unavailable("this inbox's sealed receipt key is malformed");
  try {
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: utf8(agentId) }, await keyFrom(secret), data);
    return new TextDecoder().decode(plain);
  } catch {
    throw unavailable("this inbox's receipt key does not open with the Worker's RECEIPT_KEY_SECRET (was the secret changed?)");
  }
}
