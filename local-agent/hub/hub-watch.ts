// The hub's WebSocket (/hub/ws), held while the inbox pulls: today's hub pushes nothing, but it tells a
// signed-in socket {"type":"inbox_update"} 28–60 ms after new mail, so the agent asks the relay to pull
// at once (hub_pull) instead of the relay polling often (worker/hub/hub-schedule.ts backs off while idle).
// The hub's rules: {"type":"auth","token":JWT} within 10 s → {"type":"auth_ok"}, or close 4001; then
// {"type":"heartbeat"} from it, and a frame from us at least every 60 s (we ping every 25 s) or it closes
// the socket. A 4001 means the token was refreshed away: we wait for a newer one (from the relay or the
// credentials file) instead of trying it again. Used by hub-side.ts; covered by test/node/hub-watch.test.ts.
import WebSocket from "ws";
import { DEFAULTS, nextDelay } from "../backoff.ts";
import type { Logger } from "../logger.ts";
import type { FileToken } from "./linked-credentials.ts";

export interface HubWatchTiming {
  authTimeoutMs: number;
  pingMs: number;
  silenceMs: number;
  coalesceMs: number;
  backoff: { initialDelayMs: number; maxDelayMs: number; factor: number };
}

export const HUB_WATCH_DEFAULTS: HubWatchTiming = {
  authTimeoutMs: 10_000,
  pingMs: 25_000,
  /** The hub sends a heartbeat every 15–30 s: silence this long means a half-open socket. */
  silenceMs: 75_000,
  /** inbox_update bursts: at most one hub_pull per this window (one more follows at its end). */
  coalesceMs: 200,
  backoff: { initialDelayMs: DEFAULTS.initialDelayMs, maxDelayMs: DEFAULTS.maxDelayMs, factor: DEFAULTS.factor },
};

export type HubWatchState = "off" | "waiting_token" | "connecting" | "connected" | "disconnected";

export interface HubWatchStatus {
  state: HubWatchState;
  url: string;
  /** ms: since when it is in this state. */
  since: number;
  last_update_at: number | null;
  updates: number;
  error: string | null;
}

export interface HubWatchOptions {
  hubUrl: string;
  logger: Logger;
  /** The newest token known (hub-side.ts: from the relay or the credentials file). */
  token(): FileToken | null;
  /** The hub has mail (coalesced here). */
  onMail(): void;
  timing?: Partial<HubWatchTiming>;
}

export function hubWsUrl(hubUrl: string): string {
  const url = new URL(hubUrl);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/hub/ws`;
  url.search = "";
  url.hash = "";
  return url.toString();
}

export class HubWatch {
  private readonly timing: HubWatchTiming;
  private readonly url: string;
  private socket: WebSocket | null = null;
  private enabled = false;
  private attempt = 0;
  private refused: string | null = null;
  private timers = new Set<NodeJS.Timeout>();
  private reconnect: NodeJS.Timeout | null = null;
  private coalescing: NodeJS.Timeout | null = null;
  private mailPending = false;
  private readonly current: HubWatchStatus;
  private readonly options: HubWatchOptions;

  constructor(options: HubWatchOptions) {
    this.options = options;
    this.timing = { ...HUB_WATCH_DEFAULTS, ...options.timing };
    this.url = hubWsUrl(options.hubUrl);
    this.current = { state: "off", url: this.url, since: Date.now(), last_update_at: null, updates: 0, error: null };
  }

  status(): HubWatchStatus {
    return { ...this.current };
  }

  /** On in pull mode (the relay's ready frame says which), off otherwise. */
  setEnabled(on: boolean): void {
    if (on === this.enabled) return;
    this.enabled = on;
    if (on) this.connect();
    else this.stop("off", null);
  }

  /** A newer token is known: sign in with it if the watch was waiting for one. */
  tokenChanged(): void {
    if (this.enabled && this.current.state === "waiting_token") {
      if (this.reconnect) clearTimeout(this.reconnect);
      this.reconnect = null;
      this.connect();
    }
  }

  async close(): Promise<void> {
    this.enabled = false;
    const socket = this.socket;
    this.stop("off", null);
    if (socket && socket.readyState !== WebSocket.CLOSED) await new Promise<void>((resolve) => socket.once("close", () => resolve()));
  }

  private setState(state: HubWatchState, error: string | null): void {
    if (state !== this.current.state) this.current.since = Date.now();
    this.current.state = state;
    this.current.error = error;
  }

  private later(ms: number, run: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    this.timers.add(timer);
    return timer;
  }

  private stop(state: HubWatchState, error: string | null): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    if (this.reconnect) clearTimeout(this.reconnect);
    if (this.coalescing) clearTimeout(this.coalescing);
    this.reconnect = this.coalescing = null;
    this.mailPending = false;
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.removeAllListeners("message");
      if (socket.readyState === WebSocket.OPEN) socket.close(1000, "clawrelay agent stopping");
      else socket.terminate();
    }
    this.setState(state, error);
  }

  private connect(): void {
    if (!this.enabled || this.socket) return;
    const token = this.options.token();
    if (!token || token.expiresAt * 1000 <= Date.now()) return this.setState("waiting_token", "no hub token yet: the relay hands its token over once it has one");
    if (token.token === this.refused) return this.setState("waiting_token", this.current.error);
    this.setState("connecting", this.current.error);
    const socket = new WebSocket(this.url, { handshakeTimeout: this.timing.authTimeoutMs, perMessageDeflate: false });
    this.socket = socket;
    let lastFrameAt = Date.now();
    let authed = false;
    let ping: NodeJS.Timeout | null = null;
    const authTimer = this.later(this.timing.authTimeoutMs, () => {
      if (!authed) socket.terminate();
    });
    socket.on("open", () => socket.send(JSON.stringify({ type: "auth", token: token.token })));
    socket.on("message", (data) => {
      lastFrameAt = Date.now();
      let frame: { type?: unknown };
      try {
        frame = JSON.parse(data.toString()) as { type?: unknown };
      } catch {
        return;
      }
      if (frame.type === "auth_ok") {
        authed = true;
        clearTimeout(authTimer);
        this.attempt = 0;
        this.refused = null;
        this.setState("connected", null);
        this.options.logger.info("hub socket connected", { url: this.url });
        ping = setInterval(() => {
          if (Date.now() - lastFrameAt > this.timing.silenceMs) return socket.terminate();
          if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "ping" }));
        }, this.timing.pingMs);
        ping.unref();
        // Mail may have come while no socket listened: one pull now catches up.
        this.mail();
      } else if (frame.type === "inbox_update") {
        this.current.updates++;
        this.current.last_update_at = Date.now();
        this.mail();
      }
    });
    socket.on("error", (err) => {
      this.current.error = err.message;
    });
    socket.on("close", (code, reason) => {
      clearTimeout(authTimer);
      if (ping) clearInterval(ping);
      if (this.socket !== socket) return;
      this.socket = null;
      const why = reason.toString() || this.current.error || `closed with code ${code}`;
      if (code === 4001) {
        // The token was ended by a newer one: trying it again cannot work. Wait for the newer one.
        this.refused = token.token;
        this.options.logger.warn("hub socket refused the token; waiting for a newer one", { code, reason: why });
        this.setState("waiting_token", `the hub refused the token (4001 ${why}): waiting for a newer one from the relay or the credentials file`);
        if (this.options.token()?.token !== token.token) this.retry(nextDelay(this.attempt++, Math.random, this.timing.backoff));
        return;
      }
      const delay = nextDelay(this.attempt++, Math.random, this.timing.backoff);
      this.options.logger.warn("hub socket closed", { code, reason: why, retry_in_ms: delay });
      this.setState("disconnected", `closed (${code} ${why})`);
      this.retry(delay);
    });
  }

  private retry(delayMs: number): void {
    if (!this.enabled) return;
    if (this.reconnect) clearTimeout(this.reconnect);
    this.reconnect = setTimeout(() => {
      this.reconnect = null;
      this.connect();
    }, delayMs);
    this.reconnect.unref();
  }

  /** At most one onMail per coalescing window; mail during the window makes one more at its end. */
  private mail(): void {
    if (this.coalescing) {
      this.mailPending = true;
      return;
    }
    this.options.onMail();
    this.coalescing = setTimeout(() => {
      this.coalescing = null;
      if (this.mailPending) {
        this.mailPending = false;
        this.mail();
      }
    }, this.timing.coalesceMs);
    this.coalescing.unref();
  }
}
