// Posts one request into the OpenClaw gateway's hooks endpoint on loopback, keep-alive: a delivery's, or
// a live request's to the gateway (../live/), which asks for the answer whole (`keepBodyBytes`) to return
// it to its sender. Used by agent-delivery.ts and ../live/agent-live.ts; covered by
// test/node/delivery.e2e.test.ts and live-gateway.e2e.test.ts.
import { Agent, request } from "node:http";
import { isCanonicalSubpath } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { wholeAnswer } from "../forward/app-response.ts";
import type { WholeAnswer } from "../forward/app-response.ts";
import type { GatewayRequest } from "./hub-format.ts";

export interface GatewayTarget {
  port: number;
  hooksPath: string;
  hooksToken: string;
  /** Where hooksToken comes from when it is not openclaw.json's ("gateway.hooks_token in …/agent.json"): a 401's reason names it. */
  tokenFrom?: string;
}

export interface GatewayAnswer {
  /** 0 when the gateway could not be reached. */
  status: number;
  retryAfter: string | null;
  /** The start of the answer's body or the connection error, for logs (never request data). */
  detail: string;
  /** With PostOptions.keepBodyBytes, when the gateway answered: its headers and body. */
  whole?: WholeAnswer;
  /** Status 0 because the connection was refused: the gateway never saw the request. */
  refused?: boolean;
}

export interface PostOptions {
  /** Read the answer whole, up to this many bytes. */
  keepBodyBytes?: number;
  /** No answer within this is a failure (default 30 s). */
  timeoutMs?: number;
}

const TIMEOUT_MS = 30_000;

export interface GatewayClient {
  post(target: GatewayTarget, message: GatewayRequest, idempotencyKey: string | null, options?: PostOptions): Promise<GatewayAnswer>;
  close(): void;
}

export function createGatewayClient(): GatewayClient {
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    post: (target, message, idempotencyKey, options) => postToGateway(keepAlive, target, message, idempotencyKey, options ?? {}),
    close: () => keepAlive.destroy(),
  };
}

/**
 * The gateway URL path for a sub-path, always below hooks.path: the relay stores only canonical
 * sub-paths, and this refuses anything else again, so no stored value can reach another gateway route
 * (a "../v1/chat/completions" would be resolved by the gateway's URL parser).
 */
export function hookPath(hooksPath: string, subpath: string): string {
  if (!isCanonicalSubpath(subpath)) throw new AgentError("unsafe_subpath", `refusing to post to the sub-path "${subpath.slice(0, 80)}": it is not canonical (segments of [A-Za-z0-9._~-], no "." or "..")`);
  return `${hooksPath.replace(/\/+$/, "")}/${subpath.split("/").map(encodeURIComponent).join("/")}`;
}

function postToGateway(keepAlive: Agent, target: GatewayTarget, message: GatewayRequest, idempotencyKey: string | null, options: PostOptions): Promise<GatewayAnswer> {
  const keep = options.keepBodyBytes;
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  return new Promise((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: "POST",
        path: hookPath(target.hooksPath, message.subpath),
        agent: keepAlive,
        timeout: timeoutMs,
        headers: {
          ...message.headers,
          "content-type": message.contentType,
          "content-length": message.body.byteLength,
          authorization: `Bearer ${target.hooksToken}`,
          // The gateway drops a replay of the same key within 5 minutes: a message redelivered after a
          // crash between gateway accept and relay ack does not start a second run (the delivery
          // journal covers the time after that).
          ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const answered = (ended: boolean): GatewayAnswer => {
          const retryAfter = res.headers["retry-after"];
          const body = Buffer.concat(chunks);
          return {
            status: res.statusCode ?? 0,
            retryAfter: typeof retryAfter === "string" ? retryAfter : null,
            detail: body.subarray(0, 512).toString("utf8").slice(0, 200).replace(/\s+/g, " ").trim(),
            ...(keep === undefined ? {} : { whole: wholeAnswer(res.rawHeaders, body, size, keep, ended) }),
          };
        };
        res.on("data", (chunk: Buffer) => {
          if (size < (keep === undefined ? 512 : keep + 1)) chunks.push(chunk);
          size += chunk.length;
          // A live answer past its limit is not read further: it cannot be returned.
          if (keep !== undefined && size > keep) {
            resolve(answered(false));
            res.destroy();
          }
        });
        res.on("end", () => resolve(answered(true)));
        res.on("error", (err) => resolve(keep === undefined ? { status: 0, retryAfter: null, detail: err.message } : answered(false)));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ status: 0, retryAfter: null, detail: `gateway unreachable on 127.0.0.1:${target.port}: ${err.message}`, refused: err.code === "ECONNREFUSED" }));
    req.end(message.body);
  });
}
