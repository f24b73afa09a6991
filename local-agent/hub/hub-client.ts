// HTTP calls the local agent makes to the Agentline hub (docs/hub-setup.md): registration and its
// challenge, JWT refresh, the agent's keys, the webhook endpoint and the message policy. Used by
// hub-link.ts; covered by test/node/hub-link.test.ts. The JWT travels only in the Authorization header:
// no error text here contains it.
import { decodeUtf8, fromBase64, isAgentId, isKeyId, randomBytes, toBase64 } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { identityFromPrivateKey } from "../identity.ts";
import type { Identity } from "../identity.ts";

export interface HubAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface HubClient {
  url: string;
  /** Any answer, 2xx or not; throws only when the hub cannot be reached. */
  call(method: string, path: string, options?: { body?: unknown; token?: string }): Promise<HubAnswer>;
  /** The body of a 2xx answer; anything else is an AgentError naming the call, status and the hub's detail. */
  json(method: string, path: string, options?: { body?: unknown; token?: string }): Promise<Record<string, unknown>>;
}

export interface HubKey {
  key_id: string;
  pubkey: string;
  state: string;
}

export interface HubToken {
  token: string;
  /** ms since the epoch, when known. */
  expiresAt: number | null;
}

/** The hub's own words for a refusal: FastAPI's `detail`, else `{error:{code,message}}`, else the status. */
export function hubDetail(answer: HubAnswer): string {
  const { detail, error } = answer.body;
  if (typeof detail === "string") return detail;
  if (detail !== undefined) return JSON.stringify(detail).slice(0, 300);
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return [code, message].filter((part) => typeof part === "string").join(": ") || JSON.stringify(error).slice(0, 300);
  }
  if (typeof error === "string") return error;
  return typeof answer.body.text === "string" ? answer.body.text : "no detail";
}

export function hubRefusal(method: string, path: string, answer: HubAnswer): AgentError {
  // 401 gets its own code: the caller may get a fresh JWT and try once more.
  const code = answer.status === 401 ? "hub_unauthorized" : "hub_refused";
  return new AgentError(code, `hub refused ${method} ${path}: ${answer.status} ${hubDetail(answer)}`);
}

export function hubClient(hubUrl: string): HubClient {
  const base = hubUrl.replace(/\/+$/, "");
  const call = async (method: string, path: string, options: { body?: unknown; token?: string } = {}): Promise<HubAnswer> => {
    const headers: Record<string, string> = { accept: "application/json" };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw new AgentError("hub_unreachable", `cannot reach the hub at ${base} (${method} ${path}): ${(err as Error).message}`);
    }
    const text = await res.text();
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      body = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
    } catch {
      body = { text: text.slice(0, 200) };
    }
    return { status: res.status, body };
  };
  return clientFrom(base, call);
}

function clientFrom(url: string, call: HubClient["call"]): HubClient {
  return {
    url,
    call,
    json: async (method, path, options) => {
      const answer = await call(method, path, options);
      if (answer.status < 200 || answer.status > 299) throw hubRefusal(method, path, answer);
      return answer.body;
    },
  };
}

/** base64 Ed25519 signature over the base64-DECODED bytes of a hub challenge or nonce. */
export function signChallenge(identity: Identity, challenge: unknown): string {
  const bytes = typeof challenge === "string" ? fromBase64(challenge) : null;
  if (!bytes) throw new AgentError("hub_bad_answer", "the hub's challenge is not standard base64; cannot sign it");
  return toBase64(identity.sign(bytes));
}

function tokenOf(body: Record<string, unknown>, what: string): HubToken {
  const token = body.agent_token ?? body.token;
  if (typeof token !== "string" || token === "") throw new AgentError("hub_bad_answer", `the hub's answer to ${what} carries no agent_token`);
  return { token, expiresAt: instantMs(body.expires_at) };
}

/** A hub time (unix seconds, ms or an ISO date) as ms; null when absent or unreadable. */
export function instantMs(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value < 1e12 ? value * 1000 : value;
  if (typeof value === "string" && value !== "") {
    const parsed = /^\d+$/.test(value) ? instantMs(Number(value)) : Date.parse(value);
    return parsed === null || Number.isNaN(parsed) ? null : parsed;
  }
  return null;
}

const agentPath = (agentId: string, rest = "") => `/registry/agents/${agentId}${rest}`;

/** POST /registry/agents: idempotent per pubkey (same agent and key id, fresh challenge); 409 = id taken. */
export async function registerAgent(hub: HubClient, identity: Identity, displayName: string): Promise<{ agentId: string; keyId: string; challenge: string }> {
  const path = "/registry/agents";
  const answer = await hub.call("POST", path, { body: { pubkey: identity.publicKey, display_name: displayName } });
  if (answer.status === 409) {
    throw new AgentError("hub_agent_taken", `the hub says ${identity.agentId} is already registered with another key (409 ${hubDetail(answer)}); this agent's key cannot take it over`);
  }
  if (answer.status < 200 || answer.status > 299) throw hubRefusal("POST", path, answer);
  const { agent_id, key_id, challenge } = answer.body;
  if (!isAgentId(agent_id) || !isKeyId(key_id) || typeof challenge !== "string") {
    throw new AgentError("hub_bad_answer", `POST ${path} answered without agent_id, key_id and challenge`);
  }
  return { agentId: agent_id, keyId: key_id, challenge };
}

/** POST …/verify with the key that was registered or added; answers a JWT (after registration). */
export async function verifyKey(hub: HubClient, agentId: string, keyId: string, challenge: string, signer: Identity): Promise<Record<string, unknown>> {
  return hub.json("POST", agentPath(agentId, "/verify"), { body: { key_id: keyId, challenge, sig: signChallenge(signer, challenge) } });
}

export async function verifyForToken(hub: HubClient, agentId: string, keyId: string, challenge: string, signer: Identity): Promise<HubToken> {
  return tokenOf(await verifyKey(hub, agentId, keyId, challenge, signer), `POST ${agentPath(agentId, "/verify")}`);
}

/** POST …/token/refresh signed by an active key over a fresh 32-byte nonce; the answer as it came. */
export async function refreshToken(hub: HubClient, agentId: string, signer: Identity): Promise<HubToken | HubAnswer> {
  const nonce = toBase64(randomBytes(32));
  const path = agentPath(agentId, "/token/refresh");
  const answer = await hub.call("POST", path, { body: { key_id: signer.keyId, nonce, sig: signChallenge(signer, nonce) } });
  return answer.status >= 200 && answer.status <= 299 ? tokenOf(answer.body, `POST ${path}`) : answer;
}

/** GET …/keys/{key_id} (public); null when the hub does not know that key id. */
export async function lookupKey(hub: HubClient, agentId: string, keyId: string): Promise<HubKey | null> {
  if (!isKeyId(keyId)) return null;
  const path = agentPath(agentId, `/keys/${keyId}`);
  const answer = await hub.call("GET", path);
  if (answer.status === 404) return null;
  if (answer.status < 200 || answer.status > 299) throw hubRefusal("GET", path, answer);
  const { key_id, pubkey, state } = answer.body;
  return { key_id: typeof key_id === "string" ? key_id : keyId, pubkey: typeof pubkey === "string" ? pubkey : "", state: typeof state === "string" ? state : "unknown" };
}

/** POST …/keys (JWT, so a session's client): the hub assigns the key id; pending until verified. */
export async function addKey(hub: HubClient, agentId: string, pubkey: string): Promise<{ keyId: string; challenge: string }> {
  const path = agentPath(agentId, "/keys");
  const body = await hub.json("POST", path, { body: { pubkey } });
  if (!isKeyId(body.key_id) || typeof body.challenge !== "string") throw new AgentError("hub_bad_answer", `POST ${path} answered without key_id and challenge`);
  return { keyId: body.key_id, challenge: body.challenge };
}

/** The claims of a JWT, read without checking it (only the hub can): for its expiry and its agent. */
function jwtClaims(token: string): Record<string, unknown> {
  const part = token.split(".")[1] ?? "";
  const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
  const bytes = fromBase64(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  try {
    const claims: unknown = JSON.parse((bytes && decodeUtf8(bytes)) ?? "null");
    return typeof claims === "object" && claims !== null ? (claims as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export interface TokenPlan {
  agentId: string;
  displayName: string;
  /** The agent's main key, with the key id the settings hold. */
  identity: Identity;
  /** A JWT from --agentline-token or the Agentline credentials file, and where it came from. */
  supplied: { token: string; source: string } | null;
  /** The hub should know the main key's id already: try a token refresh before registering. */
  keyKnown: boolean;
  /** May register the main key (hub register) or only refresh (hub status, which changes nothing). */
  allowRegister: boolean;
  /** The hub knows the main key under another id than the settings hold. */
  onKeyId(keyId: string): void;
  note(line: string): void;
}

export interface HubSession {
  /** Calls with `Authorization: Bearer <JWT>`; a supplied JWT the hub answers 401 is replaced once. */
  client: HubClient;
  token(): Promise<{ source: string; expiresAt: number | null }>;
}

interface HeldToken extends HubToken {
  source: string;
  own: boolean;
}

/** A JWT for the agent, from what was supplied, else a refresh with the main key, else register+verify. */
export function hubSession(hub: HubClient, plan: TokenPlan): HubSession {
  let identity = plan.identity;
  let current: HeldToken | null = null;
  const own = async (): Promise<HeldToken> => {
    if (plan.keyKnown) {
      const refreshed = await refreshToken(hub, plan.agentId, identity);
      if ("token" in refreshed) return { ...refreshed, source: `a token refresh signed by the main key ${identity.keyId}`, own: true };
      const why = `token refresh with ${identity.keyId} refused (${refreshed.status} ${hubDetail(refreshed)})`;
      if (!plan.allowRegister) throw new AgentError("hub_no_token", `${why}; run clawrelay hub register`);
      plan.note(`${why}; registering the main key instead`);
    } else if (!plan.allowRegister) {
      throw new AgentError("hub_no_token", "no hub token: the main key was never registered here; run clawrelay hub register");
    }
    const registered = await registerAgent(hub, identity, plan.displayName);
    if (registered.agentId !== plan.agentId) {
      throw new AgentError("hub_agent_mismatch", `the hub registered the main key as ${registered.agentId}, but this inbox is ${plan.agentId}: the settings' key is not this agent's root key`);
    }
    if (registered.keyId !== identity.keyId) {
      plan.onKeyId(registered.keyId);
      identity = identityFromPrivateKey(identity.privateKey, registered.keyId);
    }
    const token = await verifyForToken(hub, plan.agentId, registered.keyId, registered.challenge, identity);
    return { ...token, source: `registering the main key ${registered.keyId} and signing its challenge`, own: true };
  };
  const supplied = (): HeldToken | null => {
    if (!plan.supplied) return null;
    const claims = jwtClaims(plan.supplied.token);
    const subject = [claims.agent_id, claims.sub].find(isAgentId);
    if (subject && subject !== plan.agentId) throw new AgentError("hub_token_mismatch", `the JWT from ${plan.supplied.source} is for ${subject}, not ${plan.agentId}`);
    return { token: plan.supplied.token, expiresAt: instantMs(claims.exp), source: plan.supplied.source, own: false };
  };
  const ensure = async (): Promise<HeldToken> => (current ??= supplied() ?? (await own()));
  const call: HubClient["call"] = async (method, path, options = {}) => {
    const first = await ensure();
    const answer = await hub.call(method, path, { ...options, token: first.token });
    if (answer.status !== 401 || first.own) return answer;
    plan.note(`the hub refused the JWT from ${first.source} on ${method} ${path} (401 ${hubDetail(answer)}); getting one with the main key`);
    current = await own();
    return hub.call(method, path, { ...options, token: current.token });
  };
  return {
    client: clientFrom(hub.url, call),
    token: async () => {
      const { source, expiresAt } = await ensure();
      return { source, expiresAt };
    },
  };
}

export const endpointsPath = (agentId: string, rest = "") => agentPath(agentId, `/endpoints${rest}`);
export const policyPath = (agentId: string) => agentPath(agentId, "/policy");
