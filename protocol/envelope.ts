// The a2a envelope (docs/protocol.md, "Envelopes"): shape, the signing input, building and signing.
// a2a/0.1 signs nine fields; a2a/0.2 (the hub's later clients) appends topic and goal, "" when null.
import { fromBase64, toBase64, utf8 } from "./encoding.ts";
import { RelayError } from "./errors.ts";
import { payloadHash } from "./payload-hash.ts";

export const ENVELOPE_VERSION = "a2a/0.1";
/** Adds `topic` and `goal` to the signed fields (the public hub code's crypto.py, from 2026). */
export const ENVELOPE_VERSION_TOPICS = "a2a/0.2";
export const ENVELOPE_VERSIONS = [ENVELOPE_VERSION, ENVELOPE_VERSION_TOPICS] as const;
export type EnvelopeVersion = (typeof ENVELOPE_VERSIONS)[number];
export const ENVELOPE_TYPES = [
  "message",
  "ack",
  "result",
  "error",
  "contact_request",
  "contact_request_response",
  "contact_removed",
  "system",
] as const;
export type EnvelopeType = (typeof ENVELOPE_TYPES)[number];
export const RECEIPT_TYPES: ReadonlySet<EnvelopeType> = new Set(["ack", "result", "error"]);
/** Hub-made envelopes carry this sender and an empty signature (docs/protocol.md, "Hub-made envelopes"). */
export const HUB_SENDER = "hub";

export interface EnvelopeSignature {
  alg: "ed25519";
  key_id: string;
  value: string;
}

/** The envelope before signing. Declared in full: Omit<> over a type with an index signature would
 *  erase the named fields. */
export interface UnsignedEnvelope {
  v: EnvelopeVersion;
  msg_id: string;
  ts: number;
  from: string;
  to: string;
  type: EnvelopeType;
  reply_to: string | null;
  ttl_sec: number;
  payload: Record<string, unknown>;
  payload_hash: string;
  /** Signed in a2a/0.2 only; parseEnvelope keeps them there and drops them from a2a/0.1. */
  topic?: string | null;
  goal?: string | null;
  /**
   * Other fields may be present on envelopes this side builds or reads back from a hub (mentions,
   * trace_id, a display name); parseEnvelope drops them: no version signs them.
   */
  [extra: string]: unknown;
}

export interface Envelope extends UnsignedEnvelope {
  sig: EnvelopeSignature;
}

const MAX_ID_LENGTH = 128;
const MAX_TTL_SEC = 30 * 24 * 3600;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(field: string, expected: string): RelayError {
  return new RelayError(400, "invalid_envelope", `envelope field "${field}" must be ${expected}`);
}

function shortString(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_ID_LENGTH;
}

const MAX_TOPIC_LENGTH = 1024;

function optionalText(value: Record<string, unknown>, field: "topic" | "goal"): string | null {
  const text = value[field] ?? null;
  if (text !== null && (typeof text !== "string" || text.length > MAX_TOPIC_LENGTH)) throw invalid(field, `null or a string of at most ${MAX_TOPIC_LENGTH} characters`);
  return text;
}

/**
 * Checks the shape of an a2a/0.1 or a2a/0.2 envelope; throws RelayError(400, invalid_envelope) naming
 * the field. Returns exactly the signed fields and `sig`: anything else in the input is dropped, so what
 * the relay stores and delivers is what the signature covers (other versions are refused).
 */
export function parseEnvelope(value: unknown): Envelope {
  if (!isPlainObject(value)) throw new RelayError(400, "invalid_envelope", "the body must be a JSON object (an a2a/0.1 envelope)");
  if (!ENVELOPE_VERSIONS.includes(value.v as EnvelopeVersion)) throw invalid("v", `"${ENVELOPE_VERSION}" or "${ENVELOPE_VERSION_TOPICS}" (the versions whose signing input this relay knows)`);
  if (!shortString(value.msg_id)) throw invalid("msg_id", `a string of 1..${MAX_ID_LENGTH} characters`);
  if (!Number.isSafeInteger(value.ts)) throw invalid("ts", "an integer (unix seconds)");
  if (!shortString(value.from)) throw invalid("from", "an agent id");
  if (!shortString(value.to)) throw invalid("to", "an agent id");
  if (!ENVELOPE_TYPES.includes(value.type as EnvelopeType)) throw invalid("type", `one of ${ENVELOPE_TYPES.join(", ")}`);
  // Signed as "" when null, so it must be said: a missing field is not a null one.
  if (!("reply_to" in value)) throw invalid("reply_to", "present: null, or the msg_id this answers");
  if (value.reply_to !== null && !shortString(value.reply_to)) {
    throw invalid("reply_to", "null or a msg_id");
  }
  if (RECEIPT_TYPES.has(value.type as EnvelopeType) && !shortString(value.reply_to)) {
    throw invalid("reply_to", "the msg_id this receipt answers");
  }
  const ttl = value.ttl_sec;
  if (typeof ttl !== "number" || !Number.isInteger(ttl) || ttl < 0 || ttl > MAX_TTL_SEC) {
    throw invalid("ttl_sec", `an integer from 0 to ${MAX_TTL_SEC}`);
  }
  if (!isPlainObject(value.payload)) throw invalid("payload", "a JSON object");
  if (typeof value.payload_hash !== "string" || !value.payload_hash.startsWith("sha256:")) {
    throw invalid("payload_hash", '"sha256:<hex>"');
  }
  const sig = value.sig;
  if (!isPlainObject(sig) || sig.alg !== "ed25519" || !shortString(sig.key_id) || typeof sig.value !== "string" || sig.value.length > 256) {
    throw invalid("sig", '{"alg":"ed25519","key_id":"k_…","value":"<base64>"}');
  }
  const topics = value.v === ENVELOPE_VERSION_TOPICS ? { topic: optionalText(value, "topic"), goal: optionalText(value, "goal") } : {};
  return {
    v: value.v as EnvelopeVersion,
    msg_id: value.msg_id,
    ts: value.ts as number,
    from: value.from,
    to: value.to,
    type: value.type as EnvelopeType,
    reply_to: value.reply_to as string | null,
    ttl_sec: ttl,
    payload: value.payload,
    payload_hash: value.payload_hash,
    ...topics,
    sig: { alg: "ed25519", key_id: sig.key_id, value: sig.value },
  };
}

/**
 * Whether the JSON object `value`, which parseEnvelope turned into `envelope`, held exactly the fields
 * it kept, nothing more and nothing less (sig's three included): then its text, strictly parsed, says
 * what JSON.stringify(envelope) would, and may be stored as sent instead of serialised again.
 */
export function holdsOnlySignedFields(value: unknown, envelope: Envelope): boolean {
  if (!isPlainObject(value) || !isPlainObject(value.sig)) return false;
  const keys = Object.keys(value);
  return keys.length === Object.keys(envelope).length && keys.every((key) => Object.hasOwn(envelope, key)) && Object.keys(value.sig).length === 3;
}

/**
 * UTF-8 of v, msg_id, ts, from, to, type, reply_to or "", ttl_sec, payload_hash joined by \n; in
 * a2a/0.2 then topic and goal ("" when null), as the hub builds it.
 */
export function signingInput(envelope: UnsignedEnvelope): Uint8Array {
  const fields = [
    envelope.v,
    envelope.msg_id,
    String(envelope.ts),
    envelope.from,
    envelope.to,
    envelope.type,
    envelope.reply_to ?? "",
    String(envelope.ttl_sec),
    envelope.payload_hash,
  ];
  if (envelope.v !== ENVELOPE_VERSION) fields.push(envelope.topic ?? "", envelope.goal ?? "");
  return utf8(fields.join("\n"));
}

export interface EnvelopeDraft {
  from: string;
  to: string;
  type: EnvelopeType;
  payload: Record<string, unknown>;
  reply_to?: string | null;
  ttl_sec?: number;
  msg_id?: string;
  ts?: number;
}

export const DEFAULT_ENVELOPE_TTL_SEC = 3600;

export async function draftEnvelope(draft: EnvelopeDraft): Promise<UnsignedEnvelope> {
  return {
    v: ENVELOPE_VERSION,
    msg_id: draft.msg_id ?? crypto.randomUUID(),
    ts: draft.ts ?? Math.floor(Date.now() / 1000),
    from: draft.from,
    to: draft.to,
    type: draft.type,
    reply_to: draft.reply_to ?? null,
    ttl_sec: draft.ttl_sec ?? DEFAULT_ENVELOPE_TTL_SEC,
    payload: draft.payload,
    payload_hash: await payloadHash(draft.payload),
  };
}

export type SignFunction = (message: Uint8Array) => Uint8Array | Promise<Uint8Array>;

export async function signEnvelope(unsigned: UnsignedEnvelope, keyId: string, sign: SignFunction): Promise<Envelope> {
  const value = toBase64(await sign(signingInput(unsigned)));
  return { ...unsigned, sig: { alg: "ed25519", key_id: keyId, value } };
}

/** The 64 signature bytes, or null when sig.value is not base64 of 64 bytes. */
export function signatureBytes(envelope: Envelope): Uint8Array | null {
  const bytes = fromBase64(envelope.sig.value);
  return bytes && bytes.length === 64 ? bytes : null;
}
