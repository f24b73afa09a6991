// A stand-in local app for the forward-*.test.ts files: a real node:http server on a steady port that
// records every request (method, URL, raw headers in order, body bytes) and answers 200 unless told
// otherwise; it can go down (connections refused) and come back on the same port. Also the delivery
// frames of a forwarding source, a DeliveryLoop wired to arrays, and the clean-up after each test, as the
// tests need them.
import { createServer } from "node:http";
import type { Server } from "node:http";
import { afterEach } from "vitest";
import { steadyPort } from "../support/node/steady-port.ts";
import { toBase64 } from "../../protocol/index.ts";
import type { DeliveryFrame, ForwardFrame, ForwardMethod } from "../../protocol/index.ts";
import { DeliveryLoop } from "../../local-agent/delivery/delivery.ts";
import type { DeliveryOptions } from "../../local-agent/delivery/delivery-options.ts";
import type { Rejection } from "../../local-agent/delivery/delivery-status.ts";
import type { DeliveryEvent } from "../../local-agent/inspector/delivery-feed.ts";
import { silentLogger } from "../../local-agent/logger.ts";

export interface AppRequestSeen {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
  at: number;
}

export interface AppAnswerScript {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answers this long after the request came (a slow app). */
  delayMs?: number;
}

export interface StandinApp {
  port: number;
  url: string;
  requests: AppRequestSeen[];
  /** Answers for the next requests, in turn; then 200 "ok". */
  script(...answers: AppAnswerScript[]): void;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startStandinApp(): Promise<StandinApp> {
  const requests: AppRequestSeen[] = [];
  const scripted: AppAnswerScript[] = [];
  const handler = (server: Server) =>
    server.on("request", (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        requests.push({ method: req.method ?? "", url: req.url ?? "", rawHeaders: req.rawHeaders, body: Buffer.concat(chunks), at: Date.now() });
        const answer = scripted.shift() ?? { status: 200, body: "ok" };
        const send = () => {
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? "");
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
  let server = handler(createServer());
  // A steady port: while the app is down, no server or connection the OS hands a port to can take it.
  const port = await steadyPort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...answers) => void scripted.push(...answers),
    down: stop,
    up: async () => {
      server = handler(createServer());
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

export interface ForwardFrameInput {
  source?: string;
  target: string;
  body?: string | Uint8Array;
  method?: ForwardMethod;
  tail?: string;
  headers?: [string, string][];
  allowPublic?: boolean;
  ttlMs?: number;
  /** The source's policy as a lanes relay sends it (none: an older relay's frame). */
  policy?: Pick<ForwardFrame, "timeout_sec" | "retries" | "ordered">;
  /** The frame's lane (none: an older relay's frame). */
  lane?: string;
}

export function forwardFrame(id: number, input: ForwardFrameInput): DeliveryFrame {
  const body = input.body ?? `{"n":${id}}`;
  const binary = typeof body !== "string";
  return {
    type: "message",
    id,
    kind: "hook",
    subpath: "sources/shop",
    content_type: "application/json",
    body: binary ? toBase64(body) : body,
    encoding: binary ? "base64" : "utf8",
    received_at: Date.now(),
    expires_at: Date.now() + (input.ttlMs ?? 60_000),
    forward: {
      source: input.source ?? "shop",
      target: input.target,
      allow_public: input.allowPublic ?? false,
      method: input.method ?? "POST",
      tail: input.tail ?? "",
      headers: input.headers ?? [["content-type", "application/json"]],
      ...input.policy,
    },
    ...(input.lane ? { lane: input.lane } : {}),
  };
}

export function gatewayFrame(id: number, subpath = "agentgram_inbox/agent"): DeliveryFrame {
  return { type: "message", id, kind: "hook", subpath, content_type: "application/json", body: `{"message":"m${id}"}`, encoding: "utf8", received_at: Date.now(), expires_at: Date.now() + 60_000 };
}

export interface WiredLoop {
  loop: DeliveryLoop;
  acked: number[];
  rejected: { id: number; rejection: Rejection }[];
  events: DeliveryEvent[];
  /** What the gateway was asked, by sub-path. */
  gatewayPosts: string[];
}

/** A loop whose gateway answers `gateway` (default 200) and whose acks, rejects and events land in arrays. */
export function wiredLoop(options: Partial<DeliveryOptions> & { gateway?: () => number } = {}): WiredLoop {
  const wired: Omit<WiredLoop, "loop"> = { acked: [], rejected: [], events: [], gatewayPosts: [] };
  const { gateway, ...rest } = options;
  const loop = new DeliveryLoop({
    agentId: "ag_0123456789ab",
    target: () => ({ port: 1, hooksPath: "/hooks", hooksToken: "t" }),
    post: async (_target, request) => {
      wired.gatewayPosts.push(request.subpath);
      return { status: gateway?.() ?? 200, retryAfter: null, detail: "" };
    },
    ack: (id) => wired.acked.push(id),
    reject: (id, rejection) => wired.rejected.push({ id, rejection }),
    onEvent: (event) => wired.events.push(event),
    logger: silentLogger,
    ...rest,
  });
  return { loop, ...wired };
}

/**
 * A test file's clean-up, run after each test, newest first: `cleanups` takes any step; `app()` starts a
 * stand-in app closed after the test; `stopAfter(loop)` stops a loop (100 ms grace) after it.
 */
export function forwardCleanups() {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    cleanups,
    app: async (): Promise<StandinApp> => {
      const started = await startStandinApp();
      cleanups.push(() => started.close());
      return started;
    },
    stopAfter: (loop: DeliveryLoop): void => void cleanups.push(() => loop.stop(100)),
  };
}
