// One reconnecting WebSocket client, under both of the agent's sockets: the relay's (relay/relay-client.ts)
// and the hub's (hub/hub-watch.ts). It owns what they share: connecting, a deadline for the protocol's
// sign-in, heartbeats and silence once signed in, reconnecting with backoff (backoff.ts), and an
// idempotent close; each client keeps only its protocol's frames and decides after each end whether and
// when to try again. Every timing is an option, so the state machine is tested with fake timers, through
// both protocols (test/node/relay-client.test.ts and hub-watch.test.ts).
import WebSocket from "ws";
import { nextDelay } from "./backoff.ts";
import type { BackoffOptions } from "./backoff.ts";

export interface SocketTiming {
  /** From a connection's start to the protocol's `authenticated()` (the opening handshake included), or it is dropped. */
  authDeadlineMs: number;
  /** Once authenticated, a ping this often… */
  pingEveryMs: number;
  /** …and no frame at all (not even a pong) for this long means a half-open socket: it is dropped. */
  silenceMs: number;
  backoff: BackoffOptions;
}

/** One parsed frame, as the peer sent it (only JSON objects reach the protocol). */
export type SocketFrame = { type?: unknown } & Record<string, unknown>;

/** How a connection ended (not by stop() or close()). */
export interface SocketEnd {
  code: number;
  /** The close frame's reason text ("" when none came). */
  reason: string;
  /** The socket's first error (a refused connection, a failed handshake), or null. */
  error: string | null;
  /** The backoff's next delay; each call counts an attempt (reset when a connection authenticates). */
  backoffMs(): number;
}

export interface SocketProtocol {
  /** Asked before each connection: false = not now (it stays idle until connectNow()). */
  beforeConnect?(): boolean;
  /** Headers of each connection's upgrade request, made anew for each (the relay's: a fresh signed proof). */
  upgradeHeaders?(): Record<string, string>;
  /** The socket is open: the first frame, for a protocol whose client speaks first. */
  opened?(): void;
  frame(frame: SocketFrame): void;
  /** The socket was silent for `silentMs` and is being dropped. */
  silent?(silentMs: number): void;
  /** The connection ended: how long to wait before the next one, or null for none (until connectNow()). */
  ended(end: SocketEnd): number | null;
}

/** connecting: opening or signing in; retrying: a reconnect is scheduled; idle: neither (stopped, or not ready). */
export type SocketState = "idle" | "connecting" | "authenticated" | "retrying" | "closed";

export interface ReconnectingSocketOptions {
  url: string;
  timing: SocketTiming;
  protocol: SocketProtocol;
  /** The heartbeat frame (each protocol has its own ping). */
  pingFrame: string;
  /** The close frame's reason when this side stops. */
  stopReason: string;
  /** How long a stop waits for the peer's close frame before it drops the connection (default CLOSE_WAIT_MS). */
  closeWaitMs?: number;
  onState?(state: SocketState): void;
}

export const CLOSE_WAIT_MS = 2000;

export class ReconnectingSocket {
  private current: WebSocket | null = null;
  private running = false;
  private closing: Promise<void> | null = null;
  private attempt = 0;
  private authed = false;
  private lastFrameAt = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private authTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private readonly options: ReconnectingSocketOptions;

  constructor(options: ReconnectingSocketOptions) {
    this.options = options;
  }

  /** The current connection signed in (and is still open). */
  get authenticated(): boolean {
    return this.authed && this.current?.readyState === WebSocket.OPEN;
  }

  /** A reconnect is scheduled. */
  get retrying(): boolean {
    return this.retryTimer !== null;
  }

  start(): void {
    if (this.closing || this.running) return;
    this.running = true;
    this.connect();
  }

  /** Connects at once when there is no connection (a scheduled retry cut short); false when it cannot. */
  connectNow(): boolean {
    if (!this.running || this.current) return false;
    this.clearRetry();
    this.connect();
    return this.current !== null;
  }

  /** Sends on the open connection; false when there is none. */
  send(text: string): boolean {
    if (this.current?.readyState !== WebSocket.OPEN) return false;
    this.current.send(text);
    return true;
  }

  /** The protocol's sign-in succeeded: the deadline ends, heartbeats start, the backoff starts over. */
  markAuthenticated(): void {
    const socket = this.current;
    if (!socket || this.authed) return;
    this.authed = true;
    this.attempt = 0;
    this.clearTimer("authTimer");
    const { pingEveryMs, silenceMs } = this.options.timing;
    this.pingTimer = setInterval(() => {
      const silentMs = Date.now() - this.lastFrameAt;
      if (silentMs > silenceMs) {
        this.options.protocol.silent?.(silentMs);
        return void socket.terminate();
      }
      if (socket.readyState === WebSocket.OPEN) socket.send(this.options.pingFrame);
    }, pingEveryMs);
    this.pingTimer.unref();
    this.options.onState?.("authenticated");
  }

  /** Drops the connection and any scheduled retry; start() begins again. Resolves once the socket ended. */
  stop(): Promise<void> {
    this.running = false;
    this.clearRetry();
    const ended = this.drop();
    this.options.onState?.("idle");
    return ended;
  }

  /** For good: stops, and reports `closed`. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.running = false;
      this.clearRetry();
      await this.drop();
      this.options.onState?.("closed");
    })());
  }

  private connect(): void {
    this.clearRetry();
    if (!this.running || this.current) return;
    const { protocol, timing } = this.options;
    if (protocol.beforeConnect && !protocol.beforeConnect()) return;
    this.options.onState?.("connecting");
    // No permessage-deflate: frames are small JSON, and compressing each costs more CPU and memory (a
    // zlib context per socket) than it saves (bench:agent: ~2 MiB resident, faster drains without it).
    const headers = protocol.upgradeHeaders?.();
    const socket = new WebSocket(this.options.url, { handshakeTimeout: timing.authDeadlineMs, perMessageDeflate: false, ...(headers ? { headers } : {}) });
    this.current = socket;
    this.authed = false;
    this.lastFrameAt = Date.now();
    let error: string | null = null;
    this.authTimer = setTimeout(() => socket.terminate(), timing.authDeadlineMs);
    this.authTimer.unref();
    socket.on("open", () => this.current === socket && protocol.opened?.());
    socket.on("message", (data) => {
      if (this.current !== socket) return;
      this.lastFrameAt = Date.now();
      const frame = parseFrame(data.toString());
      if (frame) protocol.frame(frame);
    });
    socket.on("error", (err) => {
      error ??= err.message;
    });
    socket.on("close", (code, reason) => {
      if (this.current !== socket) return;
      this.current = null;
      this.authed = false;
      this.clearTimer("authTimer");
      this.clearTimer("pingTimer");
      const delayMs = protocol.ended({ code, reason: reason.toString(), error, backoffMs: () => nextDelay(this.attempt++, Math.random, timing.backoff) });
      if (!this.running) return;
      if (delayMs === null) return this.options.onState?.("idle");
      this.retryTimer = setTimeout(() => this.connect(), delayMs);
      this.retryTimer.unref();
      this.options.onState?.("retrying");
    });
  }

  /** Ends the current connection, politely when it is open; resolves once it ended (or the close wait passed). */
  private drop(): Promise<void> {
    this.clearTimer("authTimer");
    this.clearTimer("pingTimer");
    const socket = this.current;
    this.current = null;
    this.authed = false;
    if (!socket || socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => socket.terminate(), this.options.closeWaitMs ?? CLOSE_WAIT_MS);
      timer.unref();
      socket.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
      if (socket.readyState === WebSocket.OPEN) socket.close(1000, this.options.stopReason);
      else socket.terminate();
    });
  }

  private clearRetry(): void {
    this.clearTimer("retryTimer");
  }

  private clearTimer(name: "retryTimer" | "authTimer" | "pingTimer"): void {
    const timer = this[name];
    // Each with its own kind: fake timers (the tests') refuse an interval cleared as a timeout.
    if (timer && name === "pingTimer") clearInterval(timer);
    else if (timer) clearTimeout(timer);
    this[name] = null;
  }
}

/** A JSON object, or null for anything else (a peer's garbage is dropped, never thrown). */
function parseFrame(text: string): SocketFrame | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as SocketFrame) : null;
  } catch {
    // Not JSON: neither the relay nor the hub sends that; ignoring it keeps the connection.
    return null;
  }
}
