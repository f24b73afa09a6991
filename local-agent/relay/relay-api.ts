// HTTP calls the local agent makes to its relay: claim the inbox, check it, send envelopes.
import { envelopeText, signedRequestHeaders, utf8 } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import type { Identity } from "../identity.ts";

export interface RelayAnswer {
  status: number;
  body: Record<string, unknown>;
}

const TIMEOUT_MS = 15_000;

/** The cause under fetch's "fetch failed", in words; with the question that points at the fix. */
function networkFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string; errors?: { code?: string }[] } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return `no answer within ${timeoutMs / 1000} s — is it running?`;
  const code = e.cause?.code ?? e.cause?.errors?.[0]?.code;
  if (code === "ECONNREFUSED") return "connection refused — is it running?";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "the host name does not resolve (DNS) — is it spelled right?";
  if (code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT") return "the connection timed out — is it running?";
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") return "the connection was closed before an answer — is it a clawrelay relay?";
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "no route to the host — is the network up?";
  return `${e.cause?.message ?? e.message ?? String(err)} — is it running?`;
}

/** The origin of a relay URL, or an AgentError when it is not an http(s) URL. */
function relayOrigin(relayUrl: string): string {
  let url: URL | null = null;
  try {
    url = new URL(relayUrl);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new AgentError("invalid_relay_url", `the relay URL "${relayUrl}" is not an http(s) URL such as https://relay.example.com`);
  }
  return url.origin;
}

function hasRelayError(body: Record<string, unknown>): boolean {
  const error = body.error as { code?: unknown; message?: unknown } | null | undefined;
  return typeof error === "object" && error !== null && typeof error.code === "string" && typeof error.message === "string";
}

/** Something answered, but not the way a clawrelay relay does (a web page, a proxy, another API). */
function notARelay(origin: string, status: number, why: string): AgentError {
  const what = status >= 500 ? "is not a clawrelay relay, or one that failed" : "is not a clawrelay relay";
  return new AgentError("not_a_relay", `${origin} answered ${status} but ${what} (${why}); check the URL`);
}

async function call(relayUrl: string, path: string, init: RequestInit, timeoutMs = TIMEOUT_MS): Promise<RelayAnswer> {
  const origin = relayOrigin(relayUrl);
  let status: number;
  let text: string;
  try {
    const res = await fetch(relayUrl.replace(/\/+$/, "") + path, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    status = res.status;
    text = await res.text();
  } catch (err) {
    throw new AgentError("relay_unreachable", `cannot reach the relay at ${origin}: ${networkFailure(err, timeoutMs)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const ok = status >= 200 && status <= 299;
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw notARelay(origin, status, ok ? "its answer is not JSON" : "no clawrelay error in its answer");
  }
  const body = parsed as Record<string, unknown>;
  if (!ok && !hasRelayError(body)) throw notARelay(origin, status, "no clawrelay error in its answer");
  return { status, body };
}

/** A refusal as `401 code: message`; never prints `undefined`, whatever the body holds. */
export function relayErrorText(answer: RelayAnswer): string {
  const error = answer.body.error as { code?: unknown; message?: unknown } | null | undefined;
  const code = typeof error?.code === "string" ? error.code : null;
  const message = typeof error?.message === "string" ? error.message : null;
  if (answer.status === 0) return message ?? "no answer";
  if (code && message) return `${answer.status} ${code}: ${message}`;
  if (code || message) return `${answer.status} ${code ?? message}`;
  return `${answer.status} (no clawrelay error in the answer)`;
}

export async function signedRelayCall(
  relayUrl: string,
  identity: Identity,
  method: string,
  pathWithQuery: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
  /** Longer only for a call the relay holds open on purpose (a history long-poll, `wait` up to 60 s). */
  timeoutMs = TIMEOUT_MS,
): Promise<RelayAnswer> {
  const bytes = body === undefined ? new Uint8Array(0) : utf8(JSON.stringify(body));
  const headers = await signedRequestHeaders(identity.publicKey, method, pathWithQuery, bytes, identity.sign);
  return call(relayUrl, pathWithQuery, {
    method,
    headers: { ...extraHeaders, ...headers, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: bytes }),
  }, timeoutMs);
}

/** Posted with its payload in JCS form (protocol/posted-payload.ts), which the relay hashes from the bytes as they are. */
export function postEnvelope(relayUrl: string, envelope: Envelope): Promise<RelayAnswer> {
  return call(relayUrl, `/inbox/${envelope.to}/envelopes`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: envelopeText(envelope),
  });
}

export function relayHealth(relayUrl: string): Promise<RelayAnswer> {
  return call(relayUrl, "/healthz", { method: "GET" });
}
