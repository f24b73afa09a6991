// The WebSocket to this agent's inbox: authenticate, receive messages in order, acknowledge or reject
// them, keep alive with heartbeats, and reconnect with backoff, resuming after the last finished id.
// With a journal (delivery-journal.ts) every ack is on disk before it is sent, and the resume cursor
// survives restarts: a message the gateway accepted is never posted again, however late it returns.
// The hub link rides the same socket: the inbox's hub token comes down (hub_token), and the agent sends
// up "the hub has mail" (hub_pull) and a newer token it holds (hub_token); see local-agent/hub/hub-side.ts.
import WebSocket from "ws";
import { CLOSE_CODES, PING_FRAME, connectSigningInput, toBase64 } from "../../protocol/index.ts";
import type { DeliveryFrame, HubTokenFrame, ServerFrame } from "../../protocol/index.ts";
import { DEFAULTS, nextDelay } from "../backoff.ts";
import type { Identity } from "../identity.ts";
import type { Logger } from "../logger.ts";

export type ConnectionState = "connecting" | "connected" | "disconnected" | "replaced" | "closed";

export interface RelayClientOptions {
  relayUrl: string;
  identity: Identity;
  window?: number;
  logger: Logger;
  onMessage(frame: DeliveryFrame): void;
  onState?(state: ConnectionState, detail: StateDetail): void;
  /** The inbox's hub token (after `ready`, and whenever the inbox gets a newer one). */
  onHubToken?(frame: HubTokenFrame): void;
  /** Dropped when the socket drops: the relay sends every unacknowledged message again. */
  onDisconnect?(): void;
  /** Where finished ids and the cursor persist (none: in memory only, as in tests of the socket). */
  journal?: FinishedLog;
  /** Heartbeat timing (DEFAULTS unless given; tests shorten it). */
  heartbeat?: { intervalMs: number; deadlineMs: number };
}

/** What the client needs of the delivery journal. */
export interface FinishedLog {
  readonly cursor: number;
  /** Binds to the inbox's epoch; true when it differed and everything was forgotten. */
  adopt(epoch: string): boolean;
  has(id: number): boolean;
  finish(id: number, cursor: number): void;
  reset(cursor: number): void;
}

export interface RejectInfo {
  reason: string;
  status: number;
  attempts: number;
}

export interface StateDetail {
  backlog?: number;
  error?: string;
  hubPrefix?: string;
  /** From `ready`: webhook, pull or off (absent from an older relay). */
  hubMode?: string;
  /** From `ready`: the unacknowledged messages the relay sends at most (what it granted of the window asked). */
  window?: number;
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
  private finishedUpTo: number;
  /** The `after` the current socket authenticated with. */
  private sentAfter = 0;
  /** The current socket got `ready`. */
  private authed = false;
  /** Ids received on the current socket and not yet acknowledged (or rejected and confirmed). */
  private readonly open = new Set<number>();
  private readonly options: RelayClientOptions;

  constructor(options: RelayClientOptions) {
    this.options = options;
    this.finishedUpTo = options.journal?.cursor ?? 0;
  }

  start(): void {
    this.closing = false;
    this.connect();
  }

  /** The resume cursor: every id up to here is finished. */
  get cursor(): number {
    return this.finishedUpTo;
  }

  /**
   * Marks a message finished: journals it (on disk before the relay hears of it), tells the relay, and
   * moves the resume cursor past it when nothing below it is still open.
   */
  ack(id: number): void {
    this.open.delete(id);
    this.advance(id);
    this.options.journal?.finish(id, this.finishedUpTo);
    this.sendFinished({ type: "ack", id });
  }

  /**
   * Hands a message to the relay's dead shelf. It stays open (the cursor does not pass it) until the
   * relay confirms with `rejected`: a lost reject must leave the message queued there, not acknowledged
   * by the next connection's `after`. Not journalled: posting it again only repeats the refusal.
   */
  reject(id: number, info: RejectInfo): void {
    this.sendFinished({ type: "reject", id, reason: info.reason, status: info.status, attempts: info.attempts });
  }

  private advance(id: number): void {
    const lowestOpen = Math.min(...this.open);
    this.finishedUpTo = Math.max(this.finishedUpTo, Number.isFinite(lowestOpen) ? Math.min(id, lowestOpen - 1) : id);
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

  /** Cuts a reconnect wait short (`clawrelay retry`); false when no reconnect was waiting. */
  reconnectNow(): boolean {
    if (this.closing || this.socket || !this.reconnectTimer) return false;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.connect();
    return true;
  }

  /** Tells a pulling inbox the hub has mail; false when there is no authenticated socket to say it on. */
  sendHubPull(): boolean {
    return this.sendAuthed({ type: "hub_pull" });
  }

  /** Offers the inbox a hub token (it takes it when it expires later than its own). */
  sendHubToken(token: string, expiresAt: number): boolean {
    return this.sendAuthed({ type: "hub_token", token, expires_at: expiresAt });
  }

  private sendAuthed(frame: object): boolean {
    if (!this.authed || this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  private setState(state: ConnectionState, detail: StateDetail): void {
    this.state = state;
    this.options.onState?.(state, detail);
  }

  private send(frame: object): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  /**
   * Acks and rejects go only over an authenticated socket (before `ready` the relay would take them
   * for a missing auth). One that cannot be sent is not lost: the relay sends the message again, and
   * the journal (ack) or the gateway's same refusal (reject) finishes it again.
   */
  private sendFinished(frame: object): void {
    if (this.authed) this.send(frame);
  }

  private connect(): void {
    const { relayUrl, identity, logger } = this.options;
    const url = connectUrl(relayUrl, identity.agentId);
    this.reconnectTimer = null;
    this.setState("connecting", {});
    // No permessage-deflate: frames are small JSON, and compressing each costs more CPU and memory (a
    // zlib context per socket) than it saves (bench:agent: ~2 MiB resident, faster drains without it).
    const socket = new WebSocket(url, { handshakeTimeout: DEFAULTS.connectTimeoutMs, perMessageDeflate: false });
    this.socket = socket;
    this.authed = false;
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
        // Ids only mean something within one life of the inbox: a cursor from another would delete
        // (or skip) messages this agent never saw.
        if (typeof frame.epoch === "string" && this.options.journal?.adopt(frame.epoch)) {
          logger.warn("relay inbox is a new one: the delivery journal starts afresh", { epoch: frame.epoch, previous_cursor: this.finishedUpTo });
          this.finishedUpTo = 0;
        }
        const signature = toBase64(identity.sign(connectSigningInput(identity.agentId, frame.nonce)));
        this.sentAfter = this.finishedUpTo;
        this.send({ type: "auth", key: identity.publicKey, signature, after: this.sentAfter, window: this.options.window ?? DEFAULTS.window });
      } else if (frame.type === "ready") {
        this.attempt = 0;
        this.authed = true;
        // Ids only grow on an inbox; a relay that resumes below our cursor lost its state (a wiped
        // local relay, a new deployment): what we remember refers to other messages. Start over.
        if (frame.after < this.sentAfter) {
          logger.warn("relay inbox state is new: forgetting the delivery journal", { our_cursor: this.sentAfter, relay_last_id: frame.last_id });
          this.finishedUpTo = frame.after;
          this.options.journal?.reset(frame.after);
        }
        this.startHeartbeat(socket);
        logger.info("relay connected", { url, after: frame.after, backlog: frame.backlog });
        this.setState("connected", { backlog: frame.backlog, ...(typeof frame.window === "number" ? { window: frame.window } : {}), ...(frame.hub_prefix ? { hubPrefix: frame.hub_prefix } : {}), ...(frame.hub_mode ? { hubMode: frame.hub_mode } : {}) });
      } else if (frame.type === "message") {
        if (frame.id <= this.finishedUpTo || this.open.has(frame.id)) return;
        if (this.options.journal?.has(frame.id)) {
          // Finished before a crash or a lost ack: the gateway has it. Acknowledge, never post again.
          logger.info("already delivered; acknowledging again", { id: frame.id });
          this.sendFinished({ type: "ack", id: frame.id });
          return;
        }
        this.open.add(frame.id);
        this.options.onMessage(frame);
      } else if (frame.type === "hub_token") {
        if (typeof frame.token === "string" && typeof frame.expires_at === "number") this.options.onHubToken?.(frame);
      } else if (frame.type === "rejected") {
        if (!this.open.delete(frame.id)) return;
        this.advance(frame.id);
      } else if (frame.type === "error") {
        if (frame.id !== undefined) logger.warn("relay ignored a frame", { id: frame.id, code: frame.code, error: frame.message });
        else authError = `${frame.code}: ${frame.message}`;
      }
    });

    socket.on("close", (code, reason) => {
      if (this.socket !== socket) return;
      this.authed = false;
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
