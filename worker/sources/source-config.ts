// What an inbox stores about a webhook source, how a request to add or change one is read, and what
// its owner is shown. Pure: no storage, no crypto here (source-book.ts does both). Covered by
// test/worker/sources-config.test.ts.
import { RelayError, SOURCE_KINDS, SUBPATH_MAX_LENGTH, canonicalSubpath } from "../../protocol/index.ts";
import type { SourceKind, SourceView } from "../../protocol/index.ts";
import { checkSecret } from "./source-secrets.ts";
import { isSealed } from "../access/secret-box.ts";

export const MAX_SOURCES = 32;
/** How long a rotated-out secret may keep working at most. */
export const MAX_GRACE_SEC = 7 * 24 * 3600;
const NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;

export interface StoredSecret {
  /** HMAC kinds: the secret, sealed when the Worker has RECEIPT_KEY_SECRET; token: its sha256 (hex). */
  value: string;
  /** null for the current secret; for the previous one, when its grace ends (ms). */
  until: number | null;
}

export interface StoredSource {
  name: string;
  kind: SourceKind;
  /** Where under the gateway's hooks path its events are posted. */
  subpath: string;
  /** The current secret first; then the previous one while a rotation's grace lasts. */
  secrets: StoredSecret[];
  created_at: number;
  updated_at: number;
}

export interface NewSource {
  name: string;
  kind: SourceKind;
  /** Given by the user; null: the relay makes one (mintSecret), where the kind allows it. */
  secret: string | null;
  subpath: string;
}

export interface SourceChange {
  rotate: boolean;
  secret: string | null;
  graceSec: number;
  subpath: string | null;
}

const invalid = (message: string) => new RelayError(400, "invalid_source", message);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw invalid(`unknown field ${unknown.map((k) => `"${k}"`).join(", ")}: the fields are ${allowed.join(", ")}`);
}

function checkSourceName(name: string): string {
  if (!NAME.test(name)) throw invalid(`"${name.slice(0, 40)}" is not a source name: 1 to 32 of a-z, 0-9, "-" and "_", starting with a letter or digit (e.g. github)`);
  return name;
}

function subpathOf(value: unknown): string {
  const checked = typeof value === "string" ? canonicalSubpath(value) : null;
  if (!checked?.ok) {
    throw invalid(`subpath must be segments of [A-Za-z0-9._~-] separated by "/" (no ".", ".." or empty segments, at most ${SUBPATH_MAX_LENGTH} characters), e.g. sources/github`);
  }
  return checked.subpath;
}

function secretOf(kind: SourceKind, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalid("secret must be a string");
  checkSecret(kind, value);
  return value;
}

/** A request to add a source: {name, kind, secret?, subpath?}. */
export function parseNewSource(body: unknown): NewSource {
  if (!isRecord(body)) throw invalid('the body must be a JSON object: {"name", "kind", "secret"?, "subpath"?}');
  onlyFields(body, ["name", "kind", "secret", "subpath"]);
  if (typeof body.name !== "string") throw invalid("name is required: the source's name, as in its URL …/sources/{name}");
  const name = checkSourceName(body.name);
  const kind = body.kind as SourceKind;
  if (!SOURCE_KINDS.includes(kind)) throw invalid(`kind must be one of ${SOURCE_KINDS.join(", ")}`);
  const secret = secretOf(kind, body.secret);
  if (secret === null && (kind === "stripe" || kind === "slack")) {
    throw invalid(kind === "stripe" ? "a Stripe source needs the endpoint's signing secret (whsec_…): add the endpoint in Stripe first, then give its secret" : "a Slack source needs the app's Signing Secret (Basic Information → App Credentials)");
  }
  return { name, kind, secret, subpath: body.subpath === undefined ? `sources/${name}` : subpathOf(body.subpath) };
}

/** A request to change a source: {rotate?, secret?, grace_sec?, subpath?}. */
export function parseSourceChange(body: unknown, kind: SourceKind): SourceChange {
  if (!isRecord(body)) throw invalid('the body must be a JSON object: {"rotate"?, "secret"?, "grace_sec"?, "subpath"?}');
  onlyFields(body, ["rotate", "secret", "grace_sec", "subpath"]);
  if (body.rotate !== undefined && typeof body.rotate !== "boolean") throw invalid("rotate must be true or false");
  const secret = secretOf(kind, body.secret);
  const rotate = body.rotate === true || secret !== null;
  const grace = body.grace_sec ?? 0;
  if (typeof grace !== "number" || !Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_SEC) throw invalid(`grace_sec must be a whole number of seconds from 0 to ${MAX_GRACE_SEC}`);
  if (grace > 0 && !rotate) throw invalid("grace_sec is for a rotation: give rotate: true (or a new secret) with it");
  if (rotate && secret === null && (kind === "stripe" || kind === "slack")) throw invalid(`rotating a ${kind} source needs the new secret the provider shows: give it as secret`);
  const subpath = body.subpath === undefined ? null : subpathOf(body.subpath);
  if (!rotate && subpath === null) throw invalid("nothing to change: give rotate: true, a new secret, or a subpath");
  return { rotate, secret, graceSec: grace, subpath };
}

export type SourceRefusal = NonNullable<SourceView["last_refusal"]>;

/** A source as its owner sees it (protocol/sources.ts). */
export function sourceView(source: StoredSource, inboxUrl: string, nowMs: number, refusal: SourceRefusal | null): SourceView {
  const previous = source.secrets.find((s) => s.until !== null && s.until > nowMs);
  return {
    name: source.name,
    kind: source.kind,
    subpath: source.subpath,
    url: `${inboxUrl}/sources/${source.name}${source.kind === "token" ? "/{secret}" : ""}`,
    secret_sealed: source.kind === "token" ? null : isSealed(source.secrets[0]!.value),
    previous_secret_until: previous?.until ?? null,
    created_at: source.created_at,
    updated_at: source.updated_at,
    last_refusal: refusal,
  };
}
