// `clawrelay messages`: what the inbox holds, by state, and the two things a person can do about a
// message — replay a dead one, drop any one. Every call is a request signed with the agent's key
// (the relay's GET/POST/DELETE /inbox/{id}/queue…). Returns text; cli.ts prints it.
import type { MessageState, QueueItem, QueueSummary, StoredRequest } from "../../protocol/index.ts";
import { forwardUrl, redactHeaderPairs, redactHeaderRecord } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { settingsIdentity } from "../identity.ts";
import type { Identity } from "../identity.ts";
import type { AgentSettings } from "../settings.ts";
import { relayErrorText, signedRelayCall } from "./relay-api.ts";
import type { RelayAnswer } from "./relay-api.ts";
import { terminalBlock, terminalCut, terminalSafe } from "../cli/terminal-text.ts";

export interface InboxAccess {
  relayUrl: string;
  agentId: string;
  identity: Identity;
}

/** The inbox as the settings file names it, signed for with the agent's own key. */
export async function inboxAccess(settings: AgentSettings): Promise<InboxAccess> {
  return { relayUrl: settings.relay_url, agentId: settings.agent_id, identity: await settingsIdentity(settings) };
}

/** Listing more than this in one command is for the HTTP API and its paging. */
const LIST_CAP = 10_000;

/** A signed call to `/inbox/{id}{path}`; anything but a 2xx is an AgentError saying `what` failed, with the relay's status. */
export async function inboxCall(access: InboxAccess, method: string, path: string, what: string, body?: unknown): Promise<RelayAnswer> {
  const answer = await signedRelayCall(access.relayUrl, access.identity, method, `/inbox/${access.agentId}${path}`, body);
  if (answer.status < 200 || answer.status > 299) throw new AgentError("relay_refused", `${what}: the relay answered ${relayErrorText(answer)}`, answer.status);
  return answer;
}

const call = (access: InboxAccess, method: string, path: string, what: string) => inboxCall(access, method, `/queue${path}`, what);

export async function queueSummary(access: InboxAccess): Promise<QueueSummary> {
  const answer = await call(access, "GET", "?limit=1", "cannot read the inbox");
  return answer.body.summary as QueueSummary;
}

/** The inbox's messages in id order, `cap` at most (in pages of 200), with the relay's counts. */
export async function listMessages(access: InboxAccess, state: MessageState | undefined, cap = LIST_CAP): Promise<{ messages: QueueItem[]; summary: QueueSummary; truncated: boolean }> {
  const messages: QueueItem[] = [];
  let after = 0;
  for (;;) {
    const query = `?limit=${Math.min(200, cap)}&after=${after}${state ? `&state=${state}` : ""}`;
    const body = (await call(access, "GET", query, "cannot list the inbox")).body as { messages: QueueItem[]; has_more: boolean; next_after: number; summary: QueueSummary };
    messages.push(...body.messages);
    if (!body.has_more || messages.length >= cap) return { messages, summary: body.summary, truncated: body.has_more };
    after = body.next_after;
  }
}

export interface ShownMessage {
  message: QueueItem;
  body: string;
  encoding: "utf8" | "base64";
  /** A webhook source event's headers of interest (posted to the gateway with it). */
  headers?: Record<string, string> | null;
  /** A source event's request as the sender made it (relays from before forward targets leave it out). */
  request?: StoredRequest | null;
  /** The app its source forwards to now, or null: the gateway. */
  forward?: string | null;
}

export async function showMessage(access: InboxAccess, id: number): Promise<ShownMessage> {
  const answer = await call(access, "GET", `/${id}`, `cannot show message ${id}`);
  return answer.body as unknown as ShownMessage;
}

export async function replayMessage(access: InboxAccess, id: number): Promise<{ replayed: number; id: number }> {
  return (await call(access, "POST", `/${id}/replay`, `cannot replay message ${id}`)).body as { replayed: number; id: number };
}

export async function dropMessage(access: InboxAccess, id: number): Promise<{ dropped: number; was: string }> {
  return (await call(access, "DELETE", `/${id}`, `cannot drop message ${id}`)).body as { dropped: number; was: string };
}

// --- text for a person ---------------------------------------------------------------------------

/** A span in its largest sensible unit: 12s, 3m, 5h, 2d — or, `spoken`, 12 s, 3 min, 5 h, 2 d. */
export function formatAge(ms: number, spoken = false): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const [n, unit] = s < 120 ? [s, "s"] : s < 7200 ? [Math.round(s / 60), spoken ? "min" : "m"] : s < 172_800 ? [Math.round(s / 3600), "h"] : [Math.round(s / 86_400), "d"];
  return spoken ? `${n} ${unit}` : `${n}${unit}`;
}

/** A sub-path is the sender's (any URL tail), as are an envelope's type and sender on an older relay: escaped. */
function where(item: QueueItem): string {
  return terminalSafe(item.subpath ?? `(envelope ${item.type ?? "?"} from ${item.sender ?? "?"})`);
}

/** A lane's name holds sender-chosen text (a session key): escaped, and cut to keep the table readable. */
const LANE_WIDTH = 32;

/** One line per message, with a header; the reason last, since it is the longest. A lane column when the relay reports lanes. */
export function messagesTable(items: readonly QueueItem[], nowMs: number): string {
  const withLane = items.some((m) => m.lane !== undefined);
  const rows = items.map((m) => [String(m.id), m.state, where(m), ...(withLane ? [terminalCut(m.lane ?? "", LANE_WIDTH)] : []), String(m.size), formatAge(nowMs - m.received_at), String(m.attempts), terminalSafe(m.reason ?? "")]);
  const header = ["ID", "STATE", "SUB-PATH", ...(withLane ? ["LANE"] : []), "SIZE", "AGE", "ATTEMPTS", "REASON"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

export function summaryLine(summary: QueueSummary, nowMs: number): string {
  const oldest = summary.oldest_waiting_at === null ? "" : `; oldest waiting ${formatAge(nowMs - summary.oldest_waiting_at)}`;
  return `${summary.queued} queued, ${summary.sent} sent (in flight), ${summary.dead} dead${oldest}`;
}

/** The JSON a script gets from `messages --json`: the relay's items plus their age (cli.ts escapes what a terminal would act on). */
export function messagesJson(items: readonly QueueItem[], nowMs: number): string {
  return JSON.stringify(items.map((m) => ({ ...m, age_sec: Math.round((nowMs - m.received_at) / 1000) })), null, 2);
}

/**
 * `messages show --json`: the relay's answer with every credential header's value redacted (the relay
 * redacts them too; this holds against an older relay): neither the text nor the JSON ever prints one.
 */
export function shownRedacted(shown: ShownMessage): ShownMessage {
  return {
    ...shown,
    ...(shown.headers ? { headers: redactHeaderRecord(shown.headers) } : {}),
    ...(shown.request ? { request: { ...shown.request, headers: redactHeaderPairs(shown.request.headers) } } : {}),
  };
}

/** What `messages show` prints: every value the sender or an app wrote escaped, credentials redacted, the body's lines kept. */
export function messageDetail(unredacted: ShownMessage): string {
  const shown = shownRedacted(unredacted);
  const m = shown.message;
  const lines: [string, string | number | null][] = [
    ["id", m.id],
    ["state", m.state],
    ["lane", m.lane ?? null],
    ["kind", m.kind],
    ["sub-path", m.subpath],
    ["content-type", m.content_type],
    ["size", `${m.size} bytes`],
    ["received", new Date(m.received_at).toISOString()],
    ["expires", new Date(m.expires_at).toISOString()],
    ["sender", m.sender],
    ["msg_id", m.msg_id],
    ["type", m.type],
    ["attempts", m.attempts],
    ["last status", m.last_status],
    ["dead since", m.dead_at === null ? null : new Date(m.dead_at).toISOString()],
    ["reason", m.reason],
    ["replay of", m.replay_of],
  ];
  if (shown.forward) lines.push(["forwarded to", forwardUrl(shown.forward, shown.request?.tail ?? "") ?? shown.forward]);
  if (shown.request) lines.push(["request", `${shown.request.method} …${shown.request.tail}`]);
  // The sender's own headers when the relay kept them (signatures included: this is the owner's view; credentials redacted).
  const headers = shown.request ? shown.request.headers : Object.entries(shown.headers ?? {});
  for (const [name, value] of headers) lines.push([name, value]);
  const head = lines.filter(([, v]) => v !== null && v !== "").map(([k, v]) => `${`${terminalSafe(k)}:`.padEnd(13)} ${terminalSafe(String(v))}`);
  const body = shown.encoding === "utf8" ? terminalBlock(prettyIfJson(shown.body)) : `(not UTF-8: ${m.size} bytes, base64)\n${shown.body}`;
  const next = m.state === "dead" || m.state === "delivered" ? [`\nreplay: clawrelay messages replay ${m.id}    drop: clawrelay messages drop ${m.id}`] : [];
  return [...head, "", body, ...next].join("\n");
}

function prettyIfJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
