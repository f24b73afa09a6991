// Posts one forwarded event to a local app: the event's method, its body byte-exact, the sender's
// headers in their order (Host and content-length are the only ones added), over keep-alive
// connections, http or https, never following a redirect, behind the address guard (address-guard.ts:
// public addresses, and the agent's own local API port).
// A live request (../live/) is sent the same way, GET and HEAD included, and asks for the whole answer
// (`keepBodyBytes`): its headers and body come back for the sender. Never throws: every end is an
// AppAnswer. Made by agent.ts (or forward-delivery.ts); covered by test/node/forward-delivery.test.ts,
// forward-guard.test.ts and live-app.e2e.test.ts.
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import type { IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { addressClass, isLocalhostName } from "../../protocol/index.ts";
import type { ForwardMethod, LiveMethod } from "../../protocol/index.ts";
import { DEFAULT_API_PORT } from "../api/api-server.ts";
import { apiPortLookup, guardedLookup, literalRefusal, LocalhostNotLoopbackError, loopbackLookup, OwnApiTargetError, ownApiRefusal, PublicTargetError } from "./address-guard.ts";
import { answerDetail, FORWARD_DEFAULTS, isRefusedConnection, wholeAnswer } from "./app-response.ts";
import type { AppAnswer } from "./app-response.ts";

export interface AppRequest {
  /** The source whose event it is and its target as the owner set it (for the guard's reason). */
  source: string;
  target: string;
  allowPublic: boolean;
  /** forwardUrl(target, tail). */
  url: string;
  /** A forwarded event's; a live request may also GET or HEAD. */
  method: ForwardMethod | LiveMethod;
  headers: [string, string][];
  body: Uint8Array;
  /** No answer within this is a failure (the source's timeout_sec); default: the client's. */
  timeoutMs?: number;
  /** Read the answer whole, up to this many bytes (a live request's): the answer then has `whole`. */
  keepBodyBytes?: number;
}

export interface AppClient {
  /** `signal`: aborting it gives up the post (the relay abandoned the event); the answer is then meaningless. */
  post(request: AppRequest, signal?: AbortSignal): Promise<AppAnswer>;
  close(): void;
}

export interface AppClientOptions {
  /** How names are resolved (tests inject one); the guard checks what it answers. Default: dns.lookup. */
  lookup?: LookupFunction;
  timeoutMs?: number;
  /** The agent's local API port as it runs (0 before it listens); DEFAULT_API_PORT is refused as well. */
  apiPort?: () => number;
}

/** The answer's first bytes are kept for a person; the rest is read and dropped, up to this. */
const KEPT_BYTES = 1024;
const DRAINED_BYTES = 1024 * 1024;

export function createAppClient(options: AppClientOptions = {}): AppClient {
  // One pool per kind of target: a connection opened for a source that allows public targets is never
  // reused by a source that does not (the guard ran when it was opened).
  const agents = {
    http: [new HttpAgent({ keepAlive: true }), new HttpAgent({ keepAlive: true })],
    https: [new HttpsAgent({ keepAlive: true }), new HttpsAgent({ keepAlive: true })],
  };
  const timeoutMs = options.timeoutMs ?? FORWARD_DEFAULTS.timeoutMs;
  return {
    post: (request, signal) => postToApp(request, agents, request.timeoutMs ?? timeoutMs, options.lookup, signal, [DEFAULT_API_PORT, options.apiPort?.() ?? 0]),
    close: () => {
      for (const agent of [...agents.http, ...agents.https]) agent.destroy();
    },
  };
}

function postToApp(message: AppRequest, agents: { http: HttpAgent[]; https: HttpsAgent[] }, timeoutMs: number, lookup: LookupFunction | undefined, signal: AbortSignal | undefined, apiPorts: number[]): Promise<AppAnswer> {
  const url = new URL(message.url);
  const https = url.protocol === "https:";
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(url.port) || (https ? 443 : 80);
  const localName = isLocalhostName(host);
  const literal = !localName && addressClass(host) !== null;
  const refused = (literal ? ownApiRefusal(host, port, apiPorts, message.source) : null) ?? (message.allowPublic || localName ? null : literalRefusal(url.hostname, message.source, message.target));
  if (refused) return Promise.resolve({ kind: "not_sent", reason: refused.message });
  // A name's addresses are checked as the connection resolves it (localhost's must all be loopback); an IP literal was decided above.
  const named = !message.allowPublic && !literal && !localName;
  const guarded = localName ? loopbackLookup(message.source, message.target, lookup) : named ? guardedLookup(message.source, message.target, lookup) : lookup;
  const resolve = !literal && apiPorts.includes(port) ? apiPortLookup(message.source, port, apiPorts, guarded) : guarded;
  // Raw headers keep the sender's order and repeated names; Node then adds nothing but Connection. A
  // bodiless GET or HEAD says no length, as a browser's does (some servers refuse one that says 0).
  const bodiless = message.body.byteLength === 0 && (message.method === "GET" || message.method === "HEAD");
  const headers = ["host", url.host, ...message.headers.flat(), ...(bodiless ? [] : ["content-length", String(message.body.byteLength)])];
  const keep = message.keepBodyBytes;
  return new Promise<AppAnswer>((done) => {
    let settled = false;
    const onAbort = () => req.destroy(Object.assign(new Error("the relay abandoned the event"), { code: "ABANDONED" }));
    const finish = (answer: AppAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener("abort", onAbort);
      done(answer);
    };
    const deadline = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: "ETIMEDOUT" })), timeoutMs);
    const onAnswer = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const answered = (ended: boolean): AppAnswer => {
        const body = Buffer.concat(chunks);
        const whole = keep === undefined ? {} : { whole: wholeAnswer(res.rawHeaders, body, size, keep, ended) };
        return { kind: "answered", status: res.statusCode ?? 0, retryAfter: single(res.headers["retry-after"]), location: locationOf(res.headers.location, url), detail: answerDetail(body), ...whole };
      };
      res.on("data", (chunk: Buffer) => {
        if (size < (keep === undefined ? KEPT_BYTES : keep + 1)) chunks.push(chunk);
        size += chunk.length;
        // An endless answer is not read to its end: the status has been given (a live one's is too large).
        if (size > (keep ?? DRAINED_BYTES)) {
          finish(answered(false));
          res.destroy();
        }
      });
      res.on("end", () => finish(answered(true)));
      // The status line came before the failure: it is the app's word.
      res.on("error", () => finish(answered(false)));
      res.on("close", () => finish(answered(false)));
    };
    let req: ReturnType<typeof httpRequest>;
    try {
      const options = {
        protocol: url.protocol,
        host,
        port: url.port || (https ? 443 : 80),
        method: message.method,
        path: `${url.pathname}${url.search}`,
        headers,
        agent: https ? agents.https[message.allowPublic ? 1 : 0] : agents.http[message.allowPublic ? 1 : 0],
        ...(resolve ? { lookup: resolve } : {}),
      };
      req = https ? httpsRequest(options, onAnswer) : httpRequest(options, onAnswer);
    } catch (err) {
      // A header Node will not send (a control character in a value): this event can never go.
      clearTimeout(deadline);
      return done({ kind: "not_sent", reason: `not posted: ${(err as Error).message}` });
    }
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (err instanceof PublicTargetError || err instanceof OwnApiTargetError || err instanceof LocalhostNotLoopbackError) return finish({ kind: "not_sent", reason: err.message });
      finish({ kind: "unreachable", detail: unreachableText(err, url), refusedConnection: isRefusedConnection(err.code) });
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    req.end(message.body);
  });
}

function single(value: string | string[] | undefined): string | null {
  return typeof value === "string" ? value : (value?.[0] ?? null);
}

/** Location resolved against the URL posted to (it may be relative), or null. */
function locationOf(value: string | undefined, base: URL): string | null {
  if (!value) return null;
  try {
    return new URL(value, base).href;
  } catch {
    return value.slice(0, 200);
  }
}

function unreachableText(err: NodeJS.ErrnoException, url: URL): string {
  if (err.code === "ECONNREFUSED") return `connection refused by ${url.host} (is the app running?)`;
  if (err.code === "ECONNRESET") return `connection reset by ${url.host}`;
  if (err.code === "ETIMEDOUT") return `no answer from ${url.host}: ${err.message}`;
  return `${url.host} unreachable: ${err.message}`;
}
