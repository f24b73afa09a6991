// The agent's hub JWT as the inbox holds it. The hub keeps one current token per agent: a refresh by
// anyone (this inbox, the user's CLI, a skill script) ends every older one. So the inbox refreshes
// only when it must — no token, under an hour left, or refused — keeps the token across evictions
// (sealed with RECEIPT_KEY_SECRET when the operator set it), takes a newer one the agent hands it
// (its credentials file, a registration), and hands its own to the agent, which writes it into the
// credentials file: every client on the machine then uses the same token. A 401 on a token that had
// not expired means another client refreshed: counted in the hub state for `hub status` and `doctor`.
// Used by hub-bridge.ts, hub-pull.ts, hub-routes.ts and client-frames.ts; covered by
// test/worker/hub-token.test.ts and test/node/hub-link.e2e.test.ts.
import { fromBase64, randomBytes, toBase64 } from "../../protocol/index.ts";
import type { HubTokenFrame } from "../../protocol/index.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { Signer } from "../intake/receipts.ts";
import { HubCallError, refreshHubToken } from "./hub-client.ts";

export type HubTokenSource = "refresh" | "owner" | "agent";

export interface HeldHubToken {
  token: string;
  /** Unix seconds, as the hub says it. */
  expires_at: number;
  /** Who got it: the inbox's own refresh, the owner's `hub register`, or the connected agent. */
  source: HubTokenSource;
  obtained_at: number;
}

export interface TokenHost {
  readonly store: InboxStore;
  requireConfig(): InboxConfig;
  signer(): Promise<Signer>;
  /** In memory for the object's life: undefined until loaded from storage. */
  hubToken: HeldHubToken | null | undefined;
  /** A refresh under way, so two callers never mint two tokens (the second would end the first). */
  tokenRefresh: Promise<HeldHubToken> | null;
  sealHubToken(plain: string): Promise<string>;
  openHubToken(stored: string): Promise<string>;
  /** Sends the token to the connected agent (a hub_token frame). */
  announceHubToken(held: HeldHubToken): void;
}

const META_KEY = "hub_token";
/** Refresh when less than this is left: the hub's tokens live 24 h. */
export const REFRESH_MARGIN_SEC = 3600;

export async function heldHubToken(host: TokenHost): Promise<HeldHubToken | null> {
  if (host.hubToken !== undefined) return host.hubToken;
  const stored = host.store.readMeta(META_KEY);
  if (stored === null) return (host.hubToken = null);
  const record = JSON.parse(stored) as HeldHubToken;
  try {
    host.hubToken = { ...record, token: await host.openHubToken(record.token) };
  } catch {
    // Sealed under a secret the Worker no longer has: as good as none; the next call refreshes.
    host.hubToken = null;
  }
  return host.hubToken;
}

async function keep(host: TokenHost, held: HeldHubToken | null): Promise<void> {
  host.store.writeMeta(META_KEY, held ? JSON.stringify({ ...held, token: await host.sealHubToken(held.token) }) : null);
  host.hubToken = held;
}

/** Forgets the token (the hub URL changed: a token of another hub means nothing there). */
export async function forgetHubToken(host: TokenHost): Promise<void> {
  if ((await heldHubToken(host)) !== null) await keep(host, null);
}

/** POST …/token/refresh signed by the receipt key (an active key of the agent at the hub). */
export function refreshHubTokenNow(host: TokenHost, nowMs: number): Promise<HeldHubToken> {
  host.tokenRefresh ??= (async () => {
    try {
      const config = host.requireConfig();
      const nonce = toBase64(randomBytes(32));
      const sig = toBase64(await (await host.signer())(fromBase64(nonce)!));
      const fresh = await refreshHubToken(config.hub_url, config.agent_id, config.receipt_key.key_id, nonce, sig);
      const held: HeldHubToken = { token: fresh.token, expires_at: Math.floor(fresh.expiresAt / 1000), source: "refresh", obtained_at: nowMs };
      await keep(host, held);
      host.announceHubToken(held);
      return held;
    } finally {
      host.tokenRefresh = null;
    }
  })();
  return host.tokenRefresh;
}

/** A token good for at least the next hour: the held one, else a refresh (the held one if that fails). */
export async function hubTokenFor(host: TokenHost, nowMs: number): Promise<string> {
  const held = await heldHubToken(host);
  if (held && held.expires_at * 1000 - nowMs > REFRESH_MARGIN_SEC * 1000) return held.token;
  try {
    return (await refreshHubTokenNow(host, nowMs)).token;
  } catch (err) {
    if (held && held.expires_at * 1000 > nowMs) return held.token;
    throw err;
  }
}

/** The hub answered 401 to `token`: if it is the one held, it was ended by another client's refresh. */
export async function hubTokenRefused(host: TokenHost, token: string, nowMs: number): Promise<void> {
  const held = await heldHubToken(host);
  if (!held || held.token !== token) return;
  if (held.expires_at * 1000 > nowMs) {
    host.store.updateHubState((state) => (state.token_lost = { count: (state.token_lost?.count ?? 0) + 1, last_at: nowMs }));
  }
  await keep(host, null);
}

/**
 * A token offered by the owner or the agent: taken when the inbox has none, or when it expires later
 * than the held one (the hub's tokens are minted with a 24 h life, so later means newer). Returns
 * whether it was taken and what the inbox holds now.
 */
export async function offerHubToken(host: TokenHost, offer: HubTokenFrame, source: HubTokenSource, nowMs: number): Promise<{ taken: boolean; held: HeldHubToken | null }> {
  const held = await heldHubToken(host);
  if (offer.expires_at * 1000 <= nowMs) return { taken: false, held };
  if (held && (held.token === offer.token || held.expires_at >= offer.expires_at)) return { taken: false, held };
  const next: HeldHubToken = { token: offer.token, expires_at: offer.expires_at, source, obtained_at: nowMs };
  await keep(host, next);
  return { taken: true, held: next };
}

/** Calls the hub with the agent's token; a 401 drops the token and the call is made once more with a fresh one. */
export async function withHubToken<T>(host: TokenHost, nowMs: number, call: (token: string) => Promise<T>): Promise<T> {
  const token = await hubTokenFor(host, nowMs);
  try {
    return await call(token);
  } catch (err) {
    if (!(err instanceof HubCallError) || err.status !== 401) throw err;
    await hubTokenRefused(host, token, nowMs);
    return call(await hubTokenFor(host, nowMs));
  }
}

/** What `hub status` may show of the token: never the token itself. */
export function tokenView(held: HeldHubToken | null): { source: HubTokenSource; expires_at: number; obtained_at: number } | null {
  return held ? { source: held.source, expires_at: held.expires_at, obtained_at: held.obtained_at } : null;
}

export function tokenFrame(held: HeldHubToken): HubTokenFrame {
  return { type: "hub_token", token: held.token, expires_at: held.expires_at };
}
