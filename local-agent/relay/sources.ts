// `clawrelay sources`: the inbox's webhook sources (GitHub, Stripe, Slack, Standard Webhooks, token) —
// add, list, rotate, remove — each a request signed with the agent's key (the relay's
// /inbox/{id}/sources API). Returns values and text; cli.ts prints them. Covered by
// test/node/sources.e2e.test.ts.
import type { SourceKind, SourceView } from "../../protocol/index.ts";
import { formatAge, inboxCall } from "./messages.ts";
import type { InboxAccess } from "./messages.ts";
import { textTable } from "../cli/text-table.ts";

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

export async function addSource(access: InboxAccess, input: { name: string; kind: SourceKind; secret?: string; subpath?: string }): Promise<SourceAnswer> {
  return (await call(access, "POST", "", `cannot add source "${input.name}"`, input)) as unknown as SourceAnswer;
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

export function sourceAddedText(answer: SourceAnswer, verb: "added" | "rotated"): string {
  const s = answer.source;
  const secret = answer.secret ?? null;
  const lines = [`source "${s.name}" (${s.kind}) ${verb}; its events go to the gateway's hooks path + /${s.subpath}`, ""];
  lines.push(...WHERE_TO_PASTE[s.kind](answer.post_url, secret));
  if (secret) lines.push("", "The secret is shown this once: the relay keeps it sealed and never shows it again.");
  if (s.previous_secret_until !== null) lines.push(`The previous secret keeps working until ${new Date(s.previous_secret_until).toISOString()}.`);
  lines.push("", `Map it in openclaw.json: hooks.mappings with match.path "${s.subpath}" (docs/webhook-sources.md, "Recipes").`);
  return lines.join("\n");
}

export function sourcesTable(sources: readonly SourceView[], nowMs: number): string {
  if (sources.length === 0) return "no sources (add one: clawrelay sources add NAME --kind github|stripe|slack|standard-webhooks|token)";
  const rows = sources.map((s) => [
    s.name,
    s.kind,
    s.subpath,
    s.url,
    s.last_refusal ? `${formatAge(nowMs - s.last_refusal.at)} ago: ${s.last_refusal.code}` : "",
  ]);
  return textTable(["NAME", "KIND", "SUB-PATH", "URL", "LAST REFUSAL"], rows);
}
