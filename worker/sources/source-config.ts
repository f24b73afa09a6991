// What an inbox stores about a webhook source, how a request to add or change one is read (its forward
// target and its forward policy among it: timeout_sec, retries, ordered; and live_sec, a live source's deadline), and what its owner is shown. Pure: no storage, no crypto here (source-book.ts does
// both). Covered by test/worker/sources-config.test.ts and test/worker/sources-forward.test.ts.
import { FORWARD_POLICY, LIVE, RelayError, SOURCE_KINDS, SUBPATH_MAX_LENGTH, canonicalSubpath, checkForwardTarget } from "../../protocol/index.ts";
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

/** A local app the source's events go to instead of the gateway (protocol/forward.ts). */
export interface SourceForward {
  /** Checked and normalized by checkForwardTarget. */
  url: string;
  /** The owner allowed a public IP literal (--allow-public-target). */
  allow_public: boolean;
}

/**
 * How the agent posts a forwarding source's events (protocol/lanes.ts FORWARD_POLICY where a field is
 * absent): a post's time limit, the head's retry budget, and whether order matters. Only what the owner set.
 */
export interface SourcePolicy {
  timeout_sec?: number;
  retries?: number;
  ordered?: boolean;
}

/** Where a source's events go now, as a delivery frame's `forward` needs it: the target and the policy set. */
export type ForwardTarget = SourceForward & SourcePolicy;

export interface StoredSource {
  name: string;
  kind: SourceKind;
  /** Where under the gateway's hooks path its events are posted (when it has no forward target). */
  subpath: string;
  /** Where its events go instead of the gateway; null (or absent, in a source stored before) for the gateway. */
  forward: SourceForward | null;
  /** The current secret first; then the previous one while a rotation's grace lasts. */
  secrets: StoredSecret[];
  /** Absent in a source stored before policies existed (the defaults apply). */
  policy?: SourcePolicy;
  /** A live source's deadline (protocol/live.ts): its requests are answered by the app while the agent is connected. Absent or null: not live. */
  live_sec?: number | null;
  created_at: number;
  updated_at: number;
}

export interface NewSource {
  name: string;
  kind: SourceKind;
  /** Given by the user; null: the relay makes one (mintSecret), where the kind allows it. */
  secret: string | null;
  subpath: string;
  forward: SourceForward | null;
  policy: SourcePolicy;
  live_sec: number | null;
}

export interface SourceChange {
  rotate: boolean;
  secret: string | null;
  graceSec: number;
  subpath: string | null;
  /** The target from now on: null for the gateway; undefined leaves it as it is. */
  forward: SourceForward | null | undefined;
  /** The policy from now on (the fields named changed, those named null back to the default); undefined: unchanged. */
  policy: SourcePolicy | undefined;
  /** The live deadline from now on: null, not live; undefined: unchanged. */
  liveSec: number | null | undefined;
}

/** Who a source's events are from, in the queue and the dedup table: never an agent id. */
export function sourceSender(name: string): string {
  return `source:${name}`;
}

/** The source a stored message came from (its sender), or null when it is not a source event. */
export function sourceNameOf(sender: string | null): string | null {
  return sender?.startsWith("source:") ? sender.slice("source:".length) : null;
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

function allowPublicOf(value: unknown): boolean | undefined {
  if (value !== undefined && typeof value !== "boolean") throw invalid("allow_public_target must be true or false");
  return value;
}

/** A target checked as protocol/forward.ts checks it; its problem text names --allow-public-target. */
function checkedForward(url: string, allowPublic: boolean): SourceForward {
  const check = checkForwardTarget(url, allowPublic);
  if (!check.ok) throw invalid(`forward: ${check.problem}`);
  return { url: check.url, allow_public: allowPublic };
}

/**
 * The target a request names: a URL, null (the gateway), or undefined (not named). allow_public_target
 * goes with a target: alone it re-checks `current`'s (changing a source), and it allows nothing without one.
 */
function forwardOf(body: Record<string, unknown>, current: SourceForward | null): SourceForward | null | undefined {
  const allowPublic = allowPublicOf(body.allow_public_target);
  const noTarget = () => invalid("allow_public_target goes with a forward target, and this source would have none: give forward (a URL) with it");
  if (body.forward === undefined) {
    if (allowPublic === undefined) return undefined;
    if (current === null) throw noTarget();
    return checkedForward(current.url, allowPublic);
  }
  if (body.forward === null) {
    if (allowPublic === true) throw noTarget();
    return null;
  }
  if (typeof body.forward !== "string") throw invalid("forward must be a URL (a local app, e.g. http://127.0.0.1:3000/webhooks) or null for the gateway");
  return checkedForward(body.forward, allowPublic ?? false);
}

const POLICY_FIELDS = ["timeout_sec", "retries", "ordered"] as const;

function wholeIn(name: string, value: unknown, min: number, max: number, what: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) throw invalid(`${name} must be a whole number from ${min} to ${max}: ${what}`);
  return value;
}

/**
 * The policy fields a request names, checked; null (a change only) puts one back to the default. The
 * result is `current` with them applied, or undefined when the request names none.
 */
function policyOf(body: Record<string, unknown>, current: SourcePolicy): SourcePolicy | undefined {
  if (!POLICY_FIELDS.some((field) => body[field] !== undefined)) return undefined;
  const next: SourcePolicy = { ...current };
  const { timeout_sec: timeout, retries, ordered } = body;
  if (timeout === null) delete next.timeout_sec;
  else if (timeout !== undefined) next.timeout_sec = wholeIn("timeout_sec", timeout, 1, FORWARD_POLICY.timeoutSecMax, `the seconds a post to the local app may take before it counts as failed (default ${FORWARD_POLICY.timeoutSec})`);
  if (retries === null) delete next.retries;
  else if (retries !== undefined) next.retries = wholeIn("retries", retries, 0, FORWARD_POLICY.retriesMax, `how many failed posts (5xx, time-outs, resets) the oldest waiting event may have before it goes to the dead shelf (default ${FORWARD_POLICY.retries})`);
  if (ordered === null) delete next.ordered;
  else if (ordered !== undefined && typeof ordered !== "boolean") throw invalid("ordered must be true (events are posted one at a time, in order: the default) or false (their order does not matter: several are posted at once)");
  else if (ordered !== undefined) next.ordered = ordered;
  return next;
}

/** The body's live_sec: seconds (1..LIVE.deadlineSecMax), null (not live), or undefined (not named). */
function liveSecOf(value: unknown): number | null | undefined {
  if (value === undefined || value === null) return value;
  return wholeIn("live_sec", value, 1, LIVE.deadlineSecMax, `how long a request waits for the app's answer while the agent is connected (clawrelay sources set NAME --live=${LIVE.deadlineSec}); null to answer at once and deliver later`);
}

function secretOf(kind: SourceKind, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalid("secret must be a string");
  checkSecret(kind, value);
  return value;
}

/** A request to add a source: {name, kind, secret?, subpath?, forward?, allow_public_target?, timeout_sec?, retries?, ordered?}. */
export function parseNewSource(body: unknown): NewSource {
  if (!isRecord(body)) throw invalid('the body must be a JSON object: {"name", "kind", "secret"?, "subpath"?, "forward"?, "allow_public_target"?, "timeout_sec"?, "retries"?, "ordered"?, "live_sec"?}');
  onlyFields(body, ["name", "kind", "secret", "subpath", "forward", "allow_public_target", "live_sec", ...POLICY_FIELDS]);
  if (typeof body.name !== "string") throw invalid("name is required: the source's name, as in its URL …/sources/{name}");
  const name = checkSourceName(body.name);
  const kind = body.kind as SourceKind;
  if (!SOURCE_KINDS.includes(kind)) throw invalid(`kind must be one of ${SOURCE_KINDS.join(", ")}`);
  const secret = secretOf(kind, body.secret);
  if (secret === null && (kind === "stripe" || kind === "slack")) {
    throw invalid(kind === "stripe" ? "a Stripe source needs the endpoint's signing secret (whsec_…): add the endpoint in Stripe first, then give its secret" : "a Slack source needs the app's Signing Secret (Basic Information → App Credentials)");
  }
  const subpath = body.subpath === undefined ? `sources/${name}` : subpathOf(body.subpath);
  return { name, kind, secret, subpath, forward: forwardOf(body, null) ?? null, policy: policyOf(body, {}) ?? {}, live_sec: liveSecOf(body.live_sec) ?? null };
}

/** A request to change a source: {rotate?, secret?, grace_sec?, subpath?, forward?, allow_public_target?, timeout_sec?, retries?, ordered?}. */
export function parseSourceChange(body: unknown, source: Pick<StoredSource, "kind" | "forward" | "policy">): SourceChange {
  const kind = source.kind;
  if (!isRecord(body)) throw invalid('the body must be a JSON object: {"rotate"?, "secret"?, "grace_sec"?, "subpath"?, "forward"?, "allow_public_target"?, "timeout_sec"?, "retries"?, "ordered"?, "live_sec"?}');
  onlyFields(body, ["rotate", "secret", "grace_sec", "subpath", "forward", "allow_public_target", "live_sec", ...POLICY_FIELDS]);
  if (body.rotate !== undefined && typeof body.rotate !== "boolean") throw invalid("rotate must be true or false");
  const secret = secretOf(kind, body.secret);
  const rotate = body.rotate === true || secret !== null;
  const grace = body.grace_sec ?? 0;
  if (typeof grace !== "number" || !Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_SEC) throw invalid(`grace_sec must be a whole number of seconds from 0 to ${MAX_GRACE_SEC}`);
  if (grace > 0 && !rotate) throw invalid("grace_sec is for a rotation: give rotate: true (or a new secret) with it");
  if (rotate && secret === null && (kind === "stripe" || kind === "slack")) throw invalid(`rotating a ${kind} source needs the new secret the provider shows: give it as secret`);
  const subpath = body.subpath === undefined ? null : subpathOf(body.subpath);
  const forward = forwardOf(body, source.forward);
  const policy = policyOf(body, source.policy ?? {});
  const liveSec = liveSecOf(body.live_sec);
  if (!rotate && subpath === null && forward === undefined && policy === undefined && liveSec === undefined) {
    throw invalid("nothing to change: give rotate: true, a new secret, a subpath, forward (a URL, or null for the gateway), timeout_sec, retries, ordered or live_sec");
  }
  return { rotate, secret, graceSec: grace, subpath, forward, policy, liveSec };
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
    forward: source.forward?.url ?? null,
    allow_public_target: source.forward?.allow_public ?? false,
    timeout_sec: source.policy?.timeout_sec ?? FORWARD_POLICY.timeoutSec,
    retries: source.policy?.retries ?? FORWARD_POLICY.retries,
    ordered: source.policy?.ordered ?? true,
    live_sec: source.live_sec ?? null,
  };
}
