// Where `hub register`, `hub status` and `doctor` get the agent's hub token, in the one order that logs
// no other client out (hub-session.ts says why): (a) the token the relay holds, when it has more than
// five minutes left; (b) the linked credentials file's (or the Agentline file of this agent), when valid
// and for the same hub; (c) --agentline-token; (d) only then one minted by the session. Covered by
// test/node/hub-link.test.ts and test/node/hub-bind.test.ts.
import { existsSync } from "node:fs";
import { defaultKeyIdFor, keptHubToken } from "../../protocol/index.ts";
import type { HubToken } from "../../protocol/index.ts";
import { settingsIdentity } from "../identity.ts";
import type { AgentSettings } from "../settings.ts";
import { agentlineDir, credentialsFileOf, readAgentlineFile } from "./agentline-credentials.ts";
import { agentHubClient } from "./hub-client.ts";
import { hubSession } from "./hub-session.ts";
import type { HubSession, MintPolicy, TokenCandidate } from "./hub-session.ts";
import { claimInstall } from "./install-claim.ts";
import type { BindCode } from "./install-claim.ts";
import { readLinkedFile, sameHub, tokenForHub } from "./linked-credentials.ts";
import { relayHubToken } from "./relay-hub.ts";
import type { RelayHubView } from "./relay-hub.ts";

/** The relay's token is used only with this much left: a shorter one is about to be refreshed by the relay itself. */
export const RELAY_TOKEN_MARGIN_MS = 5 * 60_000;
/** A file's token is used only with this much left (BotCord's clients refresh inside the last minute). */
const FILE_TOKEN_MARGIN_MS = 60_000;

export interface TokenSourceOptions {
  /** --agentline-token. */
  agentlineToken?: string;
  /** Where ~/.agentline is (tests); default the user's home. */
  agentlineHome?: string;
  /** --bind-code and --bind-nonce: mint by claiming the dashboard's agent. */
  bind?: BindCode;
  mint: MintPolicy;
  /** The relay's view of the link (asked once by the caller); null when unavailable. */
  relayView(): Promise<RelayHubView | null>;
  onKeyId(keyId: string): void;
  note(line: string): void;
}

const RELAY_SOURCE: Record<string, string> = { refresh: "its own refresh", owner: "hub register", agent: "the agent (a credentials file)" };

function relayCandidate(settings: AgentSettings, options: TokenSourceOptions): TokenCandidate {
  return async () => {
    const view = await options.relayView();
    if (!view?.token || !view.hub_url || !sameHub(view.hub_url, settings.hub_url)) return null;
    if (view.token.expires_at * 1000 - Date.now() <= RELAY_TOKEN_MARGIN_MS) {
      options.note(`the relay's token expires at ${new Date(view.token.expires_at * 1000).toISOString()}, too soon to use; the relay refreshes it itself`);
      return null;
    }
    const held = await relayHubToken(settings);
    return held ? { token: held.token, expiresAtMs: held.expiresAtMs, source: `the relay's token (got by ${RELAY_SOURCE[held.source] ?? held.source})` } : null;
  };
}

/** The linked file first, then the Agentline file of this agent (read before linking existed). */
function fileCandidates(settings: AgentSettings, options: TokenSourceOptions): TokenCandidate[] {
  const link = settings.hub_credentials;
  const agentline = credentialsFileOf(options.agentlineHome ?? agentlineDir(), settings.agent_id);
  const usable = (path: string, token: HubToken | null) => (token && token.expiresAtMs - Date.now() > FILE_TOKEN_MARGIN_MS ? { ...token, source: path } : null);
  const candidates: TokenCandidate[] = [];
  if (link) {
    candidates.push(async () => {
      if (!existsSync(link.path)) throw new Error(`the linked credentials file ${link.path} is gone`);
      return usable(link.path, tokenForHub(readLinkedFile(link), settings.hub_url));
    });
  }
  if (link?.path !== agentline) {
    candidates.push(async () => {
      if (!existsSync(agentline)) return null;
      const read = readAgentlineFile(agentline);
      if (read.hubUrl && !sameHub(read.hubUrl, settings.hub_url)) return null;
      return usable(agentline, read.token);
    });
  }
  return candidates;
}

export async function sessionFor(settings: AgentSettings, options: TokenSourceOptions): Promise<HubSession> {
  const hub = agentHubClient(settings.hub_url);
  const supplied: TokenCandidate = async () =>
    options.agentlineToken ? { token: options.agentlineToken, expiresAtMs: keptHubToken(options.agentlineToken, null)?.expiresAtMs ?? null, source: "--agentline-token" } : null;
  const bind = options.bind;
  return hubSession(hub, {
    agentId: settings.agent_id,
    displayName: settings.display_name ?? settings.agent_id,
    identity: await settingsIdentity(settings),
    held: [relayCandidate(settings, options), ...fileCandidates(settings, options), supplied],
    // A key id that is not our own default came from a hub (this one, or an imported identity).
    keyKnown: settings.hub !== undefined || settings.key.key_id !== (await defaultKeyIdFor(settings.key.public_key)),
    mint: options.mint,
    ...(bind ? { claim: (identity) => claimInstall(hub, bind, identity) } : {}),
    onKeyId: options.onKeyId,
    note: options.note,
  });
}
