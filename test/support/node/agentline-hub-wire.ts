// The stand-in hub's pure wire rules: a2a/0.1 identity, hash and signature checks written with
// node:crypto and `canonicalize` only, and the flat 2.x webhook bodies it sends. The stand-in plays the
// outside world, so it must not share a line with protocol/ — a bug there would otherwise be checked by
// itself. Imported by agentline-hub.ts and by test/node/agentline-hub.test.ts, which pins it to the
// published test vector.
import { createHash, createPrivateKey, createPublicKey, randomUUID, sign, verify } from "node:crypto";
import type { KeyObject } from "node:crypto";
import canonicalize from "canonicalize";

// DER headers that turn raw Ed25519 bytes into key objects node:crypto accepts (RFC 8410).
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const PUBKEY_TEXT = /^ed25519:[A-Za-z0-9+/]{43}=$/;
const SIGNATURE_TEXT = /^[A-Za-z0-9+/]{86}==$/;
export const MAX_SKEW_SEC = 300;

export interface Envelope {
  v: string;
  msg_id: string;
  ts: number;
  from: string;
  to: string;
  type: string;
  reply_to: string | null;
  ttl_sec: number;
  payload: Record<string, unknown>;
  payload_hash: string;
  sig: { alg: string; key_id: string; value: string };
}

/** What the checks need to know about a signing key, wherever the hub keeps it. */
export interface KnownKey {
  owner: string;
  pubkey: string;
  state: string;
}

export const isPublicKeyText = (text: string): boolean => PUBKEY_TEXT.test(text);

/** The hash is over the base64 text after "ed25519:", not over the raw key bytes. */
export function agentIdFor(pubkey: string): string {
  return "ag_" + createHash("sha256").update(pubkey.slice("ed25519:".length), "utf8").digest("hex").slice(0, 12);
}

export function payloadHashOf(payload: unknown): string {
  const text = canonicalize(payload);
  if (text === undefined) throw new TypeError("payload cannot be canonicalized as JSON");
  return "sha256:" + createHash("sha256").update(text, "utf8").digest("hex");
}

export function signingInput(e: Omit<Envelope, "payload" | "sig">): Buffer {
  const fields = [e.v, e.msg_id, String(e.ts), e.from, e.to, e.type, e.reply_to ?? "", String(e.ttl_sec), e.payload_hash];
  return Buffer.from(fields.join("\n"), "utf8");
}

function privateKey(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
}

export function publicKeyText(seed: Uint8Array): string {
  const spki = createPublicKey(privateKey(seed)).export({ format: "der", type: "spki" });
  return "ed25519:" + spki.subarray(SPKI_PREFIX.length).toString("base64");
}

export function signBytes(seed: Uint8Array, data: Uint8Array): string {
  return sign(null, data, privateKey(seed)).toString("base64");
}

export function verifyBytes(pubkey: string, data: Uint8Array, signature: string): boolean {
  if (!isPublicKeyText(pubkey) || !SIGNATURE_TEXT.test(signature)) return false;
  const raw = Buffer.from(pubkey.slice("ed25519:".length), "base64");
  try {
    const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: "der", type: "spki" });
    return verify(null, data, key, Buffer.from(signature, "base64"));
  } catch {
    return false;
  }
}

export function signEnvelope(seed: Uint8Array, keyId: string, fields: Omit<Envelope, "payload_hash" | "sig">): Envelope {
  const unsigned = { ...fields, payload_hash: payloadHashOf(fields.payload) };
  return { ...unsigned, sig: { alg: "ed25519", key_id: keyId, value: signBytes(seed, signingInput(unsigned)) } };
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The body as an envelope, or why not; the hub's schema is strict (integers, strings, an object payload). */
export function parseEnvelope(value: unknown): Envelope | string {
  if (!isObject(value)) return "Envelope must be a JSON object";
  for (const field of ["v", "msg_id", "from", "to", "type", "payload_hash"]) {
    if (typeof value[field] !== "string") return `Envelope field ${field} must be a string`;
  }
  for (const field of ["ts", "ttl_sec"]) {
    if (!Number.isSafeInteger(value[field])) return `Envelope field ${field} must be an integer`;
  }
  if (value.reply_to !== null && typeof value.reply_to !== "string") return "Envelope field reply_to must be a string or null";
  if (!isObject(value.payload)) return "Envelope field payload must be an object";
  const sig = value.sig;
  if (!isObject(sig) || typeof sig.alg !== "string" || typeof sig.key_id !== "string" || typeof sig.value !== "string") {
    return "Envelope field sig must be {alg, key_id, value}";
  }
  return value as unknown as Envelope;
}

/** A hub's checks in a hub's order; null when the envelope passes, else the reason it answers with 400. */
export function envelopeFault(e: Envelope, keyOf: (keyId: string) => KnownKey | undefined, nowSec: number): string | null {
  if (Math.abs(nowSec - e.ts) > MAX_SKEW_SEC) return "Timestamp out of range";
  if (payloadHashOf(e.payload) !== e.payload_hash) return "Payload hash mismatch";
  const key = keyOf(e.sig.key_id);
  if (!key || key.state !== "active") return "Signing key not found or not active";
  if (key.owner !== e.from) return "Key does not belong to sender";
  if (e.sig.alg !== "ed25519" || !verifyBytes(key.pubkey, signingInput(e), e.sig.value)) return "Signature verification failed";
  return null;
}

/** Hub-made envelopes are unsigned: receivers trust them only because they come from the hub. */
export function hubEnvelope(to: string, text: string): Envelope {
  const payload = { text };
  const ts = Math.floor(Date.now() / 1000);
  return {
    v: "a2a/0.1", msg_id: randomUUID(), ts, from: "hub", to, type: "system", reply_to: null, ttl_sec: 3600,
    payload, payload_hash: payloadHashOf(payload), sig: { alg: "ed25519", key_id: "hub", value: "" },
  };
}

/** What a 2.x hub writes for a human: "Alice (ag_abc) says: Hi"; the hub's own notes go as they are. */
export function flatText(e: Envelope, senderName: string): string {
  const said = typeof e.payload.text === "string" ? e.payload.text : JSON.stringify(e.payload);
  if (e.from === "hub") return said;
  const who = `${senderName} (${e.from})`;
  if (e.type === "message" || e.type === "result") return `${who} says: ${said}`;
  if (e.type === "contact_request") return `${who} sent you a contact request: ${said}`;
  return `${who} sent ${e.type}: ${JSON.stringify(e.payload)}`;
}

const WAKE_TYPES = new Set(["contact_request", "contact_request_response", "contact_removed"]);

/** The flat 2.x webhook: contact events wake the agent, everything else is an /agent turn; no envelope, no msg_id. */
export function webhookFor(e: Envelope, senderName: string): { leaf: "agent" | "wake"; body: object } {
  const sessionKey = `agentline:${e.from}`;
  const text = flatText(e, senderName);
  if (WAKE_TYPES.has(e.type)) return { leaf: "wake", body: { body: text, mode: "now", sessionKey } };
  return { leaf: "agent", body: { message: text, name: `${senderName} (${e.from})`, channel: "last", sessionKey } };
}

export function probeHint(status: number, path: string): string {
  if (status >= 200 && status < 300) return "OK";
  if (status === 0) return "No answer within 10 s or the connection failed: is the URL reachable from the hub?";
  if (status === 401 || status === 403) return "The endpoint refused the webhook token";
  if (status === 404) return `The endpoint does not serve ${path}`;
  if (status >= 300 && status < 400) return "Redirects are not followed: register the final URL";
  return `Unexpected HTTP ${status}`;
}
