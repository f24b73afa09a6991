// `clawrelay sources`: the inbox's webhook sources (GitHub, Stripe, Slack, Standard Webhooks, token) —
// add, set where their events go and how they are posted there, list, rotate, remove — each a request
// signed with the agent's key (the relay's /inbox/{id}/sources API). Returns values and text; cli.ts
// prints them. Covered by test/node/sources.e2e.test.ts and (the forward policy) source-policy.test.ts.
import type { SourceKind, SourceView } from "../../protocol/index.ts";
import { formatAge, inboxCall } from "./messages.ts";
import type { InboxAccess } from "./messages.ts";
import { textTable } from "../cli/text-table.ts";
import { liveText } from "./source-live.ts";

/** What the relay answers an add or a rotation with: the URL to paste, and a secret it made (once). */
export interface SourceAnswer {
  source: SourceView;
  post_url: string;
  secret?: string;
}

async function call(access: InboxAccess, method: string, rest: string, what: string, body?: unknown): Promise<Record<string, unknown>> {
  return (await inboxCall(access, method, `/sources${rest}`, what, body)).body;
}

export async function listSources(access: InboxAccess): Promise<SourceView[]> {
  return (await call(access, "GET", "", "cannot list the sources")).sources as SourceView[];
}

/** Where a source's events go: `forward` a local app's URL, or null for the gateway's hooks. */
export interface SourceTarget {
  forward: string | null;
  allowPublic: boolean;
}

/**
 * How a source's forwarded events are posted, as the relay's fields (protocol/lanes.ts FORWARD_POLICY
 * for those never set): each post's time limit, its head's retry budget, whether order matters.
 */
export interface SourcePolicy {
  timeout_sec?: number;
  retries?: number;
  ordered?: boolean;
}

export interface NewSourceInput {
  name: string;
  kind: SourceKind;
  secret?: string;
  subpath?: string;
  target?: SourceTarget;
  policy?: SourcePolicy;
  /** Live answers: the relay's deadline in seconds; null: answered at once (the relay's default). */
  liveSec?: number | null;
}

const targetFields = (target: SourceTarget | undefined) => (target ? { forward: target.forward, allow_public_target: target.allowPublic } : {});

export async function addSource(access: InboxAccess, input: NewSourceInput): Promise<SourceAnswer> {
  const { target, policy, liveSec, ...rest } = input;
  const body = { ...rest, ...targetFields(target), ...policy, ...(liveSec !== undefined ? { live_sec: liveSec } : {}) };
  return (await call(access, "POST", "", `cannot add source "${input.name}"`, body)) as unknown as SourceAnswer;
}

/** Where a source's events go, how they are posted, or both; the relay keeps what is not named. */
export async function changeSource(access: InboxAccess, name: string, change: { target?: SourceTarget; policy?: SourcePolicy; liveSec?: number | null }): Promise<SourceAnswer> {
  const body = { ...targetFields(change.target), ...change.policy, ...(change.liveSec !== undefined ? { live_sec: change.liveSec } : {}) };
  return (await call(access, "PATCH", `/${encodeURIComponent(name)}`, `cannot change source "${name}"`, body)) as unknown as SourceAnswer;
}

export async function rotateSource(access: InboxAccess, name: string, input: { secret?: string; graceSec?: number }): Promise<SourceAnswer> {
  const body = { rotate: true, ...(input.secret !== undefined ? { secret: input.secret } : {}), ...(input.graceSec ? { grace_sec: input.graceSec } : {}) };
  return (await call(access, "PATCH", `/${encodeURIComponent(name)}`, `cannot rotate source "${name}"`, body)) as unknown as SourceAnswer;
}

export async function removeSource(access: InboxAccess, name: string): Promise<{ removed: string }> {
  return (await call(access, "DELETE", `/${encodeURIComponent(name)}`, `cannot remove source "${name}"`)) as { removed: string };
}

// --- text for a person ---------------------------------------------------------------------------

/** Where the URL and secret go in each provider's settings. */
const WHERE_TO_PASTE: Record<SourceKind, (url: string, secret: string | null) => string[]> = {
  github: (url, secret) => [
    "GitHub: the repository's (or organisation's) Settings → Webhooks → Add webhook",
    `  Payload URL:  ${url}`,
    "  Content type: application/json",
    secret ? `  Secret:       ${secret}` : "  Secret:       the one you gave",
  ],
  stripe: (url) => ["Stripe: Dashboard → Developers → Webhooks → the endpoint whose signing secret you gave", `  Endpoint URL: ${url}`],
  slack: (url) => ["Slack: your app → Event Subscriptions → Request URL (Slack sends its challenge at once; the relay answers it)", `  Request URL:  ${url}`],
  "standard-webhooks": (url, secret) => [
    "The sender's webhook settings (Svix, Resend, Clerk …): add an endpoint",
    `  URL:            ${url}`,
    secret ? `  Signing secret: ${secret}  (if the sender lets you set it; else give its secret with --secret)` : "  Signing secret: the one you gave",
  ],
  token: (url) => ["Any sender: post to this URL. It holds the secret: keep it private, rotate it if it leaks.", `  URL: ${url}`],
};

/** Where a source's events go, in words. */
export function destination(s: SourceView): string {
  return s.forward !== null ? `${s.forward}${s.allow_public_target ? " (public target allowed)" : ""}` : `the gateway's hooks path + /${s.subpath}`;
}

export function sourceAddedText(answer: SourceAnswer, verb: "added" | "rotated"): string {
  const s = answer.source;
  const secret = answer.secret ?? null;
  const lines = [`source "${s.name}" (${s.kind}) ${verb}; its events go to ${destination(s)}`, ""];
  lines.push(...WHERE_TO_PASTE[s.kind](answer.post_url, secret));
  if (secret) lines.push("", "The secret is shown this once: the relay keeps it sealed and never shows it again.");
  if (s.previous_secret_until !== null) lines.push(`The previous secret keeps working until ${new Date(s.previous_secret_until).toISOString()}.`);
  lines.push("", ...nextStep(s));
  const policy = policyText(s);
  if (policy !== null && s.forward !== null) lines.push(`Forward policy: ${policy}.`);
  const live = liveText(s);
  if (live !== null) lines.push(live);
  return lines.join("\n");
}

/** A source's forward policy in words, or null from a relay that does not report one. */
export function policyText(s: SourceView): string | null {
  if (s.timeout_sec === undefined && s.retries === undefined && s.ordered === undefined) return null;
  const parts: string[] = [];
  if (s.timeout_sec !== undefined) parts.push(`a post times out after ${s.timeout_sec} s`);
  if (s.retries !== undefined) parts.push(`a failing event is tried again up to ${s.retries} time${s.retries === 1 ? "" : "s"}, then goes to the dead shelf`);
  if (s.ordered !== undefined) parts.push(s.ordered ? "posted one at a time, in order" : "posted several at once, in any order");
  return parts.join("; ");
}

/** The policy as a table cell: "30s, 8 retries, ordered". */
function policyCell(s: SourceView): string {
  if (s.forward === null) return "";
  return [
    ...(s.timeout_sec !== undefined ? [`${s.timeout_sec}s`] : []),
    ...(s.retries !== undefined ? [`${s.retries} retries`] : []),
    ...(s.ordered !== undefined ? [s.ordered ? "ordered" : "unordered"] : []),
  ].join(", ");
}

function nextStep(s: SourceView): string[] {
  if (s.forward === null) return [`Map it in openclaw.json: hooks.mappings with match.path "${s.subpath}" (docs/webhook-sources.md, "Recipes").`];
  return [
    "The running agent posts each event there with the sender's method, body and headers (its signature included), so",
    "the app verifies it as if the provider had called it; events wait at the relay while the agent or the app is down.",
    "Check it with clawrelay status (the app's last answer) or the inspector; clawrelay sources set NAME --gateway undoes it.",
  ];
}

export function targetSetText(answer: SourceAnswer): string {
  const s = answer.source;
  return `source "${s.name}": its events go to ${destination(s)} from now on, those waiting at the relay included`;
}

/** Said of a policy set on a source whose events go to the gateway: it is kept, and used once they go to an app. */
export function policyKeptText(s: SourceView): string {
  return `source "${s.name}": its forward policy is kept for when its events go to a local app (clawrelay sources set ${s.name} --forward URL); the gateway's own retries apply meanwhile`;
}

/** What `sources set` changed: the target's line as before when it named one, the policy's line when it named one. */
export function sourceSetText(answer: SourceAnswer, changed: { target: boolean; policy: boolean }): string {
  const s = answer.source;
  const policy = policyText(s);
  return [
    ...(changed.target ? [targetSetText(answer)] : []),
    ...(changed.policy && s.forward === null ? [policyKeptText(s)] : []),
    ...(changed.policy && s.forward !== null ? [policy === null ? `source "${s.name}": the relay did not report a forward policy (an older relay keeps none)` : `source "${s.name}": ${policy} — from now on, those waiting at the relay included`] : []),
  ].join("\n");
}

export function sourcesTable(sources: readonly SourceView[], nowMs: number): string {
  if (sources.length === 0) return "no sources (add one: clawrelay sources add NAME --kind github|stripe|slack|standard-webhooks|token)";
  // The policy column only when a forwarding source reports one, the live one when a source is live: from an older relay the table is as before.
  const withPolicy = sources.some((s) => policyCell(s) !== "");
  const withLive = sources.some((s) => typeof s.live_sec === "number");
  const rows = sources.map((s) => [
    s.name,
    s.kind,
    s.forward ?? `gateway: ${s.subpath}`,
    ...(withPolicy ? [policyCell(s)] : []),
    ...(withLive ? [typeof s.live_sec === "number" ? `${s.live_sec}s` : ""] : []),
    s.url,
    s.last_refusal ? `${formatAge(nowMs - s.last_refusal.at)} ago: ${s.last_refusal.code}` : "",
  ]);
  return textTable(["NAME", "KIND", "GOES TO", ...(withPolicy ? ["POLICY"] : []), ...(withLive ? ["LIVE"] : []), "URL", "LAST REFUSAL"], rows);
}
