// Verifies the x-clawrelay-* signed-request headers (protocol/signed-request.ts) on claim and poll,
// and requireOwner() for the owner's routes (queue-routes.ts, hub-routes.ts); requireOwnerJson() for those
// whose body is JSON (source-routes.ts, a2a-routes.ts, hub-routes.ts).
import { parseJsonBody, readBodyCapped } from "../intake/request-body.ts";
import { keyMayActFor } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import {
  REQUEST_HEADERS,
  RelayError,
  TIMESTAMP_WINDOW_SEC,
  fromBase64,
  parsePublicKey,
  requestSigningInput,
  verifyWebCrypto,
} from "../../protocol/index.ts";

export interface VerifiedRequest {
  publicKey: string;
  nonce: string;
  timestamp: number;
}

const unauthorized = (code: string, message: string) => new RelayError(401, code, message);

export async function verifySignedRequest(request: Request, body: Uint8Array, nowSec: number): Promise<VerifiedRequest> {
  const h = request.headers;
  const publicKey = h.get(REQUEST_HEADERS.key);
  const timestampText = h.get(REQUEST_HEADERS.timestamp);
  const nonce = h.get(REQUEST_HEADERS.nonce);
  const signatureText = h.get(REQUEST_HEADERS.signature);
  if (!publicKey || !timestampText || !nonce || !signatureText) {
    throw unauthorized(
      "missing_request_signature",
      `sign this request with the agent's key: send ${Object.values(REQUEST_HEADERS).join(", ")} (see docs/protocol.md, "Signed requests")`,
    );
  }
  const raw = parsePublicKey(publicKey);
  if (!raw) throw unauthorized("invalid_request_signature", `${REQUEST_HEADERS.key} must be "ed25519:<base64 of 32 bytes>"`);
  const timestamp = Number(timestampText);
  if (!Number.isSafeInteger(timestamp) || Math.abs(nowSec - timestamp) > TIMESTAMP_WINDOW_SEC) {
    throw unauthorized("timestamp_out_of_range", `${REQUEST_HEADERS.timestamp} must be unix seconds within ${TIMESTAMP_WINDOW_SEC}s of the relay's clock (${nowSec})`);
  }
  if (!/^[A-Za-z0-9_-]{16,128}$/.test(nonce)) {
    throw unauthorized("invalid_request_signature", `${REQUEST_HEADERS.nonce} must be 16..128 characters of [A-Za-z0-9_-]`);
  }
  const url = new URL(request.url);
  const input = await requestSigningInput({ method: request.method, pathWithQuery: url.pathname + url.search, timestamp, nonce, body });
  const signature = fromBase64(signatureText);
  if (!signature || !(await verifyWebCrypto(raw, input, signature))) {
    throw unauthorized("invalid_request_signature", "the request signature does not verify for this method, path, timestamp, nonce and body");
  }
  return { publicKey, nonce, timestamp };
}

/** What an owner-only route needs of its inbox. */
export interface OwnedInbox {
  readonly store: InboxStore;
  requireConfig(): InboxConfig;
  ensureAlarm(at: number): Promise<void>;
}

/**
 * A request signed by a key of the inbox (over `body`, empty unless given); with `spendNonce` its nonce
 * is single-use, so a captured request that changes something cannot be played again.
 */
export async function requireOwner(host: OwnedInbox, request: Request, options: { spendNonce: boolean; body?: Uint8Array }): Promise<InboxConfig> {
  const config = host.requireConfig();
  const signed = await verifySignedRequest(request, options.body ?? new Uint8Array(0), Math.floor(Date.now() / 1000));
  if (!(await keyMayActFor(config, config.agent_id, signed.publicKey))) {
    throw new RelayError(403, "key_not_authorised", `${signed.publicKey} is not a key of this inbox`);
  }
  if (options.spendNonce) {
    const until = (signed.timestamp + 2 * TIMESTAMP_WINDOW_SEC) * 1000;
    if (!host.store.useNonce(signed.nonce, until)) {
      throw new RelayError(409, "replayed_request", "this signed request was already used; sign it again with a fresh nonce");
    }
    await host.ensureAlarm(until);
  }
  return config;
}

/**
 * An owner's change with a JSON body: read up to `limit` bytes (`what` and `advice` name the limit in a
 * 413: readBodyCapped), signed over by a key of the inbox with its nonce spent, then parsed.
 */
export async function requireOwnerJson(host: OwnedInbox, request: Request, limit: number, what: string, advice: string): Promise<{ config: InboxConfig; json: unknown }> {
  const body = await readBodyCapped(request, limit, what, advice);
  const config = await requireOwner(host, request, { spendNonce: true, body });
  return { config, json: parseJsonBody(body) };
}
