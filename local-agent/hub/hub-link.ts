// `clawrelay hub register`: make the hub and the relay agree about this
// agent — a JWT from the agent's own key, the receipt key as a second key of the agent at the hub
// (under the id the hub assigns), the relay told that id and the hub mode, the webhook endpoint, the
// message policy. Imported by cli.ts and hub-status.ts; covered by test/node/hub-link.test.ts. Never prints the JWT,
// private keys or the webhook token.
import { existsSync } from "node:fs";
import { CLAIM_TOKEN_HEADER, defaultKeyIdFor } from "../../protocol/index.ts";
import { agentlineDir, credentialsFileOf, readAgentlineCredentials } from "./agentline-credentials.ts";
import { AgentError } from "../errors.ts";
import { addKey, endpointsPath, hubClient, hubDetail, hubSession, lookupKey, policyPath, verifyKey } from "./hub-client.ts";
import type { HubAnswer, HubClient, HubSession } from "./hub-client.ts";
import { identityFromPrivateKey, newIdentity, settingsIdentity } from "../identity.ts";
import { relayErrorText, signedRelayCall } from "../relay/relay-api.ts";
import { loadSettings, saveSettings } from "../settings.ts";
import type { AgentSettings, HubMode } from "../settings.ts";
import { HUB_PREFIXES } from "../../protocol/index.ts";
import type { HubPrefix } from "../../protocol/index.ts";

export interface HubLinkOptions {
  settingsPath: string;
  /** --agentline-token: a hub JWT to use instead of the credentials file's or one made here. */
  agentlineToken?: string;
  /** Where ~/.agentline is (tests); default the user's home. */
  agentlineHome?: string;
  /** Progress, one line per step and result. */
  say?: (line: string) => void;
}

export interface HubRegisterOptions extends HubLinkOptions {
  mode?: HubMode;
  prefix?: HubPrefix;
  /** --open: set the hub's message policy to open when it is contacts_only. */
  open?: boolean;
  /** The relay operator's claim token (only a first claim needs it). */
  claimToken?: string;
}

export interface EndpointReport {
  endpoint_id: string | null;
  url: string;
  state: string;
  test: { all_ok: boolean; results: { path: string; status: number; ok: boolean; hint?: string }[] } | null;
}

export interface HubRegisterResult {
  agent_id: string;
  hub_url: string;
  mode: HubMode;
  prefix: HubPrefix;
  main_key_id: string;
  receipt_key_id: string;
  /** The relay accepted the claim's `hub` field (an older relay does not know it). */
  relay_knows_hub: boolean;
  endpoint: EndpointReport | null;
  message_policy: string | null;
}

const indent = (lines: string[]) => lines.map((line) => `      ${line}`);
const isOk = (answer: HubAnswer) => answer.status >= 200 && answer.status <= 299;
export const when = (ms: number | null) => (ms === null ? "unknown" : new Date(ms).toISOString());

/** The session both commands use; `allowRegister` false for status, which must not create anything. */
export function sessionFor(settings: AgentSettings, options: HubLinkOptions, allowRegister: boolean, onKeyId: (keyId: string) => void): HubSession {
  const say = options.say ?? (() => {});
  let supplied: { token: string; source: string } | null = options.agentlineToken ? { token: options.agentlineToken, source: "--agentline-token" } : null;
  const file = credentialsFileOf(options.agentlineHome ?? agentlineDir(), settings.agent_id);
  if (!supplied && existsSync(file)) {
    try {
      const credentials = readAgentlineCredentials(file);
      const sameHub = !credentials.hubUrl || credentials.hubUrl.replace(/\/+$/, "") === settings.hub_url.replace(/\/+$/, "");
      if (credentials.token && sameHub && (credentials.tokenExpiresAt ?? 0) > Date.now()) supplied = { token: credentials.token, source: file };
    } catch (err) {
      say(`      (not using ${file}: ${(err as Error).message})`);
    }
  }
  return hubSession(hubClient(settings.hub_url), {
    agentId: settings.agent_id,
    displayName: settings.display_name ?? settings.agent_id,
    identity: settingsIdentity(settings),
    supplied,
    // A key id that is not our own default came from a hub (this one, or an imported Agentline identity).
    keyKnown: settings.hub !== undefined || settings.key.key_id !== defaultKeyIdFor(settings.key.public_key),
    allowRegister,
    onKeyId,
    note: (line) => say(`      ${line}`),
  });
}

/** Step 2: the receipt key as an active key of the agent, under the id the hub assigned. */
async function ensureReceiptKey(hub: HubClient, session: HubSession, settings: AgentSettings, save: () => void): Promise<string> {
  const id = settings.agent_id;
  let receipt = identityFromPrivateKey(settings.receipt_key.private_key, settings.receipt_key.key_id);
  const known = await lookupKey(hub, id, receipt.keyId);
  if (known?.pubkey === receipt.publicKey && known.state === "active") return `${receipt.keyId} is already an active key of ${id} at the hub (reused)`;
  let note = "";
  if (known?.pubkey === receipt.publicKey && known.state === "revoked") {
    // A revoked key never becomes active again: hand the relay a new one.
    receipt = newIdentity();
    note = ` (the old receipt key ${settings.receipt_key.key_id} was revoked at the hub, so a new one was made)`;
  }
  const added = await addKey(session.client, id, receipt.publicKey);
  await verifyKey(hub, id, added.keyId, added.challenge, identityFromPrivateKey(receipt.privateKey, added.keyId));
  settings.receipt_key = { key_id: added.keyId, private_key: receipt.privateKey, public_key: receipt.publicKey };
  save();
  return `added as ${added.keyId} (the hub's id), its challenge signed by the receipt key: active; saved in the settings${note}`;
}

/** Step 3: the relay signs receipts under the hub's key id and knows the hub mode and prefix. */
async function claimOnRelay(settings: AgentSettings, mode: HubMode, prefix: HubPrefix, claimToken: string | undefined): Promise<{ hooksUrl: string; relayKnowsHub: boolean }> {
  const base = {
    keys: [{ key_id: settings.key.key_id, pubkey: settings.key.public_key }],
    receipt_key: { key_id: settings.receipt_key.key_id, private_key: settings.receipt_key.private_key },
    hub_url: settings.hub_url,
    // Without a token the hub cannot be given one for the endpoint; ask the relay for a fresh one.
    ...(settings.webhook_token ? {} : { rotate_webhook_token: true }),
  };
  const identity = settingsIdentity(settings);
  const headers: Record<string, string> = claimToken ? { [CLAIM_TOKEN_HEADER]: claimToken } : {};
  const path = `/inbox/${settings.agent_id}`;
  let answer = await signedRelayCall(settings.relay_url, identity, "PUT", path, { ...base, hub: { mode, prefix } }, headers);
  let relayKnowsHub = true;
  const error = answer.body.error as { code?: string; message?: string } | undefined;
  if (answer.status === 400 && error?.code === "invalid_claim" && error.message?.includes('"hub"')) {
    relayKnowsHub = false;
    answer = await signedRelayCall(settings.relay_url, identity, "PUT", path, base, headers);
  }
  if (answer.status !== 200 && answer.status !== 201) throw new AgentError("claim_failed", `the relay refused the claim for ${settings.agent_id}: ${relayErrorText(answer)}`);
  if (typeof answer.body.webhook_token === "string") settings.webhook_token = answer.body.webhook_token;
  const urls = answer.body.urls as { hooks?: unknown } | undefined;
  return { hooksUrl: typeof urls?.hooks === "string" ? urls.hooks : `${settings.relay_url}${path}/hooks`, relayKnowsHub };
}

function testReport(answer: HubAnswer): EndpointReport["test"] {
  if (!isOk(answer) || !Array.isArray(answer.body.results)) return null;
  const results = (answer.body.results as Record<string, unknown>[]).map((r) => ({
    path: String(r.path ?? "?"),
    status: typeof r.status === "number" ? r.status : 0,
    ok: r.ok === true,
    ...(typeof r.hint === "string" && r.hint ? { hint: r.hint } : {}),
  }));
  return { all_ok: answer.body.all_ok === true, results };
}

/** Step 4: POST …/endpoints, then the hub's probe test; null when the hub has no webhook delivery. */
async function registerEndpoint(session: HubSession, settings: AgentSettings, hooksUrl: string): Promise<EndpointReport | null> {
  const token = settings.webhook_token;
  if (!token) throw new AgentError("no_webhook_token", "the relay gave no webhook token; run clawrelay init --rotate-token, then hub register again");
  const path = endpointsPath(settings.agent_id);
  const answer = await session.client.call("POST", path, { body: { url: hooksUrl, webhook_token: token } });
  if (answer.status === 404) return null;
  if (!isOk(answer)) throw new AgentError("hub_refused", `hub refused POST ${path}: ${answer.status} ${hubDetail(answer)}`);
  let test = await session.client.call("POST", endpointsPath(settings.agent_id, "/test"), { body: { url: hooksUrl, webhook_token: token } });
  // The hub's endpoint dry-run is also documented as a GET of the registered endpoint; some hubs answer only that.
  if (test.status === 404 || test.status === 405) test = await session.client.call("GET", endpointsPath(settings.agent_id, "/test"));
  return {
    endpoint_id: typeof answer.body.endpoint_id === "string" ? answer.body.endpoint_id : null,
    url: typeof answer.body.url === "string" ? answer.body.url : hooksUrl,
    state: typeof answer.body.state === "string" ? answer.body.state : "unknown",
    test: testReport(test),
  };
}

function endpointLines(endpoint: EndpointReport, prefix: HubPrefix): string[] {
  const lines = [`${endpoint.url} registered${endpoint.endpoint_id ? ` (${endpoint.endpoint_id})` : ""}: ${endpoint.state}`];
  if (endpoint.state !== "active") {
    lines.push(
      `the hub got no 2xx from ${endpoint.url}/${prefix}_inbox/agent and …/wake, so it will not deliver. Check:`,
      `  - the relay URL is reachable from the internet (not 127.0.0.1 or a private address);`,
      `  - the webhook token is the inbox's current one (after init --rotate-token, run hub register again);`,
      `  - the prefix is the hub's: agentgram for Agentline, botcord for the public hub code (--prefix).`,
    );
  }
  if (!endpoint.test) lines.push("probe test: the hub offers none");
  else {
    lines.push(`probe test: ${endpoint.test.all_ok ? "all ok" : "FAILED"}`);
    for (const r of endpoint.test.results) lines.push(`  ${r.path}  ${r.status || "no answer"} ${r.ok ? "ok" : "FAIL"}${r.hint ? ` — ${r.hint}` : ""}`);
  }
  return lines;
}

/** The policy lines both commands print; `contacts_only` explained, with the request that opens it. */
export function policyLines(hubUrl: string, agentId: string, policy: string): string[] {
  if (policy !== "contacts_only") return [`message policy: ${policy}`];
  return [
    `message policy: contacts_only — a stranger's first message is refused by the hub with 403 NOT_IN_CONTACTS`,
    `until you accept their contact request. To take messages from anyone:`,
    `  clawrelay hub register --open     or, with your agent's JWT in $TOKEN:`,
    `  curl -X PATCH ${hubUrl}${policyPath(agentId)} -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"message_policy":"open"}'`,
  ];
}

/** Step 5: read the policy, and open it when asked. */
async function settlePolicy(session: HubSession, settings: AgentSettings, open: boolean): Promise<{ policy: string | null; lines: string[] }> {
  const path = policyPath(settings.agent_id);
  const answer = await session.client.call("GET", path);
  if (!isOk(answer) || typeof answer.body.message_policy !== "string") return { policy: null, lines: [`the hub does not report a message policy (GET ${path}: ${answer.status} ${hubDetail(answer)})`] };
  const policy = answer.body.message_policy;
  if (policy !== "contacts_only" || !open) return { policy, lines: policyLines(settings.hub_url, settings.agent_id, policy) };
  const opened = await session.client.json("PATCH", path, { body: { message_policy: "open" } });
  const now = typeof opened.message_policy === "string" ? opened.message_policy : "open";
  return { policy: now, lines: [`message policy: was contacts_only, now ${now} (--open): anyone may message ${settings.agent_id}`] };
}

export async function registerWithHub(options: HubRegisterOptions): Promise<HubRegisterResult> {
  const say = options.say ?? (() => {});
  const settings = loadSettings(options.settingsPath);
  const save = () => saveSettings(options.settingsPath, settings);
  const id = settings.agent_id;
  const previous = settings.hub?.prefix;
  const prefix: HubPrefix = options.prefix ?? (previous && HUB_PREFIXES.includes(previous) ? previous : "agentgram");
  let mode: HubMode = options.mode ?? "webhook";
  const hub = hubClient(settings.hub_url);
  say(`Registering ${id} with the hub ${hub.url} (mode ${mode}, prefix ${prefix}); relay ${settings.relay_url}`);

  const oldKeyId = settings.key.key_id;
  const session = sessionFor(settings, options, true, (keyId) => {
    settings.key.key_id = keyId;
    save();
  });
  const token = await session.token();
  say(`[1/6] hub token: from ${token.source}; valid until ${when(token.expiresAt)}`);
  if (settings.key.key_id !== oldKeyId) say(`      the hub knows the main key as ${settings.key.key_id} (settings had ${oldKeyId}); saved — envelopes are signed with it`);

  say(`[2/6] receipt key: ${await ensureReceiptKey(hub, session, settings, save)}`);

  let claim = await claimOnRelay(settings, mode, prefix, options.claimToken);
  save();
  say(`[3/6] relay: claim accepted — the inbox signs receipts as ${settings.receipt_key.key_id}${claim.relayKnowsHub ? `, hub mode ${mode}, prefix ${prefix}` : ""}`);
  if (!claim.relayKnowsHub) {
    say(`      WARNING: the relay at ${settings.relay_url} is older and does not take the claim's "hub" field: it has the receipt key, but cannot pull from the hub; update the relay (deploy this version)`);
  }

  let endpoint: EndpointReport | null = null;
  if (mode === "pull") say(`[4/6] endpoint: skipped (--mode pull: the relay fetches from the hub's inbox)`);
  else {
    endpoint = await registerEndpoint(session, settings, claim.hooksUrl);
    if (endpoint) say(`[4/6] endpoint: ${[...endpointLines(endpoint, prefix).slice(0, 1), ...indent(endpointLines(endpoint, prefix).slice(1))].join("\n")}`);
    else {
      mode = "pull";
      say(`[4/6] endpoint: the hub answers 404 to POST ${endpointsPath(id)} — it has no webhook delivery; switching to pull mode`);
      claim = await claimOnRelay(settings, mode, prefix, options.claimToken);
      say(`      relay: claim sent again with hub mode pull${claim.relayKnowsHub ? "" : " (the relay is older: it cannot pull; update it)"}`);
    }
  }

  const policy = await settlePolicy(session, settings, options.open === true);
  say(`[5/6] ${[...policy.lines.slice(0, 1), ...indent(policy.lines.slice(1))].join("\n")}`);

  settings.hub = { mode, prefix, registered_at: Date.now(), ...(endpoint ? { endpoint_state: endpoint.state } : {}) };
  save();
  say(`[6/6] saved ${options.settingsPath} (mode 600): hub mode ${mode}, prefix ${prefix}`);
  const working = claim.relayKnowsHub && (mode === "pull" || endpoint?.state === "active");
  say("");
  say(working ? `Next: clawrelay start (if it is not running), then clawrelay hub status to see receipts reach the hub.` : `Next: fix what is marked above, run clawrelay hub register again, then clawrelay hub status.`);
  return {
    agent_id: id,
    hub_url: hub.url,
    mode,
    prefix,
    main_key_id: settings.key.key_id,
    receipt_key_id: settings.receipt_key.key_id,
    relay_knows_hub: claim.relayKnowsHub,
    endpoint,
    message_policy: policy.policy,
  };
}
