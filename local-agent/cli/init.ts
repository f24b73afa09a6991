// `clawrelay init`: make or import the agent's key, make the receipt key, claim the inbox, save the
// settings (mode 600), and point at `clawrelay hub register` (hub-link.ts) for the hub's side.
import { existsSync } from "node:fs";
import { DEFAULT_HUB_URL } from "../../protocol/index.ts";
import { agentlineDir, chooseCredentialsFile, readAgentlineCredentials } from "../hub/agentline-credentials.ts";
import { AgentError } from "../errors.ts";
import { CLAIM_TOKEN_HEADER } from "../../protocol/index.ts";
import { newIdentity, settingsIdentity } from "../identity.ts";
import type { Identity } from "../identity.ts";
import type { Environment } from "../gateway/openclaw-config.ts";
import { relayErrorText, signedRelayCall } from "../relay/relay-api.ts";
import { loadSettings, saveSettings } from "../settings.ts";
import type { AgentSettings, KeySettings } from "../settings.ts";

export interface InitOptions {
  settingsPath: string;
  env: Environment;
  relay?: string;
  hub?: string;
  name?: string;
  importAgentline?: boolean;
  agentlineId?: string;
  agentlineHome?: string;
  force?: boolean;
  rotateToken?: boolean;
  /** The relay operator's claim token, when the relay admits new inboxes by token. */
  claimToken?: string;
}

export interface InitResult {
  settings: AgentSettings;
  created: boolean;
  hooksUrl: string;
  webhookToken: string | null;
}

function keySettings(identity: Identity): KeySettings {
  return { key_id: identity.keyId, private_key: identity.privateKey, public_key: identity.publicKey };
}

function freshSettings(options: InitOptions): AgentSettings {
  if (!options.relay) throw new AgentError("relay_required", "say which relay to use: clawrelay init --relay https://<your relay>");
  let identity = newIdentity();
  let hub = options.hub ?? options.env.AGENTLINE_HUB ?? null;
  let name = options.name;
  if (options.importAgentline || options.agentlineId) {
    const credentials = readAgentlineCredentials(chooseCredentialsFile(options.agentlineHome ?? agentlineDir(), options.agentlineId));
    identity = credentials.identity;
    hub ??= credentials.hubUrl;
    name ??= credentials.displayName ?? undefined;
  }
  const receipt = newIdentity();
  return {
    relay_url: options.relay.replace(/\/+$/, ""),
    agent_id: identity.agentId,
    ...(name ? { display_name: name } : {}),
    hub_url: hub ?? DEFAULT_HUB_URL,
    key: keySettings(identity),
    receipt_key: keySettings(receipt),
  };
}

export async function runInit(options: InitOptions): Promise<InitResult> {
  const reuse = existsSync(options.settingsPath) && !options.force;
  if (reuse && (options.importAgentline || options.agentlineId)) {
    throw new AgentError("settings_exist", `${options.settingsPath} already holds an identity; add --force to replace it with the imported Agentline one`);
  }
  const settings = reuse ? loadSettings(options.settingsPath) : freshSettings(options);
  if (reuse && options.relay) settings.relay_url = options.relay.replace(/\/+$/, "");
  const identity = settingsIdentity(settings);
  const rotate = options.rotateToken === true || !settings.webhook_token;
  const answer = await signedRelayCall(settings.relay_url, identity, "PUT", `/inbox/${settings.agent_id}`, {
    keys: [{ key_id: settings.key.key_id, pubkey: settings.key.public_key }],
    receipt_key: { key_id: settings.receipt_key.key_id, private_key: settings.receipt_key.private_key },
    hub_url: settings.hub_url,
    rotate_webhook_token: rotate,
  }, options.claimToken ? { [CLAIM_TOKEN_HEADER]: options.claimToken } : {});
  if (answer.status !== 200 && answer.status !== 201) {
    throw new AgentError("claim_failed", `the relay refused to claim ${settings.agent_id}: ${relayErrorText(answer)}`);
  }
  const token = typeof answer.body.webhook_token === "string" ? answer.body.webhook_token : null;
  if (token) settings.webhook_token = token;
  saveSettings(options.settingsPath, settings);
  const urls = answer.body.urls as { hooks: string };
  return { settings, created: answer.status === 201, hooksUrl: urls.hooks, webhookToken: settings.webhook_token ?? null };
}

/** What `init` prints: the public webhook URL, the token, and the one command that links the hub. */
export function initReport(result: InitResult, settingsPath: string): string {
  const { settings } = result;
  return [
    `${result.created ? "Claimed" : "Updated"} inbox ${settings.agent_id} on ${settings.relay_url}`,
    `settings: ${settingsPath} (mode 600)`,
    ``,
    `public webhook URL: ${result.hooksUrl}`,
    `webhook token:      ${result.webhookToken ?? "(unchanged; run init --rotate-token for a new one)"}`,
    ``,
    `Next, link the inbox to its hub (no manual requests with a JWT needed):`,
    `  clawrelay hub register               a hub that posts webhooks (it probes the URL above)`,
    `  clawrelay hub register --mode pull   a hub without webhooks (today's hub code): the inbox pulls every 15 s`,
    `  (a hub without webhooks is also detected: register then switches to pull by itself)`,
    `It signs in to ${settings.hub_url} with the token of your Agentline credentials file while it is valid (the`,
    `hub's JWT, valid 24 h), else with this agent's own key; adds the receipt key as a second key of the agent`,
    `(the hub assigns its id) so the hub accepts the relay's signed receipts; and tells the relay.`,
    `New hub agents are contacts_only: a stranger's first message is refused with 403 NOT_IN_CONTACTS.`,
    `Add --open to take messages from anyone (it sets {"message_policy":"open"} at the hub).`,
  ].join("\n");
}
