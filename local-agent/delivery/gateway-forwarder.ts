// Posts one request into the OpenClaw gateway's hooks endpoint on loopback, keep-alive.
import { Agent, request } from "node:http";
import { isCanonicalSubpath } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import type { GatewayRequest } from "./hub-format.ts";

export interface GatewayTarget {
  port: number;
  hooksPath: string;
  hooksToken: string;
}

export interface GatewayAnswer {
  /** 0 when the gateway could not be reached. */
  status: number;
  retryAfter: string | null;
  /** The start of the answer's body or the connection error, for logs (never request data). */
  detail: string;
}

const TIMEOUT_MS = 30_000;

export interface GatewayClient {
  post(target: GatewayTarget, message: GatewayRequest, idempotencyKey: string | null): Promise<GatewayAnswer>;
  close(): void;
}

export function createGatewayClient(): GatewayClient {
  const keepAlive = new Agent({ keepAlive: true, maxSockets: 4 });
  return {
    post: (target, message, idempotencyKey) => postToGateway(keepAlive, target, message, idempotencyKey),
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

function postToGateway(keepAlive: Agent, target: GatewayTarget, message: GatewayRequest, idempotencyKey: string | null): Promise<GatewayAnswer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: "POST",
        path: hookPath(target.hooksPath, message.subpath),
        agent: keepAlive,
        timeout: TIMEOUT_MS,
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
        res.on("data", (chunk: Buffer) => {
          if (size < 512) chunks.push(chunk);
          size += chunk.length;
        });
        res.on("end", () => {
          const retryAfter = res.headers["retry-after"];
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: typeof retryAfter === "string" ? retryAfter : null,
            detail: Buffer.concat(chunks).toString("utf8").slice(0, 200).replace(/\s+/g, " ").trim(),
          });
        });
        res.on("error", (err) => resolve({ status: 0, retryAfter: null, detail: err.message }));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on("error", (err) => resolve({ status: 0, retryAfter: null, detail: `gateway unreachable on 127.0.0.1:${target.port}: ${err.message}` }));
    req.end(message.body);
  });
}
