// HTTP calls the local agent makes to the Agentline hub (docs/hub-setup.md): registration and its
// challenge, JWT refresh, the agent's keys, the webhook endpoint and the message policy. Used by
// hub-session.ts, hub-link.ts and the steps beside it; covered by test/node/hub-link.test.ts and
// test/node/hub-bind.test.ts. The JWT travels only in the Authorization header: no error text here
// contains it.
import { decodeUtf8, fromBase64, isAgentId, isKeyId, randomBytes, toBase64 } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { identityFromPrivateKey } from "../identity.ts";
import type { Identity } from "../identity.ts";

export interface HubAnswer {
  status: number;
  body: Record<string, unknown>;
  /** Response headers, names in lower case (the endpoint routes' deprecation notice is one). */
  headers: Record<string, string>;
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
    return { status: res.status, body, headers: Object.fromEntries(res.headers) };
  };
  return clientFrom(base, call);
}

export function clientFrom(url: string, call: HubClient["call"]): HubClient {
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

export function tokenOf(body: Record<string, unknown>, what: string): HubToken {
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
  if (answer.status === 404 || answer.status === 405) {
    // Today's hub code has no open registration: an owner makes the agent on the dashboard.
    throw new AgentError(
      "hub_no_open_registration",
      `the hub at ${hub.url} does not register agents itself (POST ${path}: ${answer.status}): create the agent on the hub's dashboard, then run clawrelay hub register --bind-code bd_… --bind-nonce … with the code it shows`,
    );
  }
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

/**
 * The hub says it has no webhook delivery on this answer: today's hub code still takes POST …/endpoints
 * (and probes), but marks it `Deprecation: true` with `Warning: 299 … "Webhook endpoint delivery is
 * deprecated; use /hub/ws + /hub/inbox"` and pushes nothing.
 */
export function webhooksDeprecated(answer: HubAnswer): string | null {
  const warning = answer.headers.warning;
  if (warning && /^\s*299\b/.test(warning)) return `Warning: ${warning}`;
  const deprecation = answer.headers.deprecation;
  if (deprecation && deprecation.trim().toLowerCase() !== "false") return `Deprecation: ${deprecation}`;
  return null;
}

export const endpointsPath = (agentId: string, rest = "") => agentPath(agentId, `/endpoints${rest}`);
export const policyPath = (agentId: string) => agentPath(agentId, "/policy");
export const historyPath = "/hub/history";

/** An instant for a status line: ISO, or "unknown". */
export const when = (ms: number | null) => (ms === null ? "unknown" : new Date(ms).toISOString());
