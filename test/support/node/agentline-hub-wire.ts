// The stand-in hub's crypto and envelope rules, written with node:crypto and `canonicalize` only: the
// stand-in plays the outside world, so it shares no line with protocol/ (a bug there would otherwise be
// checked by itself). Keys and ids as the hub derives them, the a2a/0.1 and a2a/0.2 signing inputs, the
// envelope as the hub's pydantic model re-serialises it, the session-key UUIDv5 and HS256 JWTs.
// Imported by the agentline-hub*.ts files and test/node/agentline-hub.test.ts (pinned to the fixtures
// in test/fixtures/hub/).
import { createHash, createHmac, createPrivateKey, createPublicKey, randomUUID, sign, timingSafeEqual, verify } from "node:crypto";
import type { KeyObject } from "node:crypto";
import canonicalize from "canonicalize";

// DER headers that turn raw Ed25519 bytes into key objects node:crypto accepts (RFC 8410).
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
export const MESSAGE_TYPES = ["message", "ack", "result", "error", "contact_request", "contact_request_response", "contact_removed", "system"] as const;

export interface Envelope {
  v: string;
  msg_id: string;
  ts: number;
  from: string;
  to: string;
  type: string;
  reply_to: string | null;
  ttl_sec: number;
  topic?: string | null;
  goal?: string | null;
  payload: Record<string, unknown>;
  payload_hash: string;
  sig: { alg: string; key_id: string; value: string };
  mentions?: string[] | null;
  trace_id?: string | null;
}

export type EnvelopeFields = Omit<Envelope, "payload_hash" | "sig">;

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The hub's parse_pubkey: "ed25519:" + base64 of 32 bytes; the reason it refuses otherwise, or null. */
export function pubkeyFault(pubkey: string): string | null {
  if (!pubkey.startsWith("ed25519:")) return "pubkey must start with 'ed25519:'";
  const b64 = pubkey.slice("ed25519:".length);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) return "pubkey base64 is invalid";
  return Buffer.from(b64, "base64").length === 32 ? null : "Ed25519 public key must be 32 bytes";
}

/** "ag_" + sha256 of the base64 TEXT after "ed25519:" (not of the key bytes), first 12 hex digits. */
export function agentIdFor(pubkey: string): string {
  return "ag_" + sha256Hex(pubkey.slice("ed25519:".length)).slice(0, 12);
}

export const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

export function payloadHashOf(payload: unknown): string {
  const text = canonicalize(payload);
  if (text === undefined) throw new TypeError("payload cannot be canonicalized as JSON");
  return "sha256:" + sha256Hex(text);
}

/** Nine lines for a2a/0.1; any other version adds topic and goal ('' for null) as lines 10 and 11. */
export function signingInput(e: Omit<Envelope, "payload" | "sig">): Buffer {
  const fields = [e.v, e.msg_id, String(e.ts), e.from, e.to, e.type, e.reply_to ?? "", String(e.ttl_sec), e.payload_hash];
  if (e.v !== "a2a/0.1") fields.push(e.topic ?? "", e.goal ?? "");
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
  if (pubkeyFault(pubkey) !== null) return false;
  const sig = Buffer.from(signature, "base64");
  if (sig.length !== 64) return false;
  try {
    const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(pubkey.slice(8), "base64")]), format: "der", type: "spki" });
    return verify(null, data, key, sig);
  } catch {
    return false;
  }
}

/** Signs `fields` (payload_hash computed); the envelope's keys come in the order a client writes them. */
export function signEnvelope(seed: Uint8Array, keyId: string, fields: EnvelopeFields): Envelope {
  const unsigned = { ...fields, payload_hash: payloadHashOf(fields.payload) };
  return { ...unsigned, sig: { alg: "ed25519", key_id: keyId, value: signBytes(seed, signingInput(unsigned)) } };
}

/** A hub-made envelope (unsigned, `sig.value` empty), as the hub builds its dicts: no topic/goal keys. */
export function hubMadeEnvelope(from: string, to: string, type: string, payload: Record<string, unknown>, keyId: string, replyTo: string | null = null): Envelope {
  return {
    v: "a2a/0.1", msg_id: randomUUID(), ts: Math.floor(Date.now() / 1000), from, to, type, reply_to: replyTo, ttl_sec: 3600,
    payload, payload_hash: payloadHashOf(payload), sig: { alg: "ed25519", key_id: keyId, value: "" },
  };
}

/** The envelope as the hub's model dumps it: its field order, topic/goal/mentions (and trace_id at HEAD) as null. */
export function modelEnvelope(e: Envelope, withTraceId: boolean): Record<string, unknown> {
  const dumped: Record<string, unknown> = {
    v: e.v, msg_id: e.msg_id, ts: e.ts, from: e.from, to: e.to, type: e.type, reply_to: e.reply_to ?? null, ttl_sec: e.ttl_sec,
    topic: e.topic ?? null, goal: e.goal ?? null, payload: e.payload, payload_hash: e.payload_hash,
    sig: { alg: e.sig.alg, key_id: e.sig.key_id, value: e.sig.value }, mentions: e.mentions ?? null,
  };
  if (withTraceId) dumped.trace_id = e.trace_id ?? null;
  return dumped;
}

export interface FieldError { type: string; loc: (string | number)[]; msg: string; input: unknown }

const STRINGS = ["msg_id", "from", "to", "payload_hash"] as const;
const OPTIONAL_STRINGS = ["reply_to", "topic", "goal", "trace_id"] as const;

/** The body as the hub's MessageEnvelope model takes it, or FastAPI's 422 detail list. */
export function parseEnvelope(body: unknown): Envelope | FieldError[] {
  if (!isObject(body)) return [{ type: "model_attributes_type", loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", input: body }];
  const errors: FieldError[] = [];
  const fault = (type: string, loc: string[], msg: string, input: unknown) => errors.push({ type, loc: ["body", ...loc], msg, input });
  for (const name of STRINGS) {
    if (!(name in body)) fault("missing", [name], "Field required", body);
    else if (typeof body[name] !== "string") fault("string_type", [name], "Input should be a valid string", body[name]);
  }
  for (const name of OPTIONAL_STRINGS) if (body[name] !== undefined && body[name] !== null && typeof body[name] !== "string") fault("string_type", [name], "Input should be a valid string", body[name]);
  if (body.v !== undefined && typeof body.v !== "string") fault("string_type", ["v"], "Input should be a valid string", body.v);
  if (!("ts" in body)) fault("missing", ["ts"], "Field required", body);
  else if (!Number.isSafeInteger(body.ts)) fault("int_type", ["ts"], "Input should be a valid integer", body.ts);
  if (body.ttl_sec !== undefined && (!Number.isSafeInteger(body.ttl_sec) || (body.ttl_sec as number) < 1)) fault("greater_than_equal", ["ttl_sec"], "Input should be greater than or equal to 1", body.ttl_sec);
  if (!("type" in body)) fault("missing", ["type"], "Field required", body);
  else if (!(MESSAGE_TYPES as readonly unknown[]).includes(body.type)) fault("enum", ["type"], `Input should be ${MESSAGE_TYPES.map((t) => `'${t}'`).join(", ")}`, body.type);
  if (!("payload" in body)) fault("missing", ["payload"], "Field required", body);
  else if (!isObject(body.payload)) fault("dict_type", ["payload"], "Input should be a valid dictionary", body.payload);
  const sig = body.sig;
  if (!isObject(sig)) fault(sig === undefined ? "missing" : "model_attributes_type", ["sig"], sig === undefined ? "Field required" : "Input should be a valid dictionary or object to extract fields from", sig ?? body);
  else {
    if (sig.alg !== undefined && sig.alg !== "ed25519") fault("literal_error", ["sig", "alg"], "Input should be 'ed25519'", sig.alg);
    for (const name of ["key_id", "value"]) if (typeof sig[name] !== "string") fault(sig[name] === undefined ? "missing" : "string_type", ["sig", name], sig[name] === undefined ? "Field required" : "Input should be a valid string", sig[name] ?? sig);
  }
  const mentions = body.mentions;
  if (mentions !== undefined && mentions !== null && !(Array.isArray(mentions) && mentions.every((m) => typeof m === "string"))) fault("list_type", ["mentions"], "Input should be a valid list", mentions);
  if (errors.length > 0) return errors;
  const s = sig as Record<string, string>;
  return {
    v: typeof body.v === "string" ? body.v : "a2a/0.1", msg_id: body.msg_id as string, ts: body.ts as number, from: body.from as string, to: body.to as string,
    type: body.type as string, reply_to: (body.reply_to as string | null | undefined) ?? null, ttl_sec: (body.ttl_sec as number | undefined) ?? 3600,
    topic: (body.topic as string | null | undefined) ?? null, goal: (body.goal as string | null | undefined) ?? null, payload: body.payload as Record<string, unknown>,
    payload_hash: body.payload_hash as string, sig: { alg: "ed25519", key_id: s.key_id!, value: s.value! },
    mentions: (mentions as string[] | null | undefined) ?? null, trace_id: (body.trace_id as string | null | undefined) ?? null,
  };
}

/** RFC 4122 version 5, with node:crypto's SHA-1. */
export function uuid5(namespace: string, name: string): string {
  const digest = createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name, "utf8").digest().subarray(0, 16);
  digest[6] = (digest[6]! & 0x0f) | 0x50;
  digest[8] = (digest[8]! & 0x3f) | 0x80;
  const hex = digest.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const NAMESPACE_DNS = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
export const SESSION_NAMESPACE = uuid5(NAMESPACE_DNS, "botcord");

/** "botcord:" + uuid5(uuid5(DNS, "botcord"), room_id[:topic] or "default"). */
export function sessionKey(roomId: string | null, topic: string | null): string {
  const seed = roomId ? (topic ? `${roomId}:${topic}` : roomId) : "default";
  return `botcord:${uuid5(SESSION_NAMESPACE, seed)}`;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

/** PyJWT's HS256 bytes: header {"alg","typ"} and the claims, compact, in the order given. */
export function signJwt(claims: Record<string, unknown>, secret: string): string {
  const head = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
  return `${head}.${b64url(createHmac("sha256", secret).update(head).digest())}`;
}

/** The claims of a token this secret signed; "expired" past `exp`; null when it is not one. */
export function readJwt(token: string, secret: string, nowSec: number): Record<string, unknown> | "expired" | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  const expected = createHmac("sha256", secret).update(`${parts[0]}.${parts[1]}`).digest();
  const given = Buffer.from(parts[2]!, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!isObject(claims) || typeof claims.agent_id !== "string" || claims.agent_id === "") return null;
  if (claims.iss !== undefined && claims.iss !== "botcord") return null;
  return typeof claims.exp === "number" && claims.exp <= nowSec ? "expired" : claims;
}
