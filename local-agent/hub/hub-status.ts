// `clawrelay hub status`: the relay's view of the hub link (GET /inbox/{id}/hub) beside the hub's own
// (endpoint, both keys, policy), and a one-line verdict. Reads only: it refreshes a token, never
// registers. Imported by cli.ts; covered by test/node/hub-link.test.ts. Never prints secrets.
import { AgentError } from "../errors.ts";
import { endpointsPath, hubClient, instantMs, lookupKey, policyPath } from "./hub-client.ts";
import type { HubClient, HubSession } from "./hub-client.ts";
import { policyLines, sessionFor, when } from "./hub-link.ts";
import type { HubLinkOptions } from "./hub-link.ts";
import { settingsIdentity } from "../identity.ts";
import { relayErrorText, signedRelayCall } from "../relay/relay-api.ts";
import { loadSettings } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";

export interface RelayHubView {
  hub_url?: string;
  mode?: string;
  prefix?: string;
  prefix_source?: string;
  pull_interval_sec?: number;
  receipt_key_id?: string;
  token_valid_until?: unknown;
  last_receipt?: { at: unknown; status: number; ok: boolean; detail?: string; msg_id?: string } | null;
  receipts_refused?: number;
  receipts_pending?: number;
  last_pull?: { at: unknown; ok: boolean; count?: number; detail?: string } | null;
  last_bridge?: { at: unknown; ok: boolean; acked?: number; detail?: string } | null;
}

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
    token: { source: string; valid_until: string } | Failed;
    /** null in pull mode: the hub pushes nothing. */
    endpoint: Record<string, unknown> | Failed | null;
    keys: { main: KeyStatus | Failed; receipt: KeyStatus | Failed };
    message_policy: string | Failed;
  };
  notes: string[];
  verdict: { ok: boolean; text: string };
}

async function relayView(settings: AgentSettings): Promise<RelayHubView> {
  const path = `/inbox/${settings.agent_id}/hub`;
  const answer = await signedRelayCall(settings.relay_url, settingsIdentity(settings), "GET", path);
  if (answer.status === 200) return answer.body as RelayHubView;
  const code = (answer.body.error as { code?: string } | undefined)?.code;
  if (answer.status === 404 && code === "not_found") throw new AgentError("relay_too_old", `the relay at ${settings.relay_url} is older: it has no GET ${path} (deploy this version to see receipts and pulls)`);
  throw new AgentError("relay_refused", `the relay refused GET ${path}: ${relayErrorText(answer)}`);
}

async function keyStatus(hub: HubClient, agentId: string, key: { key_id: string; public_key: string }): Promise<KeyStatus> {
  const found = await lookupKey(hub, agentId, key.key_id);
  return { key_id: key.key_id, state: found?.state ?? "unknown", matches: found?.pubkey === key.public_key };
}

/** What the hub says about the endpoint, with anything that looks like a secret left out. */
async function endpointStatus(session: HubSession, agentId: string): Promise<Record<string, unknown>> {
  const body = await session.client.json("GET", endpointsPath(agentId, "/status"));
  return Object.fromEntries(Object.entries(body).filter(([name]) => !/token|secret/i.test(name)));
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
  if (!failed(view) && view.last_receipt?.ok) return { ok: true, text: "receipts are accepted by the hub" };
  return { ok: true, text: `no receipt sent yet; the receipt key ${receipt.key_id} is active at the hub, so receipts will be accepted${failed(view) ? " (the relay's own view is unavailable)" : ""}` };
}

export async function hubStatus(options: HubLinkOptions): Promise<HubStatusReport> {
  const settings = loadSettings(options.settingsPath);
  const notes: string[] = [];
  const hub = hubClient(settings.hub_url);
  const session = sessionFor(settings, { ...options, say: (line) => notes.push(line.trim()) }, false, (keyId) => {
    notes.push(`the hub knows the main key as ${keyId}, the settings say ${settings.key.key_id}: run clawrelay hub register`);
  });
  const token = await attempt(async () => {
    const held = await session.token();
    return { source: held.source, valid_until: when(held.expiresAt) };
  });
  const withToken = <T extends object>(run: () => Promise<T>): Promise<T | Failed> => (failed(token) ? Promise.resolve({ error: "no hub token" }) : attempt(run));
  const [relay, endpoint, main, receipt, policy] = await Promise.all([
    attempt(() => relayView(settings)),
    settings.hub?.mode === "pull" ? Promise.resolve(null) : withToken(() => endpointStatus(session, settings.agent_id)),
    attempt(() => keyStatus(hub, settings.agent_id, settings.key)),
    attempt(() => keyStatus(hub, settings.agent_id, settings.receipt_key)),
    withToken(async () => ({ policy: String((await session.client.json("GET", policyPath(settings.agent_id))).message_policy) })),
  ]);
  const report = {
    agent_id: settings.agent_id,
    hub_url: hub.url,
    relay_url: settings.relay_url,
    registered: settings.hub ?? null,
    relay,
    hub: { token, endpoint, keys: { main, receipt }, message_policy: failed(policy) ? policy : policy.policy },
    notes,
  };
  return { ...report, verdict: verdictOf(settings, report) };
}

function event(label: string, value: { at: unknown; ok: boolean; detail?: string } | null | undefined, extra: string): string {
  if (!value) return `  ${label}: none yet`;
  return `  ${label}: ${when(instantMs(value.at))} ${value.ok ? "ok" : "FAILED"}${extra}${value.detail ? ` — ${value.detail}` : ""}`;
}

function relayLines(view: RelayHubView | Failed): string[] {
  if (failed(view)) return [`relay's view: unavailable — ${view.error}`];
  const r = view.last_receipt;
  const token = view.token_valid_until === undefined ? "" : `; its hub token is valid until ${view.token_valid_until ? when(instantMs(view.token_valid_until)) : "— (none)"}`;
  return [
    `relay's view: hub ${view.hub_url ?? "?"}, mode ${view.mode ?? "?"}, prefix ${view.prefix ?? "?"}${view.prefix_source ? ` (${view.prefix_source})` : ""}${view.mode === "pull" && view.pull_interval_sec ? `, pulls every ${view.pull_interval_sec} s` : ""}`,
    `  receipts signed as ${view.receipt_key_id ?? "?"}${token}`,
    event("last receipt", r, r ? ` (${r.status}${r.msg_id ? `, reply to ${r.msg_id}` : ""})` : "") +
      `; refused so far: ${view.receipts_refused ?? 0}${view.receipts_pending ? `; waiting to be sent: ${view.receipts_pending}` : ""}`,
    ...(view.mode === "pull" || view.last_pull ? [event("last pull", view.last_pull, view.last_pull?.count === undefined ? "" : ` (${view.last_pull.count} message(s))`)] : []),
    ...(view.mode === "pull" || view.last_bridge ? [event("last bridge", view.last_bridge, view.last_bridge?.acked === undefined ? "" : ` (${view.last_bridge.acked} acked)`)] : []),
  ];
}

const keyLine = (label: string, key: KeyStatus | Failed) =>
  failed(key) ? `  ${label}: cannot check — ${key.error}` : `  ${label} ${key.key_id}: ${key.state}${key.state !== "unknown" && !key.matches ? " (a DIFFERENT public key under this id)" : ""}`;

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
    failed(hub.token) ? `hub's view (no JWT: ${hub.token.error}):` : `hub's view (JWT from ${hub.token.source}, valid until ${hub.token.valid_until}):`,
    endpoint,
    keyLine("main key", hub.keys.main),
    keyLine("receipt key", hub.keys.receipt),
    ...policy.map((line, i) => `${i === 0 ? "  " : "    "}${line}`),
    ...report.notes.map((note) => `note: ${note}`),
    `verdict: ${report.verdict.text}`,
  ].join("\n");
}
