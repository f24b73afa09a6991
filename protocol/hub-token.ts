// An agent's hub JWT and when it expires, in one unit (ms since the epoch) everywhere in code. The hub
// and the files around it each say it their own way — the hub's answers `expires_at` in unix seconds (an
// older hub ms, or an ISO date), the relay's hub_token frame `expires_at` in seconds, BotCord's
// credentials file `tokenExpiresAt` in seconds, Agentline's `token_expires_at` in whatever unit the file
// already uses — so each of those is converted where it is read or written, with these readers. An
// answer without a usable expiry is held for the JWT's `exp`, else for the hub's 24 h: never for less,
// since a token that looks about to expire is refreshed at once, and a refresh ends every other client's
// token of the agent. Used by hub-api-registry.ts, worker/hub/ and local-agent/hub/; covered by
// test/protocol/hub-token.test.ts.
import { decodeUtf8, fromBase64Url } from "./encoding.ts";

export interface HubToken {
  token: string;
  expiresAtMs: number;
}

/** The hub mints every token with this life (docs/hub-setup.md; today's hub code, measured). */
export const HUB_TOKEN_LIFETIME_MS = 24 * 3600_000;

/** A hub time (unix seconds, ms, a string of either, or an ISO date) as ms; null when absent or unreadable. */
export function instantMs(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? (value < 1e12 ? value * 1000 : value) : null;
  if (typeof value !== "string" || value === "") return null;
  if (/^\d+$/.test(value)) return instantMs(Number(value));
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
}

/** The claims of a JWT, read without checking it (only the hub can): for its expiry and its agent. */
export function jwtClaims(token: string): Record<string, unknown> {
  const bytes = fromBase64Url(token.split(".")[1] ?? "");
  try {
    const claims: unknown = JSON.parse((bytes && decodeUtf8(bytes)) ?? "null");
    return typeof claims === "object" && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : {};
  } catch {
    // Not a JWT (or not one we can read): it has no claims to go by.
    return {};
  }
}

/**
 * Whole seconds: every holder but an ISO date writes seconds, so a token read back from any of them
 * compares equal to the one written.
 */
const wholeSecondsMs = (ms: number): number => Math.floor(ms / 1000) * 1000;

/** A token a hub answered (a refresh, a verify, a claim), with its `expires_at` as the hub wrote it. */
export function answeredHubToken(token: string, expiresAt: unknown, nowMs: number): HubToken {
  for (const candidate of [instantMs(expiresAt), instantMs(jwtClaims(token).exp)]) {
    if (candidate !== null && candidate > nowMs) return { token, expiresAtMs: wholeSecondsMs(candidate) };
  }
  return { token, expiresAtMs: wholeSecondsMs(nowMs + HUB_TOKEN_LIFETIME_MS) };
}

/**
 * A token some holder kept (a credentials file, a user's --agentline-token), with the expiry it kept in
 * any of the hub's units, else the JWT's `exp`; null when there is no token, or no telling when it ends
 * (its age is unknown, so no life can be assumed for it). A past expiry is kept: the caller says it is
 * stale.
 */
export function keptHubToken(token: unknown, expiresAt: unknown): HubToken | null {
  if (typeof token !== "string" || token === "") return null;
  const expiresAtMs = instantMs(expiresAt) ?? instantMs(jwtClaims(token).exp);
  return expiresAtMs === null ? null : { token, expiresAtMs: wholeSecondsMs(expiresAtMs) };
}

/** A token whose expiry came in unix seconds (the hub_token frame, the relay's token routes). */
export function hubTokenFromSec(token: string, expiresAtSec: number): HubToken {
  return { token, expiresAtMs: expiresAtSec * 1000 };
}

/** The expiry in unix seconds, for the wire and the files that use them. */
export function expiresAtSec(token: HubToken): number {
  return Math.floor(token.expiresAtMs / 1000);
}

/** The newer of two tokens: the hub mints each with the same life, so the later expiry is the newer. */
export function newerHubToken(a: HubToken | null, b: HubToken | null): HubToken | null {
  if (!a) return b;
  if (!b) return a;
  return b.expiresAtMs > a.expiresAtMs ? b : a;
}
