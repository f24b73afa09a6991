// The hub's WebSocket (/hub/ws), held while the inbox pulls: today's hub pushes nothing, but it tells a
// signed-in socket {"type":"inbox_update"} 28–60 ms after new mail, so the agent asks the relay to pull
// at once (hub_pull) instead of the relay polling often (worker/hub/hub-schedule.ts backs off while idle).
// The hub's rules: {"type":"auth","token":JWT} within 10 s → {"type":"auth_ok"}, or close 4001; then
// {"type":"heartbeat"} from it, and a frame from us at least every 60 s (we ping every 25 s) or it closes
// the socket. A 4001 means the token was refreshed away: we wait for a newer one (from the relay or the
// credentials file) instead of trying it again. Connecting, the sign-in deadline, pings, silence and
// reconnects are the reconnecting socket's (../reconnecting-socket.ts); this file keeps the hub's frames.
// Used by hub-side.ts; covered by test/node/hub-watch.test.ts.
import { DEFAULTS } from "../backoff.ts";
import type { Logger } from "../logger.ts";
import { ReconnectingSocket } from "../reconnecting-socket.ts";
import type { SocketEnd, SocketFrame, SocketTiming } from "../reconnecting-socket.ts";
import type { HubToken } from "../../protocol/index.ts";

export interface HubWatchTiming extends SocketTiming {
  /** inbox_update bursts: at most one hub_pull per this window (one more follows at its end). */
  coalesceMs: number;
}

export const HUB_WATCH_DEFAULTS: HubWatchTiming = {
  authDeadlineMs: 10_000,
  pingEveryMs: 25_000,
  /** The hub sends a heartbeat every 15–30 s: silence this long means a half-open socket. */
  silenceMs: 75_000,
  coalesceMs: 200,
  backoff: { initialDelayMs: DEFAULTS.initialDelayMs, maxDelayMs: DEFAULTS.maxDelayMs, factor: DEFAULTS.factor },
};

/** The hub's close code for a token it does not take (refreshed away, expired, unknown). */
const TOKEN_REFUSED = 4001;

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
  token(): HubToken | null;
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
  private readonly socket: ReconnectingSocket;
  private enabled = false;
  /** The token the hub closed 4001 for: not tried again. */
  private refused: string | null = null;
  /** The token the current connection signs in with. */
  private signingWith: HubToken | null = null;
  private coalescing: NodeJS.Timeout | null = null;
  private mailPending = false;
  private readonly current: HubWatchStatus;
  private readonly options: HubWatchOptions;

  constructor(options: HubWatchOptions) {
    this.options = options;
    this.timing = { ...HUB_WATCH_DEFAULTS, ...options.timing };
    this.url = hubWsUrl(options.hubUrl);
    this.current = { state: "off", url: this.url, since: Date.now(), last_update_at: null, updates: 0, error: null };
    this.socket = new ReconnectingSocket({
      url: this.url,
      timing: this.timing,
      pingFrame: JSON.stringify({ type: "ping" }),
      stopReason: "clawrelay agent stopping",
      protocol: {
        beforeConnect: () => this.pickToken(),
        opened: () => void this.socket.send(JSON.stringify({ type: "auth", token: this.signingWith?.token })),
        frame: (frame) => this.receive(frame),
        ended: (end) => this.ended(end),
      },
      onState: (state) => {
        if (state === "connecting") this.setState("connecting", this.current.error);
      },
    });
  }

  status(): HubWatchStatus {
    return { ...this.current };
  }

  /** On in pull mode (the relay's ready frame says which), off otherwise. */
  setEnabled(on: boolean): void {
    if (on === this.enabled) return;
    this.enabled = on;
    if (on) return this.socket.start();
    this.stopMail();
    // Not awaited: turning off is immediate in the status; the socket's close completes on its own.
    void this.socket.stop();
    this.setState("off", null);
  }

  /** A newer token is known: sign in with it if the watch was waiting for one. */
  tokenChanged(): void {
    if (this.enabled && this.current.state === "waiting_token") this.socket.connectNow();
  }

  async close(): Promise<void> {
    this.enabled = false;
    this.stopMail();
    this.setState("off", null);
    await this.socket.close();
  }

  private setState(state: HubWatchState, error: string | null): void {
    if (state !== this.current.state) this.current.since = Date.now();
    this.current.state = state;
    this.current.error = error;
  }

  /** The token to sign in with, or false (waiting for one) when there is none worth trying. */
  private pickToken(): boolean {
    const token = this.options.token();
    if (!token || token.expiresAtMs <= Date.now()) {
      this.setState("waiting_token", "no hub token yet: the relay hands its token over once it has one");
      return false;
    }
    if (token.token === this.refused) {
      this.setState("waiting_token", this.current.error);
      return false;
    }
    this.signingWith = token;
    return true;
  }

  private receive(frame: SocketFrame): void {
    if (frame.type === "auth_ok") {
      this.refused = null;
      this.socket.markAuthenticated();
      this.setState("connected", null);
      this.options.logger.info("hub socket connected", { url: this.url });
      // Mail may have come while no socket listened: one pull now catches up.
      this.mail();
    } else if (frame.type === "inbox_update") {
      this.current.updates++;
      this.current.last_update_at = Date.now();
      this.mail();
    }
  }

  private ended(end: SocketEnd): number | null {
    const why = end.reason || end.error || this.current.error || `closed with code ${end.code}`;
    const token = this.signingWith;
    if (end.code === TOKEN_REFUSED && token) {
      // The token was ended by a newer one: trying it again cannot work. Wait for the newer one.
      this.refused = token.token;
      this.options.logger.warn("hub socket refused the token; waiting for a newer one", { code: end.code, reason: why });
      this.setState("waiting_token", `the hub refused the token (4001 ${why}): waiting for a newer one from the relay or the credentials file`);
      return this.options.token()?.token !== token.token ? end.backoffMs() : null;
    }
    const delay = end.backoffMs();
    this.options.logger.warn("hub socket closed", { code: end.code, reason: why, retry_in_ms: delay });
    this.setState("disconnected", `closed (${end.code} ${why})`);
    return delay;
  }

  private stopMail(): void {
    if (this.coalescing) clearTimeout(this.coalescing);
    this.coalescing = null;
    this.mailPending = false;
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
