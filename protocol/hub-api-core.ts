// The one client of a hub's HTTP API (docs/hub-setup.md), platform-free: the relay (worker/hub/) and the
// local agent's hub commands (local-agent/hub/) both call a hub through it. A call sends JSON with the
// agent's JWT as a bearer token and runs under a deadline whose timer is cleared when the call ends:
// AbortSignal.timeout's timer would stay pending for its whole span after a quick answer, and a pending
// timer keeps a Durable Object from hibernating (billed time after every pull). Every answer is read as
// the relay reads a request (strict-json.ts: UTF-8, no duplicate key, no lone surrogate, bounded depth),
// and read as a stream up to a byte cap (HUB_ANSWER_MAX_BYTES; a page HUB_PAGE_MAX_BYTES): reading stops
// there, so a hub that answers with 200 MB costs the relay its cap, not 800 MB. Redirects are never
// followed: a hub's 3xx is an error naming where it pointed (a redirect to 169.254.169.254 or a private
// address would otherwise turn the relay into the hub's fetcher of the operator's network).
// Every failure is a HubCallError, whose message never holds the JWT (it travels only in the
// Authorization header, and a refusal that echoes it has it cut out). The endpoints are in
// hub-api-registry.ts and hub-api-inbox.ts, pages of records in hub-page.ts. Covered by
// test/protocol/hub-api-core.test.ts.
import { readStreamCapped } from "./capped-read.ts";
import { decodeUtf8Text } from "./encoding.ts";
import { RelayError } from "./errors.ts";
import { parseStrictJson } from "./strict-json.ts";

/** The relay's deadline for a hub call (request and body); the hub's own webhook deadline is the same. */
export const HUB_DEADLINE_MS = 10_000;
/** The most of an answer read: a key, a token, a policy or a refusal is a few KiB. */
export const HUB_ANSWER_MAX_BYTES = 1024 * 1024;
/**
 * The most of a page of records read (GET /hub/inbox, /hub/history): 100 records of 160 KiB each. A
 * Durable Object has 128 MB; a page is held as bytes, as text and parsed at once.
 */
export const HUB_PAGE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * A hub call that failed. To whoever the relay answers, it is a 502 (the hub failed the request) with a
 * stable code: hub_unreachable (no answer before the deadline), hub_unauthorized (401: the JWT was ended
 * by a newer one, or is wrong), hub_refused (any other non-2xx), hub_bad_answer (an answer the client
 * cannot use), hub_answer_too_large (past the byte cap), hub_redirected (a 3xx: never followed), or an
 * endpoint's own (key_lookup_failed, hub_no_open_registration …).
 */
export class HubCallError extends RelayError {
  /** The hub's HTTP status on a refusal; 502 for an answer the client cannot use; 0 when none came. */
  readonly hubStatus: number;
  /** The hub's own words for a refusal ("" when it gave none). */
  readonly detail: string;

  constructor(hubStatus: number, code: string, message: string, detail = "") {
    super(502, code, message);
    this.name = "HubCallError";
    this.hubStatus = hubStatus;
    this.detail = detail;
  }
}

export interface HubAnswer {
  status: number;
  /** Names in lower case (the endpoint routes' deprecation notice is one). */
  headers: Record<string, string>;
  /** The body as text; null when it is not UTF-8. */
  text: string | null;
  /** The body's JSON object, read strictly; {} when it is none (then `problem` says why). */
  body: Record<string, unknown>;
  problem: string | null;
}

export interface HubCallOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** A body serialised already: a stored receipt goes out as it was kept. */
  bodyJson?: string;
  /** The JWT sent as `Authorization: Bearer`; overrides the client's own. */
  token?: string;
  /** "text": a page read record by record (hub-page.ts), not as one object. */
  read?: "object" | "text";
  /** The most of the answer's body read (default HUB_ANSWER_MAX_BYTES; a page's is HUB_PAGE_MAX_BYTES). */
  maxBytes?: number;
}

export interface HubClient {
  /** The hub's base URL, no trailing slash. */
  readonly url: string;
  /** Any answer, 2xx or not; throws (hub_unreachable) only when none came before the deadline. */
  call(method: string, path: string, options?: HubCallOptions): Promise<HubAnswer>;
}

export interface HubClientOptions {
  /** The agent's JWT, sent on every call that names none. */
  token?: string;
  deadlineMs?: number;
  /** Tests pass their own; the platform's fetch otherwise. */
  fetch?: typeof fetch;
}

/** Runs `run` with a signal that aborts after `deadlineMs`; the timer ends with the run. */
export async function withDeadline<T>(deadlineMs: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer within ${deadlineMs / 1000} s`)), deadlineMs);
  try {
    return await run(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/** A JWT is a few hundred characters; a shorter "token" (a test's) would cut ordinary words out. */
const MIN_REDACTED_LENGTH = 16;

/** `text` with every occurrence of the JWT cut out. */
function withoutToken(text: string, token: string | undefined): string {
  return token && token.length >= MIN_REDACTED_LENGTH && text.includes(token) ? text.split(token).join("<the JWT>") : text;
}

function readBody(text: string | null): { body: Record<string, unknown>; problem: string | null } {
  if (text === null) return { body: {}, problem: "a body that is not UTF-8 text" };
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    return { body: {}, problem: text.trim() === "" ? "an empty body" : `JSON clawrelay refuses: ${(err as Error).message}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { body: {}, problem: "JSON that is not an object" };
  return { body: value as Record<string, unknown>, problem: null };
}

const mib = (bytes: number): string => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/** A body past the cap: reading stopped there, and what was read is dropped. */
function tooLarge(where: string, maxBytes: number): HubCallError {
  return new HubCallError(502, "hub_answer_too_large", `${where}: the hub's answer is larger than the ${mib(maxBytes)} clawrelay reads of it; nothing of it was used`);
}

/** The body, read chunk by chunk up to `maxBytes`; past it the stream is cancelled (the rest never comes in). */
async function readCapped(response: Response, maxBytes: number, where: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined); // Refused for its declared size: nothing to read, nothing to report.
    throw tooLarge(where, maxBytes);
  }
  if (!response.body) return new Uint8Array(0);
  const bytes = await readStreamCapped(response.body, maxBytes);
  if (bytes === null) throw tooLarge(where, maxBytes);
  return bytes;
}

/** A 3xx (or the opaque answer a browser-like fetch gives for one): never followed, named by where it led. */
function redirected(base: string, where: string, status: number, location: string | null): HubCallError {
  let to = "no Location";
  if (location !== null) {
    try {
      to = new URL(location, base).origin;
    } catch {
      // A Location that is not a URL: named as such, its text is the hub's and may be anything.
      to = "a Location that is not a URL";
    }
  }
  return new HubCallError(
    status,
    "hub_redirected",
    `${where}: the hub answered ${status || "a redirect"} to ${to}; clawrelay follows no redirect from a hub — if the hub moved, set its new URL (hub_url) yourself`,
  );
}

export function hubClient(hubUrl: string, options: HubClientOptions = {}): HubClient {
  const url = hubUrl.replace(/\/+$/, "");
  const deadlineMs = options.deadlineMs ?? HUB_DEADLINE_MS;
  const send = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const call = async (method: string, path: string, callOptions: HubCallOptions = {}): Promise<HubAnswer> => {
    const token = callOptions.token ?? options.token;
    const headers: Record<string, string> = { accept: "application/json" };
    const body = callOptions.bodyJson ?? (callOptions.body === undefined ? undefined : JSON.stringify(callOptions.body));
    if (body !== undefined) headers["content-type"] = "application/json";
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const where = `${method} ${path}`;
    const maxBytes = callOptions.maxBytes ?? HUB_ANSWER_MAX_BYTES;
    let reply: { status: number; headers: Record<string, string>; text: string | null };
    try {
      reply = await withDeadline(deadlineMs, async (signal) => {
        const response = await send(url + path, { method, headers, ...(body === undefined ? {} : { body }), signal, redirect: "manual" });
        if ((response.status >= 300 && response.status <= 399) || (response.type as string) === "opaqueredirect") {
          await response.body?.cancel().catch(() => undefined); // The redirect is refused whatever its body says.
          throw redirected(url + path, where, response.status, response.headers.get("location"));
        }
        const names: Record<string, string> = {};
        response.headers.forEach((value, name) => (names[name.toLowerCase()] = value));
        return { status: response.status, headers: names, text: decodeUtf8Text(await readCapped(response, maxBytes, where)) };
      });
    } catch (err) {
      if (err instanceof HubCallError) throw err;
      throw new HubCallError(0, "hub_unreachable", withoutToken(`cannot reach the hub at ${url} (${where}): ${(err as Error).message}`, token));
    }
    // A refusal may echo the request; its words end up in messages and logs.
    const ok = reply.status >= 200 && reply.status <= 299;
    const text = !ok && reply.text !== null ? withoutToken(reply.text, token) : reply.text;
    const read = callOptions.read === "text" && ok ? { body: {}, problem: null } : readBody(text);
    return { status: reply.status, headers: reply.headers, text, ...read };
  };
  return { url, call };
}

export const isHubSuccess = (answer: HubAnswer): boolean => answer.status >= 200 && answer.status <= 299;

/** The hub's own words for a refusal: FastAPI's `detail`, else `{error:{code,message}}`, else the text; cut for a line. */
export function hubDetail(answer: HubAnswer): string {
  const { detail, error } = answer.body;
  if (typeof detail === "string") return detail.slice(0, 300);
  if (detail !== undefined) return JSON.stringify(detail).slice(0, 300);
  if (typeof error === "object" && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return [code, message].filter((part) => typeof part === "string").join(": ").slice(0, 300) || JSON.stringify(error).slice(0, 300);
  }
  if (typeof error === "string") return error.slice(0, 300);
  const text = answer.text?.trim() ?? "";
  return text === "" ? "no detail" : text.slice(0, 300);
}

/** A non-2xx answer as an error naming the call; 401 has its own code (the caller may get a fresh JWT). */
export function hubRefusal(method: string, path: string, answer: HubAnswer): HubCallError {
  const detail = hubDetail(answer);
  const code = answer.status === 401 ? "hub_unauthorized" : "hub_refused";
  return new HubCallError(answer.status, code, `hub refused ${method} ${path}: ${answer.status} ${detail}`, detail);
}

/** An answer the client cannot use (a 2xx without what the endpoint promises); `what` completes "the hub's answer has …". */
export function badAnswer(method: string, path: string, what: string): HubCallError {
  return new HubCallError(502, "hub_bad_answer", `${method} ${path}: the hub's answer has ${what}`);
}

/** The JSON object of a 2xx answer; anything else a HubCallError naming the call. */
export async function hubJson(hub: HubClient, method: string, path: string, options: HubCallOptions = {}): Promise<Record<string, unknown>> {
  const answer = await hub.call(method, path, options);
  if (!isHubSuccess(answer)) throw hubRefusal(method, path, answer);
  if (answer.problem !== null) throw badAnswer(method, path, answer.problem);
  return answer.body;
}

/** The text of a 2xx answer (a page, read record by record); anything else a HubCallError naming the call. */
export async function hubAnswerText(hub: HubClient, method: string, path: string, options: HubCallOptions = {}): Promise<string> {
  const answer = await hub.call(method, path, { ...options, read: "text" });
  if (!isHubSuccess(answer)) throw hubRefusal(method, path, answer);
  if (answer.text === null) throw badAnswer(method, path, "a body that is not UTF-8 text");
  return answer.text;
}
