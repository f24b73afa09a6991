// The agent's hub JWT as the inbox holds it. The hub keeps one current token per agent: a refresh by
// anyone (this inbox, the user's CLI, a skill script) ends every older one. So the inbox refreshes
// only when it must — no token, under an hour left, or refused — keeps the token across evictions
// (sealed with RECEIPT_KEY_SECRET when the operator set it), takes a newer one the agent hands it
// (its credentials file, a registration), and hands its own to the agent, which writes it into the
// credentials file: every client on the machine then uses the same token. A 401 on a token that had
// not expired means another client refreshed: counted in the hub state for `hub status` and `doctor`.
// Times are ms inside; the wire (the hub_token frame, the token routes) and the stored row keep the
// hub's unix seconds for `expires_at`. Owned by the hub link (hub-link.ts); covered by
// test/worker/hub-token.test.ts and test/node/hub-link.e2e.test.ts.
import { HubCallError, RelayError, hubClient, instantMs, jwtClaims, parseHubToken, refreshHubToken } from "../../protocol/index.ts";
import type { HubToken, HubTokenFrame } from "../../protocol/index.ts";
import { openSecret, sealSecret } from "../access/secret-box.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import type { Signer } from "../intake/receipts.ts";

export type HubTokenSource = "refresh" | "owner" | "agent";

/** protocol's one HubToken (its expiry whole seconds, as the hub states them, held in ms), and where it came from. */
export interface HeldHubToken extends HubToken {
  /** Who got it: the inbox's own refresh, the owner's `hub register`, or the connected agent. */
  source: HubTokenSource;
  obtainedAtMs: number;
}

/** The meta row as every version of the relay wrote it: `expires_at` unix seconds, `obtained_at` ms, the token sealed. */
interface StoredHubToken {
  token: string;
  expires_at: number;
  source: HubTokenSource;
  obtained_at: number;
}

/** What the keeper is built with: the store its row lives in, and the inbox's config, signer and sockets. */
export interface HubTokenParts {
  store: InboxStore;
  config: () => InboxConfig;
  signer: () => Promise<Signer>;
  /** RECEIPT_KEY_SECRET: the token is sealed with it at rest, as the receipt key is. */
  sealingSecret: string | undefined;
  /** Sends the token to the connected agent (a hub_token frame). */
  announce: (frame: HubTokenFrame) => void;
}

const META_KEY = "hub_token";
/** Refresh when less than this is left: the hub's tokens live 24 h. */
export const REFRESH_MARGIN_MS = 3600_000;

const wholeSecondsMs = (ms: number) => Math.floor(ms / 1000) * 1000;

export class HubTokenKeeper {
  private readonly parts: HubTokenParts;
  /** In memory for the object's life: undefined until read from storage. */
  private held: HeldHubToken | null | undefined = undefined;
  /** A refresh under way, so two callers never mint two tokens (the second would end the first). */
  private refreshing: Promise<HeldHubToken> | null = null;

  constructor(parts: HubTokenParts) {
    this.parts = parts;
  }

  private sealLabel(): string {
    return `${this.parts.config().agent_id}/hub-token`;
  }

  async current(): Promise<HeldHubToken | null> {
    if (this.held !== undefined) return this.held;
    const stored = this.parts.store.readMeta(META_KEY);
    if (stored === null) return (this.held = null);
    const row = JSON.parse(stored) as StoredHubToken;
    try {
      const token = await openSecret(row.token, this.sealLabel(), this.parts.sealingSecret, "hub token", "hub_token_unavailable");
      this.held = { token, expiresAtMs: row.expires_at * 1000, source: row.source, obtainedAtMs: row.obtained_at };
    } catch {
      // Sealed under a secret the Worker no longer has: as good as none; the next call refreshes.
      this.held = null;
    }
    return this.held;
  }

  private async keep(held: HeldHubToken | null): Promise<void> {
    const secret = this.parts.sealingSecret;
    let row: string | null = null;
    if (held) {
      const token = secret ? await sealSecret(held.token, this.sealLabel(), secret) : held.token;
      row = JSON.stringify({ token, expires_at: held.expiresAtMs / 1000, source: held.source, obtained_at: held.obtainedAtMs } satisfies StoredHubToken);
    }
    this.parts.store.writeMeta(META_KEY, row);
    this.held = held;
  }

  /** Forgets the token (the hub URL changed: a token of another hub means nothing there). */
  async forget(): Promise<void> {
    if ((await this.current()) !== null) await this.keep(null);
  }

  /** POST …/token/refresh signed by the receipt key (an active key of the agent at the hub). */
  refresh(nowMs: number): Promise<HeldHubToken> {
    this.refreshing ??= (async () => {
      try {
        const config = this.parts.config();
        const sign = await this.parts.signer();
        const fresh = await refreshHubToken(hubClient(config.hub_url), config.agent_id, { keyId: config.receipt_key.key_id, sign }, nowMs);
        const held: HeldHubToken = { token: fresh.token, expiresAtMs: wholeSecondsMs(fresh.expiresAtMs), source: "refresh", obtainedAtMs: nowMs };
        await this.keep(held);
        this.parts.announce(tokenFrame(held));
        return held;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** A token good for at least the next hour: the held one, else a refresh (the held one if that fails). */
  async tokenFor(nowMs: number): Promise<string> {
    const held = await this.current();
    if (held && held.expiresAtMs - nowMs > REFRESH_MARGIN_MS) return held.token;
    try {
      return (await this.refresh(nowMs)).token;
    } catch (err) {
      if (held && held.expiresAtMs > nowMs) return held.token;
      throw err;
    }
  }

  /** The hub answered 401 to `token`: if it is the one held, it was ended by another client's refresh. */
  async refused(token: string, nowMs: number): Promise<void> {
    const held = await this.current();
    if (!held || held.token !== token) return;
    if (held.expiresAtMs > nowMs) {
      this.parts.store.updateHubState((state) => (state.token_lost = { count: (state.token_lost?.count ?? 0) + 1, last_at: nowMs }));
    }
    await this.keep(null);
  }

  /**
   * A token offered by the owner or the agent: taken when the inbox has none, or when it expires later
   * than the held one (the hub's tokens are minted with a 24 h life, so later means newer). Returns
   * whether it was taken and what the inbox holds now.
   */
  async offer(offer: HubTokenFrame, source: HubTokenSource, nowMs: number): Promise<{ taken: boolean; held: HeldHubToken | null }> {
    const held = await this.current();
    const offeredExpiresAtMs = offer.expires_at * 1000;
    if (offeredExpiresAtMs <= nowMs) return { taken: false, held };
    if (held && (held.token === offer.token || held.expiresAtMs >= offeredExpiresAtMs)) return { taken: false, held };
    const next: HeldHubToken = { token: offer.token, expiresAtMs: offeredExpiresAtMs, source, obtainedAtMs: nowMs };
    await this.keep(next);
    return { taken: true, held: next };
  }

  /** Calls the hub with the agent's token; a 401 drops the token and the call is made once more with a fresh one. */
  async withToken<T>(nowMs: number, call: (token: string) => Promise<T>): Promise<T> {
    const token = await this.tokenFor(nowMs);
    try {
      return await call(token);
    } catch (err) {
      if (!(err instanceof HubCallError) || err.code !== "hub_unauthorized") throw err;
      await this.refused(token, nowMs);
      return call(await this.tokenFor(nowMs));
    }
  }
}

/** An offered token's expiry at most this far ahead: the hub's tokens live 24 h; a week leaves room for a wrong clock. */
export const HUB_TOKEN_MAX_AHEAD_MS = 7 * 24 * 3600_000;
/** A JWT's `exp` and the hub's `expires_at` are written apart; a minute covers the two being a second or so apart. */
const JWT_EXP_SLACK_MS = 60_000;
const OFFER_FIELDS = ["token", "expires_at"];

/**
 * The body of PUT …/hub/token as a token offer, or a 400 naming what is wrong: a field other than
 * token and expires_at, or an expiry no token can have — past the JWT's own `exp`, or more than a week
 * ahead (a year-9999 expiry would keep a dead token held and never refreshed).
 */
export function readTokenOffer(json: unknown, nowMs: number): HubTokenFrame {
  const shape = 'send {"token": "<the hub JWT>", "expires_at": <unix seconds>}';
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new RelayError(400, "invalid_hub_token", shape);
  const unknown = Object.keys(json).filter((name) => !OFFER_FIELDS.includes(name));
  if (unknown.length > 0) throw new RelayError(400, "invalid_hub_token", `unknown field ${unknown.map((name) => JSON.stringify(name)).join(", ")}: ${shape}`);
  const offer = parseHubToken(json as Record<string, unknown>);
  if (!offer) throw new RelayError(400, "invalid_hub_token", shape);
  const expiresAtMs = offer.expires_at * 1000;
  const latestMs = nowMs + HUB_TOKEN_MAX_AHEAD_MS;
  if (expiresAtMs > latestMs) {
    throw new RelayError(400, "invalid_hub_token_expiry", `expires_at ${offer.expires_at} is more than 7 days ahead (the hub's tokens live 24 h): send the expiry the hub gave with the token`);
  }
  const exp = instantMs(jwtClaims(offer.token).exp);
  if (exp !== null && expiresAtMs > exp + JWT_EXP_SLACK_MS) {
    throw new RelayError(400, "invalid_hub_token_expiry", `expires_at ${offer.expires_at} is later than the token's own exp (${Math.floor(exp / 1000)}): send the expiry the hub gave with the token`);
  }
  return offer;
}

/** What `hub status` may show of the token (never the token itself), in the view's units. */
export function tokenView(held: HeldHubToken | null): { source: HubTokenSource; expires_at: number; obtained_at: number } | null {
  return held ? { source: held.source, expires_at: held.expiresAtMs / 1000, obtained_at: held.obtainedAtMs } : null;
}

export function tokenFrame(held: HeldHubToken): HubTokenFrame {
  return { type: "hub_token", token: held.token, expires_at: held.expiresAtMs / 1000 };
}
