// The hub endpoints the relay calls: key look-up and receipt posting (any hub), and, for an inbox
// linked to its hub, token refresh (hub-token.ts), history (webhook-era/hub-bridge.ts) and the pull
// inbox with its leases and two-phase ack (hub-pull.ts). Every answer is read as the relay reads a
// request (protocol/strict-json.ts: UTF-8, no duplicate key, no lone surrogate, bounded depth); a bad
// answer is a HubCallError (key_lookup_failed for a key), never a 500, and a bad record in a page of
// records is set aside with its reason (hub-page.ts) without holding up the others.
// Covered by test/worker/hub-pull.test.ts, test/worker/hub-token.test.ts (a token's expiry) and
// test/worker/bad-input/surrogates.test.ts.
import { RelayError, decodeUtf8Text, fromBase64Url, isKeyId, parseStrictJson } from "../../protocol/index.ts";
import type { KeyRecord, KeyState } from "../../protocol/index.ts";
import { HubCallError, readPage } from "./hub-page.ts";
import type { HubRecord } from "./hub-page.ts";

export { HubCallError };
export type { HubRecord };

/** The answer's text, or null when it is not UTF-8. */
async function answerText(response: Response): Promise<string | null> {
  return decodeUtf8Text(new Uint8Array(await response.arrayBuffer()));
}

const HUB_TIMEOUT_MS = 10_000;

/**
 * Runs a hub call (request and body read) under a deadline whose timer ends with the call.
 * AbortSignal.timeout's timer would stay pending for its whole 10 s after a quick answer, and a
 * pending timer keeps the Durable Object from hibernating: billed time after every pull.
 */
async function withDeadline<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${HUB_TIMEOUT_MS / 1000} s`)), HUB_TIMEOUT_MS);
  try {
    return await run(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/** GET {hub}/registry/agents/{agent}/keys/{key}; null on 404, throws key_lookup_failed otherwise. */
export async function fetchHubKey(hubUrl: string, agentId: string, keyId: string): Promise<KeyRecord | null> {
  const url = `${hubUrl}/registry/agents/${encodeURIComponent(agentId)}/keys/${encodeURIComponent(keyId)}`;
  let answer: { status: number; data: Record<string, unknown> | null };
  try {
    answer = await withDeadline(async (signal) => {
      const response = await fetch(url, { signal });
      if (!response.ok) {
        await response.body?.cancel();
        return { status: response.status, data: null };
      }
      return { status: response.status, data: strictObject(await answerText(response)) };
    });
  } catch {
    throw new RelayError(502, "key_lookup_failed", `could not reach the hub at ${hubUrl} to look up key ${keyId}; retry later`);
  }
  if (answer.status === 404) return null;
  const data = answer.data;
  if (!data || typeof data.pubkey !== "string" || !isKeyId(data.key_id)) {
    throw new RelayError(502, "key_lookup_failed", `the hub at ${hubUrl} answered ${answer.status} without a usable key record for ${keyId}; retry later`);
  }
  const state: KeyState = data.state === "active" || data.state === "pending" || data.state === "revoked" ? data.state : "revoked";
  // A hub that names the owner is believed over the path we asked under.
  const owner = typeof data.agent_id === "string" ? data.agent_id : agentId;
  return { key_id: data.key_id, agent_id: owner, pubkey: data.pubkey, state };
}

export interface ReceiptPostResult {
  /** refused: a permanent answer (any 4xx but 408/429): retrying the same receipt cannot help. */
  outcome: "accepted" | "refused" | "retry";
  status: number;
  detail: string;
}

/** The hub's own words for a refusal ({"detail": …}), cut for a status line. */
async function detailOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const detail = (JSON.parse(text) as { detail?: unknown }).detail;
    return (typeof detail === "string" ? detail : JSON.stringify(detail ?? text)).slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}

/** POST {hub}/hub/receipt. */
export async function postHubReceipt(hubUrl: string, receiptJson: string): Promise<ReceiptPostResult> {
  try {
    return await withDeadline(async (signal): Promise<ReceiptPostResult> => {
      const response = await fetch(`${hubUrl}/hub/receipt`, { method: "POST", headers: { "content-type": "application/json" }, body: receiptJson, signal });
      if (response.ok) {
        await response.body?.cancel();
        return { outcome: "accepted", status: response.status, detail: "" };
      }
      const detail = await detailOf(response);
      const permanent = response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429;
      return { outcome: permanent ? "refused" : "retry", status: response.status, detail };
    });
  } catch (err) {
    return { outcome: "retry", status: 0, detail: `hub unreachable: ${(err as Error).message}` };
  }
}

/** A JSON object read strictly, or null (not UTF-8, not strict JSON, not an object). */
function strictObject(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const value = parseStrictJson(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A 2xx answer's text; anything else a HubCallError naming the call. */
async function hubText(url: string, init: RequestInit, what: string): Promise<string> {
  let answer: { status: number; text: string | null; detail: string };
  try {
    answer = await withDeadline(async (signal) => {
      const response = await fetch(url, { ...init, signal });
      if (!response.ok) return { status: response.status, text: null, detail: await detailOf(response) };
      return { status: response.status, text: await answerText(response), detail: "" };
    });
  } catch (err) {
    throw new HubCallError(0, `${what}: hub unreachable (${(err as Error).message})`);
  }
  if (answer.status < 200 || answer.status > 299) throw new HubCallError(answer.status, `${what}: hub answered ${answer.status} ${answer.detail}`);
  if (answer.text === null) throw new HubCallError(502, `${what}: hub answered ${answer.status} with a body that is not UTF-8 text`);
  return answer.text;
}

async function hubJson(url: string, init: RequestInit, what: string): Promise<Record<string, unknown>> {
  const text = await hubText(url, init, what);
  let body: unknown;
  try {
    body = parseStrictJson(text);
  } catch (err) {
    throw new HubCallError(502, `${what}: hub answered with JSON the relay refuses: ${(err as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HubCallError(502, `${what}: hub answered without a JSON object`);
  return body as Record<string, unknown>;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });

/** The hub mints agent tokens for 24 h (its JWT_EXPIRE_HOURS default). */
export const HUB_TOKEN_LIFE_MS = 24 * 3600_000;

/** The `exp` claim (unix seconds) of a JWT, in ms; null when the token is not a JWT that carries one. */
function jwtExpiryMs(token: string): number | null {
  const payload = fromBase64Url(token.split(".")[1] ?? "");
  if (!payload) return null;
  try {
    const exp = (JSON.parse(new TextDecoder().decode(payload)) as { exp?: unknown }).exp;
    return typeof exp === "number" && Number.isFinite(exp) && exp > 0 ? exp * 1000 : null;
  } catch {
    // Not JSON inside: not a JWT this relay can read a lifetime from.
    return null;
  }
}

/**
 * When a refreshed token expires: the answer's `expires_at` (unix seconds, or ms, or an ISO date), else
 * the JWT's own `exp`, else the hub's 24 h. Never "an hour from now": that is the refresh margin
 * (hub-token.ts), so the relay would refresh on every call and end every other client's token.
 */
export function tokenExpiryMs(expiresAt: unknown, token: string, nowMs: number): number {
  const stated = typeof expiresAt === "number" ? expiresAt * (expiresAt < 1e12 ? 1000 : 1) : typeof expiresAt === "string" ? Date.parse(expiresAt) : NaN;
  if (Number.isFinite(stated) && stated > 0) return stated;
  return jwtExpiryMs(token) ?? nowMs + HUB_TOKEN_LIFE_MS;
}

/** POST /registry/agents/{id}/token/refresh: a JWT for the agent, proven by an active key's signature over a fresh nonce. */
export async function refreshHubToken(hubUrl: string, agentId: string, keyId: string, nonce: string, sig: string): Promise<{ token: string; expiresAtMs: number }> {
  const body = await hubJson(
    `${hubUrl}/registry/agents/${encodeURIComponent(agentId)}/token/refresh`,
    { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ key_id: keyId, nonce, sig }) },
    "token refresh",
  );
  if (typeof body.agent_token !== "string") throw new HubCallError(502, "token refresh: the hub's answer has no agent_token");
  return { token: body.agent_token, expiresAtMs: tokenExpiryMs(body.expires_at, body.agent_token, Date.now()) };
}

/**
 * GET /hub/history: records the agent sent or received. With `after`, the ones after it oldest first;
 * without, the newest first (the hub's order) — returned here oldest first either way.
 */
export async function fetchHubHistory(hubUrl: string, token: string, after: string | null): Promise<{ messages: HubRecord[]; hasMore: boolean }> {
  const query = `limit=100${after ? `&after=${encodeURIComponent(after)}` : ""}`;
  const page = readPage(await hubText(`${hubUrl}/hub/history?${query}`, { headers: bearer(token) }, "history"), "history");
  return after ? page : { messages: page.messages.reverse(), hasMore: false };
}

/** GET /hub/inbox?ack=false: waiting records, leased ("processing", 120 s) until acknowledged. */
export async function pullHubInbox(hubUrl: string, token: string): Promise<{ messages: HubRecord[]; hasMore: boolean }> {
  return readPage(await hubText(`${hubUrl}/hub/inbox?limit=50&timeout=0&ack=false`, { headers: bearer(token) }, "inbox pull"), "inbox pull");
}

/** POST /hub/inbox/lease/renew: keeps records leased to us while we are still storing them. */
export async function renewHubLeases(hubUrl: string, token: string, ids: string[]): Promise<void> {
  await hubJson(`${hubUrl}/hub/inbox/lease/renew`, { method: "POST", headers: bearer(token), body: JSON.stringify({ message_ids: ids }) }, "lease renew");
}

/** POST /hub/inbox/ack: the records are stored here; the hub marks them delivered. */
export async function ackHubInbox(hubUrl: string, token: string, ids: string[]): Promise<void> {
  await hubJson(`${hubUrl}/hub/inbox/ack`, { method: "POST", headers: bearer(token), body: JSON.stringify({ message_ids: ids }) }, "inbox ack");
}
