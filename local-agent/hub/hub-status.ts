// `clawrelay hub status`: the relay's view of the hub link (GET /inbox/{id}/hub) beside the hub's own
// (endpoint, both keys, policy), what other clients of the agent did (hub-others.ts), and a one-line
// verdict. It reads only, with a token that logs no other client out (token-sources.ts): it refreshes one
// only when neither the relay nor a credentials file holds one that works — and then says so, and hands
// the new one over, since the refresh ended theirs. Imported by cli.ts; covered by
// test/node/hub-link.test.ts. Never prints secrets.
import { instantMs, lookupHubKey, readMessagePolicy } from "../../protocol/index.ts";
import type { HubClient } from "../../protocol/index.ts";
import { agentHubClient, when } from "./hub-client.ts";
import type { HubLinkOptions } from "./hub-link.ts";
import { likelyOtherPulls, otherClientLines, readHistory } from "./hub-others.ts";
import type { OtherPuller } from "./hub-others.ts";
import { policyLines } from "./hub-policy.ts";
import { relayHubView } from "./relay-hub.ts";
import type { RelayHubView } from "./relay-hub.ts";
import { shareToken } from "./token-handoff.ts";
import { sessionFor } from "./token-sources.ts";
import { endpointStatus } from "./webhook-era/hub-endpoint.ts";
import { loadSettings } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";

export type { RelayHubView } from "./relay-hub.ts";

type Failed = { error: string };
const failed = (value: unknown): value is Failed => typeof value === "object" && value !== null && typeof (value as Partial<Failed>).error === "string";
const attempt = <T extends object>(run: () => Promise<T>): Promise<T | Failed> => run().catch((err: Error) => ({ error: err.message }));

export interface KeyStatus {
  key_id: string;
  /** The hub's state, or "unknown" when it does not know that key id. */
  state: string;
  /** The hub holds the same public key under that id. */
  matches: boolean;
}

export interface HubStatusReport {
  agent_id: string;
  hub_url: string;
  relay_url: string;
  registered: AgentSettings["hub"] | null;
  relay: RelayHubView | Failed;
  hub: {
    /** minted: hub status had to refresh one (which ended every older token; then `shared` says where it went). */
    token: { source: string; valid_until: string; minted: boolean; shared?: string[] } | Failed;
    /** null in pull mode: the hub pushes nothing. */
    endpoint: Record<string, unknown> | Failed | null;
    keys: { main: KeyStatus | Failed; receipt: KeyStatus | Failed };
    message_policy: string | Failed;
  };
  /** Another client likely pulls this inbox (pull mode only; null: none seen, or cannot tell). */
  other_puller: OtherPuller | null;
  /** Other clients' doings, each with its fix. */
  warnings: string[];
  notes: string[];
  verdict: { ok: boolean; text: string };
}

async function keyStatus(hub: HubClient, agentId: string, key: { key_id: string; public_key: string }): Promise<KeyStatus> {
  const found = await lookupHubKey(hub, agentId, key.key_id);
  return { key_id: key.key_id, state: found?.state ?? "unknown", matches: found?.pubkey === key.public_key };
}

function verdictOf(settings: AgentSettings, report: Omit<HubStatusReport, "verdict">): HubStatusReport["verdict"] {
  const fix = " — run clawrelay hub register";
  if (!settings.hub) return { ok: false, text: `not registered with the hub yet${fix}` };
  const receipt = report.hub.keys.receipt;
  if (failed(receipt)) return { ok: false, text: `cannot check the receipt key at the hub: ${receipt.error}` };
  if (receipt.state !== "active" || !receipt.matches) {
    const why = receipt.state === "unknown" ? "it does not know that id" : receipt.matches ? receipt.state : "that id is another public key";
    return { ok: false, text: `receipts will be refused: the hub does not hold the receipt key ${receipt.key_id} as an active key of ${settings.agent_id} (${why})${fix}` };
  }
  const view = report.relay;
  if (!failed(view)) {
    if (view.receipt_key_id && view.receipt_key_id !== receipt.key_id) return { ok: false, text: `the relay signs receipts as ${view.receipt_key_id}, the hub knows the receipt key as ${receipt.key_id}${fix}` };
    if (view.last_receipt && !view.last_receipt.ok) return { ok: false, text: `receipts refused: ${view.last_receipt.detail ?? `status ${view.last_receipt.status}`}${fix}` };
  }
  const endpoint = report.hub.endpoint;
  if (endpoint && !failed(endpoint) && typeof endpoint.state === "string" && endpoint.state !== "active") {
    return { ok: false, text: `the hub's webhook endpoint is ${endpoint.state}: it will not deliver${fix}` };
  }
  const also = report.warnings.length > 0 ? " (but see the warnings above)" : "";
  if (!failed(view) && view.last_receipt?.ok) return { ok: true, text: `receipts are accepted by the hub${also}` };
  return { ok: true, text: `no receipt sent yet; the receipt key ${receipt.key_id} is active at the hub, so receipts will be accepted${failed(view) ? " (the relay's own view is unavailable)" : ""}${also}` };
}

export async function hubStatus(options: HubLinkOptions): Promise<HubStatusReport> {
  const settings = loadSettings(options.settingsPath);
  const notes: string[] = [];
  const hub = agentHubClient(settings.hub_url);
  const relay = await attempt(() => relayHubView(settings));
  const view = failed(relay) ? null : relay;
  const session = await sessionFor(settings, {
    ...(options.agentlineToken ? { agentlineToken: options.agentlineToken } : {}),
    ...(options.agentlineHome ? { agentlineHome: options.agentlineHome } : {}),
    mint: "refresh",
    relayView: async () => view,
    onKeyId: (keyId) => notes.push(`the hub knows the main key as ${keyId}, the settings say ${settings.key.key_id}: run clawrelay hub register`),
    note: (line) => notes.push(line.trim()),
  });
  // History first: the hub answers it only with the agent's CURRENT token, so a stale one is passed over here.
  const history = await attempt(async () => ({ records: await readHistory(session.client) }));
  const token = await attempt(async () => {
    const held = await session.token();
    const shown = { source: held.source, valid_until: when(held.expiresAtMs), minted: held.minted };
    // The refresh ended the relay's token and the credentials file's: hand them the new one.
    return held.minted ? { ...shown, shared: (await shareToken(settings, held)).lines } : shown;
  });
  const withToken = <T extends object>(run: () => Promise<T>): Promise<T | Failed> => (failed(token) ? Promise.resolve({ error: "no hub token" }) : attempt(run));
  const [endpoint, main, receipt, policy] = await Promise.all([
    settings.hub?.mode === "pull" ? Promise.resolve(null) : withToken(() => endpointStatus(session.client, settings.agent_id)),
    attempt(() => keyStatus(hub, settings.agent_id, settings.key)),
    attempt(() => keyStatus(hub, settings.agent_id, settings.receipt_key)),
    withToken(async () => ({ policy: await readMessagePolicy(session.client, settings.agent_id) })),
  ]);
  const otherPuller =
    view?.mode === "pull" && !failed(history)
      ? likelyOtherPulls(history.records, { agentId: settings.agent_id, recentPulled: view.recent_pulled ?? [], registeredAt: settings.hub?.registered_at ?? null, now: Date.now() })
      : null;
  if (view?.mode === "pull" && failed(history)) notes.push(`cannot tell whether another client pulls this inbox: the hub's history is unavailable (${history.error})`);
  const report = {
    agent_id: settings.agent_id,
    hub_url: hub.url,
    relay_url: settings.relay_url,
    registered: settings.hub ?? null,
    relay,
    hub: { token, endpoint, keys: { main, receipt }, message_policy: failed(policy) ? policy : policy.policy },
    other_puller: otherPuller,
    warnings: otherClientLines(view, otherPuller, settings.hub_credentials?.path ?? null),
    notes,
  };
  return { ...report, verdict: verdictOf(settings, report) };
}

function event(label: string, value: { at: unknown; ok: boolean; detail?: string } | null | undefined, extra: string): string {
  if (!value) return `  ${label}: none yet`;
  return `  ${label}: ${when(instantMs(value.at))} ${value.ok ? "ok" : "FAILED"}${extra}${value.detail ? ` — ${value.detail}` : ""}`;
}

const TOKEN_SOURCE: Record<string, string> = { refresh: "its own refresh", owner: "hub register", agent: "the agent (the credentials file)" };

function relayLines(view: RelayHubView | Failed): string[] {
  if (failed(view)) return [`relay's view: unavailable — ${view.error}`];
  const r = view.last_receipt;
  const t = view.token;
  const token = t === undefined ? "" : t ? `; its hub token: from ${TOKEN_SOURCE[t.source] ?? t.source}, valid until ${when(t.expires_at * 1000)}` : "; it holds no hub token";
  const cost = view.idle_cost_per_day;
  return [
    `relay's view: hub ${view.hub_url ?? "?"}, mode ${view.mode ?? "?"}, prefix ${view.prefix ?? "?"}${view.prefix_source ? ` (${view.prefix_source})` : ""}`,
    `  receipts signed as ${view.receipt_key_id ?? "?"}${token}`,
    event("last receipt", r, r ? ` (${r.status}${r.msg_id ? `, reply to ${r.msg_id}` : ""})` : "") +
      `; refused so far: ${view.receipts_refused ?? 0}${view.receipts_pending ? `; waiting to be sent: ${view.receipts_pending}` : ""}`,
    ...(view.mode === "pull"
      ? [
          `  pulls: next ${view.next_pull_at ? when(view.next_pull_at) : "when the alarm runs"}; while nothing arrives the wait doubles from 15 s up to every ${view.pull_interval_sec ?? "?"} s, and a pull follows at once when the running agent hears of mail on the hub's WebSocket`,
          ...(cost ? [`  idle cost a day: ${cost.alarms} alarm runs, ${cost.hub_requests} hub requests, ${cost.rows_written} rows written`] : []),
        ]
      : []),
    ...(view.mode === "pull" || view.last_pull ? [event("last pull", view.last_pull, view.last_pull?.count === undefined ? "" : ` (${view.last_pull.count} message(s))`)] : []),
    ...(view.mode === "pull" || view.last_bridge ? [event("last bridge", view.last_bridge, view.last_bridge?.acked === undefined ? "" : ` (${view.last_bridge.acked} acked)`)] : []),
  ];
}

const keyLine = (label: string, key: KeyStatus | Failed) =>
  failed(key) ? `  ${label}: cannot check — ${key.error}` : `  ${label} ${key.key_id}: ${key.state}${key.state !== "unknown" && !key.matches ? " (a DIFFERENT public key under this id)" : ""}`;

function tokenLines(token: HubStatusReport["hub"]["token"]): string[] {
  if (failed(token)) return [`hub's view (no JWT: ${token.error}):`];
  const head = `hub's view (JWT from ${token.source}, valid until ${token.valid_until}):`;
  if (!token.minted) return [head];
  return [
    head,
    "  REFRESHED: neither the relay nor a credentials file held a token that works, so hub status made one — that ended every older token of this agent. Handed over:",
    ...(token.shared ?? []).map((line) => `    ${line}`),
  ];
}

export function hubStatusText(report: HubStatusReport): string {
  const { hub, registered } = report;
  const endpoint = !hub.endpoint
    ? "  endpoint: none (pull mode: the relay fetches from the hub's inbox)"
    : failed(hub.endpoint)
      ? `  endpoint: ${hub.endpoint.error}`
      : `  endpoint: ${Object.entries(hub.endpoint).map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ") || "(empty answer)"}`;
  const policy = failed(hub.message_policy) ? [`message policy: cannot read — ${hub.message_policy.error}`] : policyLines(report.hub_url, report.agent_id, hub.message_policy);
  return [
    `agent ${report.agent_id} — hub ${report.hub_url}, relay ${report.relay_url}`,
    registered
      ? `registered ${when(registered.registered_at)}: mode ${registered.mode}, prefix ${registered.prefix}${registered.endpoint_state ? `, endpoint ${registered.endpoint_state}` : ""}`
      : "not registered with the hub yet (clawrelay hub register)",
    ...relayLines(report.relay),
    ...tokenLines(hub.token),
    endpoint,
    keyLine("main key", hub.keys.main),
    keyLine("receipt key", hub.keys.receipt),
    ...policy.map((line, i) => `${i === 0 ? "  " : "    "}${line}`),
    ...report.warnings.map((line) => (line.startsWith("  ") ? `  ${line}` : `WARNING: ${line}`)),
    ...report.notes.map((note) => `note: ${note}`),
    `verdict: ${report.verdict.text}`,
  ].join("\n");
}
