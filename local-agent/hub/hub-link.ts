// `clawrelay hub register`: make the hub and the relay agree about this agent — a hub token that logs no
// other client out (token-sources.ts), or the dashboard's agent claimed with a bind code; the receipt key
// as a second key of the agent at the hub (under the id the hub assigns); the relay told that id, the
// hub mode and prefix; the webhook endpoint where the hub still pushes; the token shared with the relay
// and the credentials file; the message policy. Imported by cli.ts; covered by
// test/node/hub-link.test.ts and test/node/hub-bind.test.ts. Never prints the JWT, private keys or the
// webhook token.
import { addHubKey, isHubPrefix, lookupHubKey, verifyHubKey } from "../../protocol/index.ts";
import type { HubClient, HubPrefix } from "../../protocol/index.ts";
import { identityFromPrivateKey, newIdentity } from "../identity.ts";
import { loadSettings, saveSettings } from "../settings.ts";
import type { AgentSettings, HubMode } from "../settings.ts";
import { agentHubClient, when } from "./hub-client.ts";
import { settlePolicy } from "./hub-policy.ts";
import type { HubSession } from "./hub-session.ts";
import { sameHub } from "./linked-credentials.ts";
import { claimOnRelay, relayHubView } from "./relay-hub.ts";
import type { RelayHubView } from "./relay-hub.ts";
import { shareToken } from "./token-handoff.ts";
import { sessionFor } from "./token-sources.ts";
import { endpointLines, registerEndpoint } from "./webhook-era/hub-endpoint.ts";
import type { EndpointReport } from "./webhook-era/hub-endpoint.ts";

export interface HubLinkOptions {
  settingsPath: string;
  /** --agentline-token: a hub JWT to try after the relay's and the credentials file's. */
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
  /** --bind-code and --bind-nonce from the hub's dashboard: claim the agent the owner made there. */
  bind?: { code: string; nonce: string };
}

export interface HubRegisterResult {
  agent_id: string;
  hub_url: string;
  mode: HubMode;
  /** The prefix the relay uses now, and where it came from. */
  prefix: HubPrefix;
  prefix_source: string;
  main_key_id: string;
  receipt_key_id: string;
  /** The relay accepted the claim's `hub` field (an older relay does not know it). */
  relay_knows_hub: boolean;
  endpoint: EndpointReport | null;
  token: { source: string; minted: boolean; relay_holds_it: boolean; file_written: boolean };
  message_policy: string | null;
}

const indent = (lines: string[]) => lines.map((line) => `      ${line}`);
const block = (lines: string[]) => [...lines.slice(0, 1), ...indent(lines.slice(1))].join("\n");

/** Step 2: the receipt key as an active key of the agent, under the id the hub assigned. */
async function ensureReceiptKey(hub: HubClient, session: HubSession, settings: AgentSettings, save: () => void): Promise<string> {
  const id = settings.agent_id;
  let receipt = await identityFromPrivateKey(settings.receipt_key.private_key, settings.receipt_key.key_id);
  const known = await lookupHubKey(hub, id, receipt.keyId);
  if (known?.pubkey === receipt.publicKey && known.state === "active") return `${receipt.keyId} is already an active key of ${id} at the hub (reused)`;
  let note = "";
  if (known?.pubkey === receipt.publicKey && known.state === "revoked") {
    // A revoked key never becomes active again: hand the relay a new one.
    receipt = await newIdentity();
    note = ` (the old receipt key ${settings.receipt_key.key_id} was revoked at the hub, so a new one was made)`;
  }
  const added = await addHubKey(session.client, id, receipt.publicKey);
  await verifyHubKey(hub, id, added.keyId, added.challenge, await identityFromPrivateKey(receipt.privateKey, added.keyId));
  settings.receipt_key = { key_id: added.keyId, private_key: receipt.privateKey, public_key: receipt.publicKey };
  save();
  return `added as ${added.keyId} (the hub's id), its challenge signed by the receipt key: active; saved in the settings${note}`;
}

/** Pull without trying webhooks: a bind code or a BotCord identity means today's hub, which pushes nothing. */
function pullReason(settings: AgentSettings, options: HubRegisterOptions): string | null {
  if (options.mode === "webhook") return null;
  if (options.mode === "pull") return "--mode pull";
  if (options.bind) return "--bind-code: today's hub pushes nothing";
  if (settings.hub_credentials?.format === "botcord") return "a BotCord identity: today's hub pushes nothing";
  return null;
}

/** The prefix the relay settled on (after the hub's probes, if any), and where it came from. */
function settledPrefix(view: RelayHubView | null, chosen: HubPrefix | null, mode: HubMode): { prefix: HubPrefix; source: string } {
  if (view && isHubPrefix(view.prefix)) return { prefix: view.prefix, source: view.prefix_source ?? "as the relay reports it" };
  if (chosen) return { prefix: chosen, source: "set" };
  return { prefix: mode === "pull" ? "botcord" : "agentgram", source: "the relay did not say (an older relay): assumed" };
}

export async function registerWithHub(options: HubRegisterOptions): Promise<HubRegisterResult> {
  const say = options.say ?? (() => {});
  const settings = loadSettings(options.settingsPath);
  const save = () => saveSettings(options.settingsPath, settings);
  const id = settings.agent_id;
  const toPull = pullReason(settings, options);
  let mode: HubMode = toPull ? "pull" : (options.mode ?? "webhook");
  // A prefix the user set once is kept; otherwise the relay learns it (webhook) or uses botcord (pull).
  const chosen: HubPrefix | null = options.prefix ?? (settings.hub?.prefix_source === "set" ? settings.hub.prefix : null);
  const hub = agentHubClient(settings.hub_url);
  const prefixWords = chosen ?? (mode === "pull" ? "the relay's default for pulling (botcord)" : "learned from the hub's probes");
  say(`Registering ${id} with the hub ${hub.url} (mode ${mode}, prefix ${prefixWords}); relay ${settings.relay_url}`);

  const oldKeyId = settings.key.key_id;
  let view: Promise<RelayHubView | null> | null = null;
  const relayViewOnce = () => (view ??= relayHubView(settings).catch(() => null));
  const session = await sessionFor(settings, {
    ...(options.agentlineToken ? { agentlineToken: options.agentlineToken } : {}),
    ...(options.agentlineHome ? { agentlineHome: options.agentlineHome } : {}),
    ...(options.bind ? { bind: options.bind } : {}),
    mint: "register",
    relayView: relayViewOnce,
    onKeyId: (keyId) => {
      settings.key.key_id = keyId;
      save();
    },
    note: (line) => say(`      ${line}`),
  });
  // History checks that the token is the agent's CURRENT one (a stale one answers 401: the next is tried).
  await session.client.call("GET", "/hub/history?limit=1");
  let token = await session.token();
  say(`[1/7] hub token: from ${token.source}; valid until ${when(token.expiresAtMs)}`);
  if (options.bind && !token.source.startsWith("claiming")) say(`      the bind code was not used: ${id} is at the hub already`);
  if (settings.key.key_id !== oldKeyId) say(`      the hub knows the main key as ${settings.key.key_id} (settings had ${oldKeyId}); saved — envelopes are signed with it`);

  say(`[2/7] receipt key: ${await ensureReceiptKey(hub, session, settings, save)}`);

  // The relay gets the token BEFORE it is told to pull: a pulling inbox without a token refreshes its
  // own at once, which would end this one. A claim that changes its hub makes it forget any token, so
  // then the hub is set first (mode off), the token handed over, and the mode claimed after.
  const relayHub = (await relayViewOnce())?.hub_url;
  if (!relayHub || !sameHub(relayHub, settings.hub_url)) await claimOnRelay(settings, "off", chosen, options.claimToken);
  const handed = await shareToken(settings, await session.token(), { file: false });
  let claim = await claimOnRelay(settings, mode, chosen, options.claimToken);
  save();
  say(`[3/7] ${block([`relay: claim accepted — the inbox signs receipts as ${settings.receipt_key.key_id}${claim.relayKnowsHub ? `, hub mode ${mode}` : ""}`, ...handed.lines])}`);
  if (!claim.relayKnowsHub) {
    say(`      WARNING: the relay at ${settings.relay_url} is older and does not take the claim's "hub" field: it has the receipt key, but cannot pull from the hub; update the relay (deploy this version)`);
  }

  let endpoint: EndpointReport | null = null;
  let step4: string[];
  if (toPull) step4 = [`endpoint: skipped (${toPull}; the relay pulls from the hub's inbox)`];
  else {
    const outcome = await registerEndpoint(session.client, settings, claim.hooksUrl);
    endpoint = outcome.endpoint;
    if ("noWebhooks" in outcome) {
      mode = "pull";
      claim = await claimOnRelay(settings, mode, chosen, options.claimToken);
      step4 = [`endpoint: ${outcome.noWebhooks}; switching to pull mode`, `relay: claim sent again with hub mode pull${claim.relayKnowsHub ? "" : " (the relay is older: it cannot pull; update it)"}`];
    } else step4 = [];
  }
  // Read after the probes: the prefix the relay learned from them is the one the gateway will see.
  const settled = settledPrefix(await relayHubView(settings).catch(() => null), chosen, mode);
  if (endpoint && mode === "webhook") step4 = [`endpoint: ${endpointLines(endpoint, settled.prefix)[0]}`, ...endpointLines(endpoint, settled.prefix).slice(1)];
  say(`[4/7] ${block([...step4, `prefix: ${settled.prefix}, ${settled.source}`])}`);

  // Again, in case a call since was refused and the session moved on to another token.
  token = await session.token();
  const shared = await shareToken(settings, token);
  say(`[5/7] ${block(["token shared (one token per agent: a refresh by any client ends the others'):", ...shared.lines])}`);

  const policy = await settlePolicy(session, settings, options.open === true);
  say(`[6/7] ${block(policy.lines)}`);

  settings.hub = { mode, prefix: settled.prefix, prefix_source: settled.source, registered_at: Date.now(), ...(endpoint && mode === "webhook" ? { endpoint_state: endpoint.state } : {}) };
  save();
  say(`[7/7] saved ${options.settingsPath} (mode 600): hub mode ${mode}, prefix ${settled.prefix}`);
  const working = claim.relayKnowsHub && (mode === "pull" || endpoint?.state === "active");
  say("");
  say(working ? `Next: clawrelay start (if it is not running), then clawrelay hub status to see receipts reach the hub.` : `Next: fix what is marked above, run clawrelay hub register again, then clawrelay hub status.`);
  return {
    agent_id: id,
    hub_url: hub.url,
    mode,
    prefix: settled.prefix,
    prefix_source: settled.source,
    main_key_id: settings.key.key_id,
    receipt_key_id: settings.receipt_key.key_id,
    relay_knows_hub: claim.relayKnowsHub,
    endpoint,
    token: { source: token.source, minted: token.minted, relay_holds_it: shared.relay, file_written: shared.file },
    message_policy: policy.policy,
  };
}
