// The inbox's live requests as one part: a request goes down the newest authenticated socket that speaks
// `live` as a `request` frame, and its sender waits here for the `answer` frames that name its rid (chunks
// joined up to LIVE.answerBodyMaxBytes), the deadline, or the socket's end — whichever comes first. The
// inbox's object stays awake while a fetch awaits, so a plain timer keeps the deadline (injectable). Each
// request is one entry of the live log (live-log.ts); an answer to a request already held is logged late.
// Held by inbox.ts; used by sources/source-live.ts and a2a/a2a-routes.ts; covered by
// test/worker/live-requests.test.ts, live-limits.test.ts and live-log.test.ts.
import { LIVE, decodeUtf8, fromBase64, randomBytes, toBase64, toBase64Url, utf8 } from "../../protocol/index.ts";
import type { LiveAnswerFrame, LiveMethod, LiveOutcome, LiveRequestFrame, LiveSummary, LiveTarget } from "../../protocol/index.ts";
import { send, speaksLiveNow } from "../delivery/socket-session.ts";
import type { LiveLog } from "./live-log.ts";

/** What a live request is, beside what its frame carries about its target (source, target, subpath, …). */
export interface LiveAsk {
  to: LiveTarget;
  method: LiveMethod;
  tail: string;
  headers: [string, string][];
  body: Uint8Array;
  deadlineMs: number;
  /** The frame's fields of its target: source, target, allow_public; subpath, content_type, hook_headers. */
  target: Pick<LiveRequestFrame, "source" | "target" | "allow_public" | "subpath" | "content_type" | "hook_headers">;
  /** Whether the caller holds the request when it cannot be answered (a body method): logged as held, and a later answer as late. */
  holdable: boolean;
  /** The log's source ("a2a" for A2A) and path (never the query). */
  log: { source: string; path: string };
}

export type LiveResult =
  | { kind: "answered"; status: number; headers: [string, string][]; body: Uint8Array }
  /** `notSent`: the target provably never took it (the caller may hold it). */
  | { kind: "failed"; code: string; message: string; notSent: boolean }
  /** No answer in time, or the socket ended first: `rid` goes with the held copy. */
  | { kind: "deadline"; rid: string }
  | { kind: "offline" }
  | { kind: "agent_too_old" }
  /** LIVE.inFlightMax are waiting already: nothing was sent. */
  | { kind: "busy" };

export interface LiveTimers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: LiveTimers = { set: (run, ms) => setTimeout(run, ms), clear: (handle) => clearTimeout(handle as number) };

interface Waiting {
  ws: WebSocket;
  ask: LiveAsk;
  startedAtMs: number;
  timer: unknown;
  /** Set by the first frame of the answer. */
  head: { status: number; headers: [string, string][] } | null;
  chunks: Uint8Array[];
  bytes: number;
  done(result: LiveResult): void;
}

/** Held requests whose answer may still come, remembered to mark their log entry late (the newest few). */
const LATE_KEPT = 256;

export class LiveRequests {
  private readonly sockets: () => WebSocket[];
  private readonly log: LiveLog;
  private readonly timers: LiveTimers;
  private readonly now: () => number;
  private readonly waiting = new Map<string, Waiting>();
  private readonly late = new Map<string, number>();

  constructor(sockets: () => WebSocket[], log: LiveLog, timers: LiveTimers = REAL_TIMERS, now: () => number = Date.now) {
    this.sockets = sockets;
    this.log = log;
    this.timers = timers;
    this.now = now;
  }

  /** The socket a live request would go to now, or why there is none. */
  socket(): WebSocket | "offline" | "agent_too_old" {
    let authed = false;
    for (const ws of this.sockets()) {
      const speaks = speaksLiveNow(ws);
      if (speaks === true) return ws;
      if (speaks === false) authed = true;
    }
    return authed ? "agent_too_old" : "offline";
  }

  inFlight(): number {
    return this.waiting.size;
  }

  summary(): LiveSummary {
    return { in_flight: this.waiting.size, answered: this.log.answered(), last_at: this.log.lastAtMs() };
  }

  /** Sends the request and waits for what becomes of it; every result but `busy` is logged. */
  ask(ask: LiveAsk): Promise<LiveResult> {
    const startedAtMs = this.now();
    const ws = this.socket();
    if (ws === "offline" || ws === "agent_too_old") {
      this.note(ask, startedAtMs, ask.holdable ? "held" : "failed", ws, null);
      return Promise.resolve({ kind: ws });
    }
    if (this.waiting.size >= LIVE.inFlightMax) return Promise.resolve({ kind: "busy" });
    const rid = toBase64Url(randomBytes(16));
    const text = decodeUtf8(ask.body);
    const frame: LiveRequestFrame = {
      type: "request", rid, to: ask.to, method: ask.method, tail: ask.tail, headers: ask.headers,
      body: text ?? toBase64(ask.body), encoding: text === null ? "base64" : "utf8", deadline_ms: ask.deadlineMs, ...ask.target,
    };
    if (!send(ws, frame)) {
      this.note(ask, startedAtMs, ask.holdable ? "held" : "failed", "offline", null);
      return Promise.resolve({ kind: "offline" });
    }
    return new Promise((resolve) => {
      const waiting: Waiting = {
        ws, ask, startedAtMs, head: null, chunks: [], bytes: 0,
        timer: this.timers.set(() => this.expire(rid), ask.deadlineMs),
        done: (result) => {
          this.timers.clear(waiting.timer);
          this.waiting.delete(rid);
          this.settled(rid, waiting, result);
          resolve(result);
        },
      };
      this.waiting.set(rid, waiting);
    });
  }

  /** The deadline of `rid` passed (its timer; a test may pass it sooner). */
  expire(rid: string): void {
    this.waiting.get(rid)?.done({ kind: "deadline", rid });
  }

  /** A socket ended: what waits on it will not be answered on it. */
  socketGone(ws: WebSocket): void {
    for (const [rid, waiting] of [...this.waiting]) if (waiting.ws === ws) waiting.done({ kind: "deadline", rid });
  }

  /** An answer frame from a live socket. */
  take(ws: WebSocket, frame: LiveAnswerFrame): void {
    const waiting = this.waiting.get(frame.rid);
    if (!waiting) return this.lateAnswer(frame);
    // Another connection's frames cannot finish this one's request.
    if (waiting.ws !== ws) return;
    if (frame.failed) return waiting.done({ kind: "failed", code: frame.failed.code, message: frame.failed.message, notSent: frame.failed.not_sent });
    if (!waiting.head) {
      if (frame.status === undefined || frame.status < 200) return waiting.done({ kind: "failed", code: "invalid_answer", message: `the agent's first answer frame had status ${frame.status ?? "none"}; an answer starts with a final status (200..599)`, notSent: false });
      waiting.head = { status: frame.status, headers: frame.headers ?? [] };
    }
    const chunk = frame.body === undefined ? new Uint8Array(0) : frame.encoding === "base64" ? fromBase64(frame.body) : utf8(frame.body);
    if (chunk === null) return waiting.done({ kind: "failed", code: "invalid_answer", message: "an answer frame's body is not base64", notSent: false });
    waiting.bytes += chunk.byteLength;
    if (waiting.bytes > LIVE.answerBodyMaxBytes) {
      return waiting.done({ kind: "failed", code: "answer_too_large", message: `the app's answer is larger than the relay passes back (${LIVE.answerBodyMaxBytes} bytes)`, notSent: false });
    }
    waiting.chunks.push(chunk);
    if (frame.more) return;
    const body = new Uint8Array(waiting.bytes);
    let at = 0;
    for (const part of waiting.chunks) {
      body.set(part, at);
      at += part.byteLength;
    }
    waiting.done({ kind: "answered", status: waiting.head.status, headers: waiting.head.headers, body });
  }

  /** A first frame for a request whose sender was told it was held marks its entry late; anything else is let go. */
  private lateAnswer(frame: LiveAnswerFrame): void {
    const n = this.late.get(frame.rid);
    if (n === undefined || (frame.status === undefined && !frame.failed)) return;
    this.late.delete(frame.rid);
    this.log.markLate(n, frame.status ?? null);
  }

  private settled(rid: string, waiting: Waiting, result: LiveResult): void {
    const { ask, startedAtMs } = waiting;
    if (result.kind === "answered") return void this.note(ask, startedAtMs, "answered", null, result.status);
    if (result.kind === "failed") return void this.note(ask, startedAtMs, ask.holdable && result.notSent ? "held" : "failed", result.code, null);
    if (result.kind !== "deadline") return;
    const n = this.note(ask, startedAtMs, ask.holdable ? "held" : "failed", ask.holdable ? "deadline" : "deadline_passed", null);
    if (!ask.holdable) return;
    this.late.set(rid, n);
    if (this.late.size > LATE_KEPT) this.late.delete(this.late.keys().next().value!);
  }

  /** Logs a request the caller settled itself (held because earlier ones of its source wait). */
  note(ask: Pick<LiveAsk, "method" | "log">, startedAtMs: number, outcome: LiveOutcome, code: string | null, status: number | null): number {
    const at = this.now();
    return this.log.record({ at_ms: startedAtMs, source: ask.log.source, method: ask.method, path: ask.log.path, status, duration_ms: Math.max(0, at - startedAtMs), outcome, code });
  }
}
