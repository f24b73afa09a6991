// The verification pipeline every inbox applies to a signed envelope, in the order a hub checks them
// (docs/protocol.md, "The checks, in order"), each failure with its own stable code. Key look-up is
// injected so this stays free of IO.
import type { Envelope } from "./envelope.ts";
import { signatureBytes, signingInput } from "./envelope.ts";
import { verifyWebCrypto } from "./ed25519.ts";
import { RelayError } from "./errors.ts";
import { parsePublicKey } from "./identity.ts";
import { payloadHash } from "./payload-hash.ts";

export const TIMESTAMP_WINDOW_SEC = 300;

export type KeyState = "active" | "pending" | "revoked";

export interface KeyRecord {
  key_id: string;
  agent_id: string;
  pubkey: string;
  state: KeyState;
}

export interface EnvelopeChecks {
  /** The inbox's own agent id: the envelope must be addressed to it. */
  inbox: string;
  nowSec: number;
  /** Finds a key by (claimed owner, key id); null when nobody knows it. */
  resolveKey: (agentId: string, keyId: string) => Promise<KeyRecord | null>;
  verify?: (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => Promise<boolean>;
  /**
   * The payload's hash ("sha256:<hex>") when the caller already has it: a payload posted in its JCS form
   * is hashed from its bytes (posted-payload.ts). Worked out here otherwise.
   */
  payloadHash?: string | null;
  /** The envelope's signing input when the caller already built it (it is built here otherwise). */
  input?: Uint8Array;
  /**
   * A room the hub says it delivered this envelope to the inbox in (a room message is addressed to
   * the room, `rm_…`, and fanned out to each member): `to` may name it instead of the inbox.
   */
  room?: string | null;
}

const fail = (code: string, message: string) => new RelayError(400, code, message);

export async function verifyEnvelope(envelope: Envelope, checks: EnvelopeChecks): Promise<KeyRecord> {
  if (envelope.to !== checks.inbox && !(checks.room && envelope.to === checks.room)) {
    throw fail("wrong_recipient", `envelope is addressed to ${envelope.to}, but this is the inbox of ${checks.inbox}`);
  }
  if (Math.abs(checks.nowSec - envelope.ts) > TIMESTAMP_WINDOW_SEC) {
    throw fail(
      "timestamp_out_of_range",
      `envelope ts ${envelope.ts} is more than ${TIMESTAMP_WINDOW_SEC}s from the relay's clock (${checks.nowSec}); sign it again with the current time`,
    );
  }
  if ((checks.payloadHash ?? (await payloadHash(envelope.payload))) !== envelope.payload_hash) {
    throw fail("payload_hash_mismatch", "payload_hash is not sha256 of the JCS (RFC 8785) form of payload");
  }
  const key = await checks.resolveKey(envelope.from, envelope.sig.key_id);
  if (!key) throw fail("unknown_signing_key", `signing key ${envelope.sig.key_id} is not known for ${envelope.from}`);
  if (key.state !== "active") {
    throw fail("signing_key_not_active", `signing key ${envelope.sig.key_id} is ${key.state}, not active`);
  }
  if (key.agent_id !== envelope.from) {
    throw fail("key_not_owned_by_sender", `signing key ${envelope.sig.key_id} does not belong to ${envelope.from}`);
  }
  const publicKey = parsePublicKey(key.pubkey);
  const signature = signatureBytes(envelope);
  const verify = checks.verify ?? verifyWebCrypto;
  if (!publicKey || !signature || !(await verify(publicKey, checks.input ?? signingInput(envelope), signature))) {
    throw fail("invalid_signature", "the Ed25519 signature does not verify over the signing input (nine fields; eleven in a2a/0.2)");
  }
  return key;
}
