// The WebSocket to this agent's inbox: authenticate, receive messages in order, acknowledge them,
// keep alive with heartbeats, and reconnect with backoff, resuming after the last finished id.
import WebSocket from "ws";
import { CLOSE_CODES, PING_FRAME, connectSigningInput, toBase64 } from "../protocol/index.ts";
import type { DeliveryFrame, ServerFrame } from "../protocol/index.ts";
import { DEFAULTS, nextDelay } from "./backoff.ts";
import type { Identity } from "./identity.ts";
import type { Logger } from "./logger.ts";

export type ConnectionState = "connecting" | "connected" | "disconnected" | "replaced" | "closed";

export interface RelayClientOptions {
  relayUrl: string;
  identity: Identity;
  window?: number;
  logger: Logger;
  onMessage(frame: DeliveryFrame): void;
  onState?(state: ConnectionState, detail: { backlog?: number; error?: string }): void;
  /** Dropped when the socket drops: the relay sends every unacknowledged message again. */
  onDisconnect?(): void;
  /** Heartbeat timing (DEFAULTS unless given; tests shorten it). */
  heartbeat?: { intervalMs: number; deadlineMs: number };
}

export function connectUrl(relayUrl: string, agentId: string): string {
  return `${relayUrl.replace(/\/+$/, "").replace(/^http/, "ws")}/inbox/${agentId}/connect`;
}

export class RelayClient {
  state: ConnectionState = "disconnected";
  private socket: WebSocket | null = null;
  private attempt = 0;
  private closing = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private lastFrameAt = 0;
  /** Every id up to here is finished; sent as `after` when (re)connecting. */
  private finishedUpTo = 0;
  /** Ids received on the current socket and not yet acknowledged. */
  private readonly open = new Set<number>();
  private readonly options: RelayClientOptions;

  constructor(options: RelayClientOptions) {
    this.options = options;
  }

  start(): void {
    this.closing = false;
    this.connect();
  }

  /** Marks a message finished: tells the relay, and moves the resume cursor past it when it can. */
  ack(id: number): void {
    this.open.delete(id);
    const lowestOpen = Math.min(...this.open);
    this.finishedUpTo = Math.max(this.finishedUpTo, Number.isFinite(lowestOpen) ? Math.min(id, lowestOpen - 1) : id);
    this.send({ type: "ack", id });
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.stopHeartbeat();
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState === WebSocket.OPEN) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          socket.terminate();
          resolve();
        }, 2000);
        socket.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
        socket.close(1000, "agent stopping");
      });
    } else socket?.terminate();
    this.setState("closed", {});
  }

  private setState(state: ConnectionState, detail: { backlog?: number; error?: string }): void {
    this.state = state;
    this.options.onState?.(state, detail);
  }

  private send(frame: object): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private connect(): void {
    const { relayUrl, identity, logger } = this.options;
    const url = connectUrl(relayUrl, identity.agentId);
    this.setState("connecting", {});
    const socket = new WebSocket(url, { handshakeTimeout: DEFAULTS.connectTimeoutMs });
    this.socket = socket;
    this.open.clear();
    this.lastFrameAt = Date.now();
    let authError: string | undefined;

    socket.on("message", (data) => {
      this.lastFrameAt = Date.now();
      let frame: ServerFrame;
      try {
        frame = JSON.parse(data.toString()) as ServerFrame;
      } catch {
        return;
      }
      if (frame.type === "challenge") {
        const signature = toBase64(identity.sign(connectSigningInput(identity.agentId, frame.nonce)));
        this.send({ type: "auth", key: identity.publicKey, signature, after: this.finishedUpTo, window: this.options.window ?? DEFAULTS.window });
      } else if (frame.type === "ready") {
        this.attempt = 0;
        this.startHeartbeat(socket);
        logger.info("relay connected", { url, after: frame.after, backlog: frame.backlog });
        this.setState("connected", { backlog: frame.backlog });
      } else if (frame.type === "message") {
        if (frame.id <= this.finishedUpTo || this.open.has(frame.id)) return;
        this.open.add(frame.id);
        this.options.onMessage(frame);
      } else if (frame.type === "error") {
        authError = `${frame.code}: ${frame.message}`;
      }
    });

    socket.on("close", (code, reason) => {
      if (this.socket !== socket) return;
      this.stopHeartbeat();
      this.socket = null;
      this.options.onDisconnect?.();
      if (this.closing) return;
      if (code === CLOSE_CODES.replaced) {
        logger.error("relay replaced this connection", { reason: "another clawrelay agent for this inbox connected; this one stops" });
        this.setState("replaced", { error: "another agent connected to this inbox" });
        return;
      }
      const error = authError ?? (reason.toString() || `closed with code ${code}`);
      // A refused key will not start working by itself: wait the longest delay between tries.
      const delay = code === CLOSE_CODES.authFailed ? DEFAULTS.maxDelayMs : nextDelay(this.attempt++);
      logger.warn("relay disconnected", { code, error, retry_in_ms: delay });
      this.setState("disconnected", { error });
      this.reconnectTimer = setTimeout(() => this.connect(), delay);
    });

    socket.on("error", (err) => {
      authError ??= err.message;
    });
  }

  private startHeartbeat(socket: WebSocket): void {
    this.stopHeartbeat();
    const { intervalMs, deadlineMs } = this.options.heartbeat ?? { intervalMs: DEFAULTS.heartbeatIntervalMs, deadlineMs: DEFAULTS.heartbeatDeadlineMs };
    this.heartbeat = setInterval(() => {
      // No frame at all (not even a pong) for too long: the socket is half-open; drop it.
      if (Date.now() - this.lastFrameAt > deadlineMs) {
        this.options.logger.warn("relay heartbeat missed", { silent_ms: Date.now() - this.lastFrameAt });
        socket.terminate();
        return;
      }
      if (socket.readyState === WebSocket.OPEN) socket.send(PING_FRAME);
    }, intervalMs);
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}
