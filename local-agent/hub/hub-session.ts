// The JWT behind the agent's hub calls, taken in an order that never logs another client out. The hub
// keeps ONE current token per agent: a refresh by anyone ends every older one (measured on today's hub
// code). So tokens already held come first — the relay's, the credentials file's, --agentline-token —
// each replaced by the next when the hub answers 401; only when none works is one minted (a bind code's
// install claim, a refresh with the main key, or registration), and the caller hands that one to the
// relay and the credentials file. Used by token-sources.ts; covered by test/node/hub-link.test.ts and
// test/node/hub-bind.test.ts.
import { HubCallError, hubDetail, isAgentId, jwtClaims, refreshHubToken, tokenOfAnswer, verifyHubKey } from "../../protocol/index.ts";
import type { HubClient } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { identityFromPrivateKey } from "../identity.ts";
import type { Identity } from "../identity.ts";
import type { InstallClaim } from "./install-claim.ts";
import { registerAgent } from "./webhook-era/open-registration.ts";

/** A token some holder has (the relay, a credentials file, --agentline-token), and where it came from in words (never the token). */
export interface HeldCandidate {
  token: string;
  /** null only for a --agentline-token that is no JWT with `exp`: it is used, never handed on. */
  expiresAtMs: number | null;
  source: string;
}

export interface HeldToken extends HeldCandidate {
  /** Made by this session (a refresh, a registration, a claim): older tokens of the agent ended with it. */
  minted: boolean;
}

/** A token some holder has, asked for only when the ones before it did not work; null = none. */
export type TokenCandidate = () => Promise<HeldCandidate | null>;

/** register: may refresh, claim or register (hub register); refresh: only refresh (hub status); never: doctor. */
export type MintPolicy = "register" | "refresh" | "never";

export interface TokenPlan {
  agentId: string;
  displayName: string;
  /** The agent's main key, with the key id the settings hold. */
  identity: Identity;
  held: TokenCandidate[];
  /** The hub should know the main key's id already: a refresh can work. */
  keyKnown: boolean;
  mint: MintPolicy;
  /** With a bind code: claim the agent the dashboard made, instead of refreshing or registering. */
  claim?: (identity: Identity) => Promise<InstallClaim>;
  /** The hub knows the main key under another id than the settings hold. */
  onKeyId(keyId: string): void;
  note(line: string): void;
}

export interface HubSession {
  /** Calls with `Authorization: Bearer <JWT>`; on a 401 the next source's token is tried. */
  client: HubClient;
  token(): Promise<HeldToken>;
}

export function hubSession(hub: HubClient, plan: TokenPlan): HubSession {
  let identity = plan.identity;
  let current: HeldToken | null = null;
  let nextCandidate = 0;
  const ends = `it ends every older token of ${plan.agentId}`;

  const nextHeld = async (): Promise<HeldToken | null> => {
    while (nextCandidate < plan.held.length) {
      const candidate = plan.held[nextCandidate++]!;
      const found = await candidate().catch((err: Error) => {
        plan.note(`(${err.message})`);
        return null;
      });
      if (!found) continue;
      const subject = [jwtClaims(found.token).agent_id, jwtClaims(found.token).sub].find(isAgentId);
      if (subject && subject !== plan.agentId) {
        plan.note(`not using the JWT from ${found.source}: it is for ${subject}, not ${plan.agentId}`);
        continue;
      }
      return { ...found, minted: false };
    }
    return null;
  };

  const claimed = async (claim: NonNullable<TokenPlan["claim"]>): Promise<HeldToken | null> => {
    try {
      const answer = await claim(identity);
      if (answer.agentId !== plan.agentId) {
        throw new AgentError("hub_agent_mismatch", `the hub claimed the agent as ${answer.agentId}, but this inbox is ${plan.agentId}: agent.json's key is not the one the hub derived the agent from`);
      }
      if (answer.keyId !== identity.keyId) {
        plan.onKeyId(answer.keyId);
        identity = await identityFromPrivateKey(identity.privateKey, answer.keyId);
      }
      return { ...answer.token, source: `claiming the dashboard's agent with the bind code (the main key is ${answer.keyId})`, minted: true };
    } catch (err) {
      // Claimed on an earlier run: the key is the hub's already, and a refresh gets a token.
      if (!(err instanceof AgentError) || err.code !== "hub_key_registered" || !plan.keyKnown) throw err;
      plan.note(`${err.message}; refreshing a token with the main key instead`);
      return null;
    }
  };

  const mint = async (): Promise<HeldToken> => {
    if (plan.mint === "never") {
      throw new AgentError("hub_no_token", "no hub token that works: neither the relay nor the credentials file holds a valid one (this check never makes one: that would end the other clients' tokens)");
    }
    if (plan.claim && plan.mint === "register") {
      const viaClaim = await claimed(plan.claim);
      if (viaClaim) return viaClaim;
    }
    if (plan.keyKnown) {
      try {
        const refreshed = await refreshHubToken(hub, plan.agentId, identity);
        return { ...refreshed, source: `a token refresh signed by the main key ${identity.keyId} (${ends})`, minted: true };
      } catch (err) {
        // Refused: the key may be unknown there (a new hub, a reset one); no answer at all ends the command.
        if (!(err instanceof HubCallError) || (err.code !== "hub_refused" && err.code !== "hub_unauthorized")) throw err;
        const why = `token refresh with ${identity.keyId} refused (${err.hubStatus} ${err.detail})`;
        if (plan.mint !== "register") throw new AgentError("hub_no_token", `${why}; run clawrelay hub register`);
        plan.note(`${why}; registering the main key instead`);
      }
    } else if (plan.mint !== "register") {
      throw new AgentError("hub_no_token", "no hub token: the main key was never registered here; run clawrelay hub register");
    }
    const registered = await registerAgent(hub, identity, plan.displayName);
    if (registered.agentId !== plan.agentId) {
      throw new AgentError("hub_agent_mismatch", `the hub registered the main key as ${registered.agentId}, but this inbox is ${plan.agentId}: the settings' key is not this agent's root key`);
    }
    if (registered.keyId !== identity.keyId) {
      plan.onKeyId(registered.keyId);
      identity = await identityFromPrivateKey(identity.privateKey, registered.keyId);
    }
    const verified = await verifyHubKey(hub, plan.agentId, registered.keyId, registered.challenge, identity);
    const token = tokenOfAnswer(verified, `POST /registry/agents/${plan.agentId}/verify`, Date.now());
    return { ...token, source: `registering the main key ${registered.keyId} and signing its challenge`, minted: true };
  };

  const ensure = async (): Promise<HeldToken> => (current ??= (await nextHeld()) ?? (await mint()));
  const call: HubClient["call"] = async (method, path, options = {}) => {
    let held = await ensure();
    for (;;) {
      const answer = await hub.call(method, path, { ...options, token: held.token });
      if (answer.status !== 401 || held.minted) return answer;
      plan.note(`the hub refused the JWT from ${held.source} on ${method} ${path} (401 ${hubDetail(answer)}); trying the next source`);
      held = current = (await nextHeld()) ?? (await mint());
    }
  };
  return { client: { url: hub.url, call }, token: ensure };
}
