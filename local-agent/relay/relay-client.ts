// The WebSocket to this agent's inbox: authenticate, receive messages in order, acknowledge or reject
// them, resuming after the last finished id. Connecting, heartbeats, reconnects and closing are the
// reconnecting socket's (../reconnecting-socket.ts); this file keeps the relay's protocol: challenge →
// auth → ready, message / ack / reject / rejected, error. With a journal (delivery-journal.ts) every ack
// is on disk before it is sent, and the resume cursor survives restarts: a message the gateway accepted
// is never posted again. Other frames (messages, hub_token, abandon, later ones) go by type to the
// handlers registered with on(); the agent's parts send theirs with send().
//
// Lanes (protocol/lanes.ts): with a relay whose `ready` names the feature too, ids arrive and finish out
// of order; the resume cursor moves only by the `floor` a message or floor frame carries (nothing queued
// up to it), never by an ack; a `restored` frame (an event an older agent set aside, back in its lane) is
// delivered though under the cursor; `abandon` takes a message back (dropped, or resent for a new target).
// Live (protocol/live.ts): with a relay whose `ready` names it, `request` frames (checked here) go to the
// handlers of on("request"); the live part answers them with send().
// The upgrade itself is signed (protocol/upgrade-proof.ts): the relay lets its owner past the anonymous cap.
// Used by relay-link.ts; covered by relay-client(-lanes|-live).test.ts, heartbeat.e2e.test.ts, journal.e2e.test.ts,
// lockout.e2e.test.ts.
import { CLOSE_CODES, PING_FRAME, connectSigningInput, parseRequestFrame, toBase64, upgradeProofHeaders } from "../../protocol/index.ts";
import type { ClientFrame, ServerFrame } from "../../protocol/index.ts";
import { DEFAULTS } from "../backoff.ts";
import { ReconnectingSocket } from "../reconnecting-socket.ts";
import type { SocketEnd, SocketTiming } from "../reconnecting-socket.ts";
import { RELAY_SOCKET_TIMING, connectUrl } from "./relay-client-terms.ts";
import type { ConnectionState, DispatchedType, FrameOf, RejectInfo, RelayClientOptions, StateDetail, StateListener } from "./relay-client-terms.ts";
import { AGENT_FEATURES, spokenFeatures } from "./relay-features.ts";

export { RELAY_SOCKET_TIMING, connectUrl } from "./relay-client-terms.ts";
export type { ConnectionState, DispatchedType, FinishedLog, FrameOf, RejectInfo, RelayClientOptions, StateDetail, StateListener } from "./relay-client-terms.ts";

export class RelayClient {
  state: ConnectionState = "disconnected";
  private readonly socket: ReconnectingSocket;
  private readonly handlers = new Map<string, Set<(frame: never) => void>>();
  private readonly stateListeners = new Set<StateListener>();
  /** Every id up to here is finished; sent as `after` when (re)connecting. */
  private finishedUpTo: number;
  /** The `after` the current socket authenticated with. */
  private sentAfter = 0;
  /** The relay's error frame on the current socket (why it is about to close it). */
  private refusal: string | undefined;
  /** Ids received on the current socket and not yet acknowledged (or rejected and confirmed, or abandoned). */
  private readonly open = new Set<number>();
  /** The current socket's relay speaks lanes (its `ready` named the feature). */
  private lanes = false;
  /** The current socket's relay sends live requests (its `ready` named the feature). */
  private live = false;
  private readonly url: string;
  private readonly timing: SocketTiming;
  private readonly options: RelayClientOptions;

  constructor(options: RelayClientOptions) {
    this.options = options;
    this.finishedUpTo = options.journal?.cursor ?? 0;
    this.url = connectUrl(options.relayUrl, options.identity.agentId);
    this.timing = { ...RELAY_SOCKET_TIMING, ...options.timing };
    this.socket = new ReconnectingSocket({
      url: this.url,
      timing: this.timing,
      pingFrame: PING_FRAME,
      stopReason: "agent stopping",
      protocol: {
        beforeConnect: () => {
          this.open.clear();
          this.lanes = false;
          this.live = false;
          this.refusal = undefined;
          return true;
        },
        // Signed anew for each connection: a relay that checks it never makes this agent wait behind anonymous
        // sockets; an older one ignores it, and the challenge below authenticates either way.
        upgradeHeaders: () => upgradeProofHeaders(options.identity.publicKey, new URL(this.url).pathname, options.identity.sign),
        frame: (frame) => this.receive(frame as ServerFrame),
        silent: (silentMs) => options.logger.warn("relay heartbeat missed", { silent_ms: silentMs }),
        ended: (end) => this.ended(end),
      },
      onState: (state) => {
        if (state === "connecting") this.setState("connecting", {});
        else if (state === "closed") this.setState("closed", {});
      },
    });
  }

  /** Handles every frame of this type from now on; returns the way to stop. */
  on<T extends DispatchedType>(type: T, handler: (frame: FrameOf<T>) => void): () => void {
    const set = this.handlers.get(type) ?? new Set();
    this.handlers.set(type, set);
    set.add(handler as (frame: never) => void);
    return () => set.delete(handler as (frame: never) => void);
  }

  /** Told every state change, with what the relay said (ready) or why it ended. */
  onState(listener: StateListener): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  start(): void {
    this.socket.start();
  }

  /** The resume cursor: every id up to here is finished. */
  get cursor(): number {
    return this.finishedUpTo;
  }

  /** The relay of the current socket sends lanes (false until its `ready`, and against an older relay). */
  get lanesMode(): boolean {
    return this.lanes;
  }

  /** The relay of the current socket sends live requests (false until its `ready`, and against an older relay). */
  get liveMode(): boolean {
    return this.live;
  }

  /**
   * Marks a message finished: journals it (on disk before the relay hears of it), tells the relay, and
   * (without lanes) moves the resume cursor past it when nothing below it is still open. Not between
   * sockets: the open ids are forgotten then (the relay sends them again), so one under it may be
   * unfinished (the cursor jumped once, and a frame resent under it was held in flight for good).
   */
  ack(id: number): void {
    this.open.delete(id);
    if (!this.lanes && this.socket.authenticated) this.advance(id);
    this.options.journal?.finish(id, this.finishedUpTo);
    this.send({ type: "ack", id });
  }

  /**
   * Hands a message to the relay's dead shelf. It stays open (the cursor does not pass it) until the
   * relay confirms with `rejected`: a lost reject must leave the message queued there, not acknowledged
   * by the next connection's `after`. Not journalled: posting it again only repeats the refusal.
   */
  reject(id: number, info: RejectInfo): void {
    this.send({ type: "reject", id, reason: info.reason, status: info.status, attempts: info.attempts });
  }

  /**
   * Sends a frame over the authenticated socket; false when there is none (before `ready` the relay
   * would take it for a missing auth). An ack or reject that cannot be sent is not lost: the relay sends
   * the message again, and the journal (ack) or the gateway's same refusal (reject) finishes it again.
   */
  send(frame: ClientFrame): boolean {
    return this.socket.authenticated && this.socket.send(JSON.stringify(frame));
  }

  /** Cuts a reconnect wait short (`clawrelay retry`); false when no reconnect was waiting. */
  reconnectNow(): boolean {
    return this.socket.retrying && this.socket.connectNow();
  }

  close(): Promise<void> {
    return this.socket.close();
  }

  private advance(id: number): void {
    const lowestOpen = Math.min(...this.open);
    this.finishedUpTo = Math.max(this.finishedUpTo, Number.isFinite(lowestOpen) ? Math.min(id, lowestOpen - 1) : id);
  }

  /** Lanes: nothing up to `floor` was queued at the relay when the frame was sent; the cursor stays under every open id. */
  private advanceToFloor(floor: unknown): void {
    if (typeof floor === "number" && Number.isSafeInteger(floor) && floor >= 0) this.advance(floor);
  }

  private setState(state: ConnectionState, detail: StateDetail): void {
    this.state = state;
    for (const listener of [...this.stateListeners]) listener(state, detail);
  }

  private dispatch(frame: ServerFrame): void {
    for (const handler of [...(this.handlers.get(frame.type) ?? [])]) (handler as (frame: ServerFrame) => void)(frame);
  }

  private receive(frame: ServerFrame): void {
    const { logger, journal, identity } = this.options;
    if (frame.type === "challenge") {
      // Ids only mean something within one life of the inbox: a cursor from another would delete
      // (or skip) messages this agent never saw.
      if (typeof frame.epoch === "string" && journal?.adopt(frame.epoch)) {
        logger.warn("relay inbox is a new one: the delivery journal starts afresh", { epoch: frame.epoch, previous_cursor: this.finishedUpTo });
        this.finishedUpTo = 0;
      }
      const signature = toBase64(identity.sign(connectSigningInput(identity.agentId, frame.nonce)));
      this.sentAfter = this.finishedUpTo;
      const auth: ClientFrame = { type: "auth", key: identity.publicKey, signature, after: this.sentAfter, window: this.options.window ?? DEFAULTS.window, features: AGENT_FEATURES };
      this.socket.send(JSON.stringify(auth));
    } else if (frame.type === "ready") this.ready(frame);
    else if (frame.type === "message") {
      this.message(frame);
      if (this.lanes) this.advanceToFloor(frame.floor);
    } else if (frame.type === "hub_token") {
      if (typeof frame.token === "string" && typeof frame.expires_at === "number") this.dispatch(frame);
    } else if (frame.type === "rejected") {
      if (!this.open.delete(frame.id)) return;
      if (!this.lanes) this.advance(frame.id);
    } else if (frame.type === "floor") {
      if (!this.lanes) return;
      const before = this.finishedUpTo;
      this.advanceToFloor(frame.floor);
      // On disk too, so a restart resumes from here.
      if (this.finishedUpTo > before) journal?.finish(this.finishedUpTo, this.finishedUpTo);
    } else if (frame.type === "abandon") {
      if (!Number.isSafeInteger(frame.id)) return;
      // Not this agent's any more: neither ack nor reject follows, and the relay may send it again.
      this.open.delete(frame.id);
      this.dispatch(frame);
    } else if (frame.type === "error") {
      if (frame.id !== undefined) logger.warn("relay ignored a frame", { id: frame.id, code: frame.code, error: frame.message });
      else this.refusal = `${frame.code}: ${frame.message}`;
    } else if (frame.type === "request") {
      // Only a relay that named live sends them; a malformed one is left for the relay's deadline.
      const request = this.live ? parseRequestFrame(frame as unknown as Record<string, unknown>) : null;
      if (request) this.dispatch(request);
      else logger.warn("relay sent a request frame this agent cannot answer", { rid: String((frame as { rid?: unknown }).rid).slice(0, 64) });
    } else if (frame.type !== "pong") this.dispatch(frame);
  }

  private message(frame: FrameOf<"message">): void {
    const { logger, journal } = this.options;
    // A restored message is under the cursor by nature (an older agent passed it when it set it aside).
    const restored = this.lanes && frame.restored === true;
    if (this.open.has(frame.id)) return;
    // Under the cursor is finished too: acknowledged again, or the relay would hold it in flight for good.
    if (restored ? journal?.recorded(frame.id) : frame.id <= this.finishedUpTo || journal?.has(frame.id)) {
      // Finished before a crash or a lost ack: the gateway has it. Acknowledge, never post again.
      logger.info("already delivered; acknowledging again", { id: frame.id });
      this.send({ type: "ack", id: frame.id });
      return;
    }
    this.open.add(frame.id);
    this.dispatch(frame);
  }

  private ready(frame: FrameOf<"ready">): void {
    const { logger, journal } = this.options;
    // Ids only grow on an inbox; a relay that resumes below our cursor lost its state (a wiped
    // local relay, a new deployment): what we remember refers to other messages. Start over.
    if (frame.after < this.sentAfter) {
      logger.warn("relay inbox state is new: forgetting the delivery journal", { our_cursor: this.sentAfter, relay_last_id: frame.last_id });
      this.finishedUpTo = frame.after;
      journal?.reset(frame.after);
    }
    ({ lanes: this.lanes, live: this.live } = spokenFeatures(frame));
    this.socket.markAuthenticated();
    logger.info("relay connected", { url: this.url, after: frame.after, backlog: frame.backlog });
    this.setState("connected", { backlog: frame.backlog, ...(typeof frame.window === "number" ? { window: frame.window } : {}), ...(frame.hub_prefix ? { hubPrefix: frame.hub_prefix } : {}), ...(frame.hub_mode ? { hubMode: frame.hub_mode } : {}), ...(this.live ? { live: true } : {}) });
  }

  private ended(end: SocketEnd): number | null {
    const { logger } = this.options;
    if (end.code === CLOSE_CODES.replaced) {
      logger.error("relay replaced this connection", { reason: "another clawrelay agent for this inbox connected; this one stops" });
      this.setState("replaced", { error: "another agent connected to this inbox" });
      return null;
    }
    const error = this.refusal ?? end.error ?? (end.reason || `closed with code ${end.code}`);
    // A refused key will not start working by itself: wait the longest delay between tries.
    const delay = end.code === CLOSE_CODES.authFailed ? this.timing.backoff.maxDelayMs : end.backoffMs();
    logger.warn("relay disconnected", { code: end.code, error, retry_in_ms: delay });
    this.setState("disconnected", { error });
    return delay;
  }
}
