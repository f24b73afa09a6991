// The stand-in hub's outgoing HTTP, as the real hub's httpx client writes it: the same header names in
// the same order (Host, Accept, Accept-Encoding, Connection, User-Agent, Authorization, Content-Length,
// Content-Type), compact JSON bodies with raw UTF-8, no redirects followed. Pushes share one keep-alive
// connection pool; probes each open a new connection (a new client per probe). Imported by
// agentline-hub-push.ts; covered by test/node/agentline-hub.test.ts.
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import type { IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

export interface PostResult {
  /** 0 when no answer came. */
  status: number;
  /** The hub's words when no answer came: "CONNECTION_REFUSED", "TIMEOUT", "HTTP_ERROR: …". */
  error: string | null;
  raw: string;
  headers: string[];
}

export interface HubHttp {
  /** POSTs `body` (already JSON text) with a bearer token; never throws. */
  post(target: string, token: string, body: string, options: { fresh: boolean; timeoutMs: number; signal: AbortSignal }): Promise<PostResult>;
  close(): void;
}

/** One hub's client: its keep-alive pool dies with it. */
export function hubHttp(): HubHttp {
  const pool = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  const close = () => {
    pool.http.destroy();
    pool.https.destroy();
  };
  return { post: (target, token, body, options) => postJson(pool, target, token, body, options), close };
}

function postJson(pool: { http: HttpAgent; https: HttpsAgent }, target: string, token: string, body: string, options: { fresh: boolean; timeoutMs: number; signal: AbortSignal }): Promise<PostResult> {
  const url = new URL(target);
  const bytes = Buffer.from(body, "utf8");
  const headers = [
    "Host", url.host, "Accept", "*/*", "Accept-Encoding", "gzip, deflate", "Connection", "keep-alive", "User-Agent", "python-httpx/0.28.1",
    "Authorization", `Bearer ${token}`, "Content-Length", String(bytes.length), "Content-Type", "application/json",
  ];
  const secure = url.protocol === "https:";
  const send = secure ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<PostResult, "raw" | "headers">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, raw: body, headers });
    };
    const req = send(
      { hostname: url.hostname, port: url.port || (secure ? 443 : 80), path: url.pathname + url.search, method: "POST", headers, agent: options.fresh ? false : secure ? pool.https : pool.http, signal: options.signal },
      (res: IncomingMessage) => {
        res.resume();
        res.on("end", () => finish({ status: res.statusCode ?? 0, error: null }));
        res.on("error", () => finish({ status: 0, error: "HTTP_ERROR: ReadError" }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: 0, error: "TIMEOUT" });
    }, options.timeoutMs);
    req.on("error", (err: NodeJS.ErrnoException) => finish({ status: 0, error: err.code === "ECONNREFUSED" ? "CONNECTION_REFUSED" : `HTTP_ERROR: ${err.code ?? err.name}` }));
    req.end(bytes);
  });
}
