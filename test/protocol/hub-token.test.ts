// protocol/hub-token.ts: one HubToken {token, expiresAtMs} from every way the hub and the files around it
// say when a token ends — unix seconds, ms, ISO dates, a JWT's exp — and never an expiry that would make
// a client refresh at once (a refresh ends every other client's token of the agent).
import { describe, expect, it } from "vitest";
import { HUB_TOKEN_LIFETIME_MS, answeredHubToken, expiresAtSec, hubTokenFromSec, instantMs, jwtClaims, keptHubToken, newerHubToken, toBase64Url, utf8 } from "../../protocol/index.ts";

const jwt = (claims: Record<string, unknown>) => `${toBase64Url(utf8('{"alg":"HS256","typ":"JWT"}'))}.${toBase64Url(utf8(JSON.stringify(claims)))}.c2ln`;
const NOW_MS = Date.parse("2026-12-01T12:00:00Z");

describe("instantMs", () => {
  it("reads seconds, ms, digit strings and ISO dates; nothing else", () => {
    expect([1_900_000_000, 1_900_000_000_000, "1900000000", "2030-03-17T17:46:40.000Z"].map(instantMs)).toEqual(Array(4).fill(1_900_000_000_000));
    expect([null, undefined, 0, -5, Number.NaN, "", "soon", {}].map(instantMs)).toEqual(Array(8).fill(null));
  });
});

describe("jwtClaims", () => {
  it("reads a JWT's claims without checking it; anything else has none", () => {
    expect(jwtClaims(jwt({ agent_id: "ag_ff73a0647bbc", exp: 1_900_000_000 }))).toEqual({ agent_id: "ag_ff73a0647bbc", exp: 1_900_000_000 });
    for (const token of ["not-a-jwt", "a.b.c", `x.${toBase64Url(utf8("[1]"))}.y`, `x.${toBase64Url(utf8("{"))}.y`]) expect(jwtClaims(token)).toEqual({});
  });
});

describe("answeredHubToken (a hub's answer)", () => {
  it("takes the answer's expires_at in whole seconds, else the JWT's exp, else the hub's 24 h", () => {
    const token = jwt({ exp: 1_900_000_000 });
    expect(answeredHubToken(token, 1_890_000_000, NOW_MS)).toEqual({ token, expiresAtMs: 1_890_000_000_000 });
    expect(answeredHubToken(token, "2030-01-01T00:00:00.750Z", NOW_MS).expiresAtMs).toBe(Date.parse("2030-01-01T00:00:00Z"));
    expect(answeredHubToken(token, undefined, NOW_MS).expiresAtMs).toBe(1_900_000_000_000);
    expect(answeredHubToken("opaque", null, NOW_MS).expiresAtMs).toBe(NOW_MS + HUB_TOKEN_LIFETIME_MS);
  });

  it("never an expiry at or before now: that would refresh at once and end every other client's token", () => {
    const pastExp = jwt({ exp: NOW_MS / 1000 - 60 });
    expect(answeredHubToken(pastExp, NOW_MS / 1000 - 1, NOW_MS).expiresAtMs).toBe(NOW_MS + HUB_TOKEN_LIFETIME_MS);
    expect(answeredHubToken(pastExp, NOW_MS / 1000, NOW_MS).expiresAtMs).toBe(NOW_MS + HUB_TOKEN_LIFETIME_MS);
  });
});

describe("keptHubToken (a credentials file, a token the user gave)", () => {
  it("the kept expiry in any unit, else the JWT's exp; none when its end cannot be told or there is no token", () => {
    expect(keptHubToken("t", 1_900_000_000)).toEqual({ token: "t", expiresAtMs: 1_900_000_000_000 });
    expect(keptHubToken("t", "2030-03-17T17:46:40.000Z")).toEqual({ token: "t", expiresAtMs: 1_900_000_000_000 });
    expect(keptHubToken(jwt({ exp: 1_900_000_000 }), undefined)?.expiresAtMs).toBe(1_900_000_000_000);
    // Its age is unknown: no life is assumed for it.
    expect(keptHubToken("opaque", undefined)).toBeNull();
    expect([keptHubToken("", 1_900_000_000), keptHubToken(null, 1_900_000_000), keptHubToken(42, 1_900_000_000)]).toEqual([null, null, null]);
    // A past expiry is kept as it is: the caller says the token is stale.
    expect(keptHubToken("t", 1_000_000_000)?.expiresAtMs).toBe(1_000_000_000_000);
  });
});

describe("the wire's seconds", () => {
  it("to and from the hub_token frame's expires_at; the newer of two expires later", () => {
    const token = hubTokenFromSec("t", 1_900_000_000);
    expect(token).toEqual({ token: "t", expiresAtMs: 1_900_000_000_000 });
    expect(expiresAtSec(token)).toBe(1_900_000_000);
    expect(expiresAtSec({ token: "t", expiresAtMs: 1_900_000_000_999 })).toBe(1_900_000_000);
    const later = hubTokenFromSec("u", 1_900_000_001);
    expect([newerHubToken(token, later), newerHubToken(later, token), newerHubToken(null, token), newerHubToken(token, null), newerHubToken(null, null)]).toEqual([later, later, token, token, null]);
  });
});
