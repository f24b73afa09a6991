// HTTP calls the local agent makes to its relay: claim the inbox, check it, send envelopes.
import { signedRequestHeaders, utf8 } from "../protocol/index.ts";
import type { Envelope } from "../protocol/index.ts";
import { AgentError } from "./errors.ts";
import type { Identity } from "./identity.ts";

export interface RelayAnswer {
  status: number;
  body: Record<string, unknown>;
}

async function call(url: string, init: RequestInit): Promise<RelayAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    throw new AgentError("relay_unreachable", `cannot reach the relay at ${new URL(url).origin}: ${(err as Error).message}`);
  }
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { error: { code: "not_json", message: text.slice(0, 200) } };
  }
  return { status: res.status, body };
}

export function relayErrorText(answer: RelayAnswer): string {
  const error = answer.body.error as { code?: string; message?: string } | undefined;
  return error ? `${answer.status} ${error.code}: ${error.message}` : `${answer.status}`;
}

export async function signedRelayCall(
  relayUrl: string,
  identity: Identity,
  method: string,
  pathWithQuery: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<RelayAnswer> {
  const bytes = body === undefined ? new Uint8Array(0) : utf8(JSON.stringify(body));
  const headers = await signedRequestHeaders(identity.publicKey, method, pathWithQuery, bytes, identity.sign);
  return call(relayUrl.replace(/\/+$/, "") + pathWithQuery, {
    method,
    headers: { ...extraHeaders, ...headers, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: bytes }),
  });
}

export function postEnvelope(relayUrl: string, envelope: Envelope): Promise<RelayAnswer> {
  return call(`${relayUrl.replace(/\/+$/, "")}/inbox/${envelope.to}/envelopes`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(envelope),
  });
}

export function relayHealth(relayUrl: string): Promise<RelayAnswer> {
  return call(`${relayUrl.replace(/\/+$/, "")}/healthz`, { method: "GET" });
}
