// `clawrelay init`: make or import the agent's key (an Agentline or a BotCord identity, whose credentials
// file is then linked: the agent keeps its token on the relay's), make the receipt key, claim the inbox,
// save the settings (mode 600), and point at `clawrelay hub register` (hub-link.ts) for the hub's side.
// Imported by cli.ts and test/support/node/stack.ts; covered by test/node/cli-init.e2e.test.ts.
import { existsSync } from "node:fs";
import { DEFAULT_HUB_URL } from "../../protocol/index.ts";
import { agentlineDir, chooseCredentialsFile, readAgentlineCredentials } from "../hub/agentline-credentials.ts";
import { BOTCORD_DEFAULT_HUB, botcordDir, chooseBotcordFile, readBotcordCredentials } from "../hub/botcord-credentials.ts";
import { AgentError } from "../errors.ts";
import { CLAIM_TOKEN_HEADER } from "../../protocol/index.ts";
import { newIdentity, settingsIdentity } from "../identity.ts";
import type { Identity } from "../identity.ts";
import type { Environment } from "../gateway/openclaw-config.ts";
import { relayErrorText, signedRelayCall } from "../relay/relay-api.ts";
import { loadSettings, saveSettings } from "../settings.ts";
import type { AgentSettings, HubCredentialsLink, KeySettings } from "../settings.ts";

export interface InitOptions {
  settingsPath: string;
  env: Environment;
  relay?: string;
  hub?: string;
  name?: string;
  importAgentline?: boolean;
  agentlineId?: string;
  agentlineHome?: string;
  importBotcord?: boolean;
  botcordId?: string;
  /** Where ~/.botcord is (tests); default the user's home. */
  botcordHome?: string;
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

const importsAgentline = (options: InitOptions) => options.importAgentline === true || options.agentlineId !== undefined;
const importsBotcord = (options: InitOptions) => options.importBotcord === true || options.botcordId !== undefined;

/** The identity to import, its hub and name, and the file to keep in step: BotCord's, Agentline's, or none. */
async function imported(options: InitOptions): Promise<{ identity: Identity; hub: string | null; name: string | null; link: HubCredentialsLink } | null> {
  if (importsBotcord(options)) {
    const credentials = await readBotcordCredentials(chooseBotcordFile(options.botcordHome ?? botcordDir(), options.botcordId ?? options.env.BOTCORD_AGENT_ID));
    // BotCord's own order: its --hub, then $BOTCORD_HUB, then the file's hubUrl.
    const hub = options.hub ?? options.env.BOTCORD_HUB ?? credentials.hubUrl ?? BOTCORD_DEFAULT_HUB;
    return { identity: credentials.identity, hub, name: credentials.displayName, link: { path: credentials.path, format: "botcord" } };
  }
  if (importsAgentline(options)) {
    const credentials = await readAgentlineCredentials(chooseCredentialsFile(options.agentlineHome ?? agentlineDir(), options.agentlineId));
    const hub = options.hub ?? options.env.AGENTLINE_HUB ?? credentials.hubUrl;
    return { identity: credentials.identity, hub, name: credentials.displayName, link: { path: credentials.path, format: "agentline" } };
  }
  return null;
}

async function freshSettings(options: InitOptions): Promise<AgentSettings> {
  if (!options.relay) throw new AgentError("relay_required", "say which relay to use: clawrelay init --relay https://<your relay>");
  const from = await imported(options);
  const identity = from?.identity ?? (await newIdentity());
  const hub = from ? from.hub : (options.hub ?? options.env.AGENTLINE_HUB ?? null);
  const name = options.name ?? from?.name ?? undefined;
  const receipt = await newIdentity();
  return {
    relay_url: options.relay.replace(/\/+$/, ""),
    agent_id: identity.agentId,
    ...(name ? { display_name: name } : {}),
    hub_url: (hub ?? DEFAULT_HUB_URL).replace(/\/+$/, ""),
    key: keySettings(identity),
    receipt_key: keySettings(receipt),
    ...(from ? { hub_credentials: from.link } : {}),
  };
}

export async function runInit(options: InitOptions): Promise<InitResult> {
  const reuse = existsSync(options.settingsPath) && !options.force;
  if (importsAgentline(options) && importsBotcord(options)) {
    throw new AgentError("import_ambiguous", "import one identity: --import-botcord or --import-agentline, not both");
  }
  if (reuse && (importsAgentline(options) || importsBotcord(options))) {
    throw new AgentError("settings_exist", `${options.settingsPath} already holds an identity; add --force to replace it with the imported ${importsBotcord(options) ? "BotCord" : "Agentline"} one`);
  }
  const settings = reuse ? loadSettings(options.settingsPath) : await freshSettings(options);
  if (reuse && options.relay) settings.relay_url = options.relay.replace(/\/+$/, "");
  const identity = await settingsIdentity(settings);
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

/** What `init` prints: the public webhook URL, the token, the command that links the hub, and the gateway's side. */
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
    `  clawrelay hub register                                   an agent the hub already knows (or a hub that still registers agents)`,
    `  clawrelay hub register --bind-code bd_… --bind-nonce …   a new agent made on the hub's dashboard (today's BotCord hub)`,
    `  clawrelay hub register --mode pull                       a hub without webhooks: the inbox pulls (a hub without them is also detected)`,
    `It signs in to ${settings.hub_url} with a token already in use — the relay's, or your ${settings.hub_credentials ? `credentials file's (${settings.hub_credentials.path})` : "Agentline credentials file's"} —`,
    `and only makes a new one when none works (the hub keeps one token per agent: a new one ends the others);`,
    `adds the receipt key as a second key of the agent (the hub assigns its id) so the hub accepts the relay's`,
    `signed receipts; and tells the relay.`,
    `New hub agents are contacts_only: a stranger's first message is refused with 403 NOT_IN_CONTACTS.`,
    `Add --open to take messages from anyone (it sets {"message_policy":"open"} at the hub).`,
    ``,
    `Then the OpenClaw side: hooks on, and the pair of mappings the hub's messages arrive at, in openclaw.json`,
    `(docs/openclaw-setup.md, "The mappings" and "Per-sender sessions"):`,
    `  { match: { path: "agentgram_inbox/agent" }, action: "agent", messageTemplate: "[Agentline] {{message}}", deliver: false },`,
    `  { match: { path: "agentgram_inbox/wake" },  action: "wake",  textTemplate: "[Agentline] {{body}}" },`,
    `(the same pair on botcord_inbox/… for a BotCord hub). Then run the agent: inside the gateway as its plugin`,
    `(openclaw plugins install clawrelay --accept-capabilities), or beside it (clawrelay start).`,
    `clawrelay doctor checks both sides.`,
  ].join("\n");
}
