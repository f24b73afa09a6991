// The relay's side of the hub link, as the owner's hub commands call it (every call signed by the main
// key): the claim that tells the inbox its receipt key and hub mode, the link view (GET /inbox/{id}/hub),
// and the agent's hub token the inbox holds (GET/PUT /inbox/{id}/hub/token; worker/hub/hub-routes.ts).
// Used by hub-link.ts, hub-status.ts, token-sources.ts, token-handoff.ts and doctor/doctor-hub.ts;
// covered by test/node/hub-link.test.ts.
import { CLAIM_TOKEN_HEADER, expiresAtSec, hubTokenFromSec } from "../../protocol/index.ts";
import type { HubLinkMode, HubPrefix, HubToken } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { settingsIdentity } from "../identity.ts";
import { relayErrorText, signedRelayCall } from "../relay/relay-api.ts";
import type { AgentSettings } from "../settings.ts";

type Outcome = { at: unknown; ok: boolean; status?: number; detail?: string };

/** GET /inbox/{id}/hub: what the inbox knows of its hub link, never a secret. */
export interface RelayHubView {
  hub_url?: string;
  mode?: string;
  prefix?: string;
  prefix_source?: string;
  pull_interval_sec?: number;
  receipt_key_id?: string;
  /** The hub token the inbox holds (not the token): who got it, until when (unix seconds), when. */
  token?: { source: string; expires_at: number; obtained_at: number } | null;
  /** How often the hub refused a token the inbox held before it expired: another client refreshed. */
  token_lost?: { count: number; last_at: number } | null;
  last_receipt?: (Outcome & { status: number; msg_id?: string }) | null;
  receipts_refused?: number;
  receipts_pending?: number;
  last_pull?: (Outcome & { count?: number }) | null;
  recent_pulled?: string[];
  next_pull_at?: number | null;
  idle_cost_per_day?: { alarms: number; hub_requests: number; rows_written: number } | null;
  last_bridge?: (Outcome & { acked?: number }) | null;
  bridge_waiting?: number;
}

const hubPath = (settings: AgentSettings, rest = "") => `/inbox/${settings.agent_id}/hub${rest}`;
const codeOf = (body: Record<string, unknown>) => (body.error as { code?: string } | undefined)?.code;

export async function relayHubView(settings: AgentSettings): Promise<RelayHubView> {
  const path = hubPath(settings);
  const answer = await signedRelayCall(settings.relay_url, await settingsIdentity(settings), "GET", path);
  if (answer.status === 200) return answer.body as RelayHubView;
  if (answer.status === 404 && codeOf(answer.body) === "not_found") throw new AgentError("relay_too_old", `the relay at ${settings.relay_url} is older: it has no GET ${path} (deploy this version to see receipts and pulls)`);
  throw new AgentError("relay_refused", `the relay refused GET ${path}: ${relayErrorText(answer)}`);
}

/** The token the inbox holds (its route says expires_at in unix seconds), or null (none yet, or a relay too old to keep one). */
export async function relayHubToken(settings: AgentSettings): Promise<(HubToken & { source: string }) | null> {
  const answer = await signedRelayCall(settings.relay_url, await settingsIdentity(settings), "GET", hubPath(settings, "/token"));
  if (answer.status === 404) return null;
  const { token, expires_at: expiresSec, source } = answer.body;
  if (answer.status !== 200 || typeof token !== "string" || typeof expiresSec !== "number") {
    throw new AgentError("relay_refused", `the relay refused GET ${hubPath(settings, "/token")}: ${relayErrorText(answer)}`);
  }
  return { ...hubTokenFromSec(token, expiresSec), source: typeof source === "string" ? source : "unknown" };
}

/**
 * Offers a token to the inbox: it takes it when it expires later than the one it holds. Answers whether
 * it did, and when the one it holds now expires; null: a relay too old to hold one.
 */
export async function offerRelayHubToken(settings: AgentSettings, token: HubToken): Promise<{ taken: boolean; heldExpiresAtMs: number | null } | null> {
  const path = hubPath(settings, "/token");
  const answer = await signedRelayCall(settings.relay_url, await settingsIdentity(settings), "PUT", path, { token: token.token, expires_at: expiresAtSec(token) });
  if (answer.status === 404 && codeOf(answer.body) === "not_found") return null;
  if (answer.status !== 200) throw new AgentError("relay_refused", `the relay refused PUT ${path}: ${relayErrorText(answer)}`);
  return { taken: answer.body.taken === true, heldExpiresAtMs: typeof answer.body.expires_at === "number" ? answer.body.expires_at * 1000 : null };
}

/** The relay signs receipts under the hub's key id and knows the hub mode and prefix (null: learn it). */
export async function claimOnRelay(settings: AgentSettings, mode: HubLinkMode, prefix: HubPrefix | null, claimToken: string | undefined): Promise<{ hooksUrl: string; relayKnowsHub: boolean }> {
  const base = {
    keys: [{ key_id: settings.key.key_id, pubkey: settings.key.public_key }],
    receipt_key: { key_id: settings.receipt_key.key_id, private_key: settings.receipt_key.private_key },
    hub_url: settings.hub_url,
    // Without a token the hub cannot be given one for the endpoint; ask the relay for a fresh one.
    ...(settings.webhook_token ? {} : { rotate_webhook_token: true }),
  };
  const identity = await settingsIdentity(settings);
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
