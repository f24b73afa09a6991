// The hub link's running side, one of the agent's parts (agent.ts), beside its relay socket: the token
// sync (the credentials file and the relay on one token) and, in pull mode, the hub's WebSocket that asks
// the relay to pull the moment the hub has mail. The composition hands it the relay's hub_token frames and
// its ready (relayReady), and closes it with the agent. Covered by test/node/token-sync.test.ts,
// hub-watch.test.ts and hub-side.e2e.test.ts.
import { expiresAtSec, hubTokenFromSec } from "../../protocol/index.ts";
import type { ClientFrame, HubTokenFrame } from "../../protocol/index.ts";
import type { Logger } from "../logger.ts";
import type { AgentSettings } from "../settings.ts";
import { HubWatch } from "./hub-watch.ts";
import type { HubWatchOptions, HubWatchStatus } from "./hub-watch.ts";
import { TokenSync } from "./token-sync.ts";
import type { TokenSyncStatus } from "./token-sync.ts";

export interface HubSideStatus {
  /** As the relay's ready frame said: webhook, pull or off; null until connected (or from an older relay). */
  mode: string | null;
  /** The hub's WebSocket (held in pull mode). */
  watch: HubWatchStatus;
  /** The credentials file kept on the relay's token, if one is linked. */
  credentials: TokenSyncStatus | null;
}

export interface HubSideOptions {
  settings: AgentSettings;
  logger: Logger;
  /** The relay link: hub_pull and hub_token go up its socket (false: no authenticated socket now). */
  relay: { send(frame: ClientFrame): boolean };
  /** Tests shorten these, or run them on fake timers. */
  timing?: HubSideTiming;
}

export interface HubSideTiming {
  watch?: HubWatchOptions["timing"];
  /** How often the credentials file is looked at (token-sync.ts). */
  pollMs?: number;
}

export class HubSide {
  private mode: string | null = null;
  private readonly sync: TokenSync;
  private readonly watch: HubWatch;
  private closing: Promise<void> | null = null;

  constructor(options: HubSideOptions) {
    const { settings, logger, relay } = options;
    this.sync = new TokenSync({
      hubUrl: settings.hub_url,
      link: settings.hub_credentials ?? null,
      logger,
      // An older relay (its ready frame names no hub mode) would close the socket on a frame it does not know.
      sendUp: (token) => this.mode !== null && relay.send({ type: "hub_token", token: token.token, expires_at: expiresAtSec(token) }),
      onNewest: () => this.watch.tokenChanged(),
      ...(options.timing?.pollMs ? { pollMs: options.timing.pollMs } : {}),
    });
    this.watch = new HubWatch({
      hubUrl: settings.hub_url,
      logger,
      token: () => this.sync.newest(),
      // Nothing to do when the relay is away: it pulls as soon as the agent is back.
      onMail: () => void relay.send({ type: "hub_pull" }),
      ...(options.timing?.watch ? { timing: options.timing.watch } : {}),
    });
  }

  /** The relay authenticated the agent; `mode` from its ready frame. */
  relayReady(mode: string | undefined): void {
    this.mode = mode ?? null;
    this.sync.relayConnected();
    this.watch.setEnabled(mode === "pull");
  }

  relayToken(frame: HubTokenFrame): void {
    this.sync.fromRelay(hubTokenFromSec(frame.token, frame.expires_at));
  }

  status(): HubSideStatus {
    return { mode: this.mode, watch: this.watch.status(), credentials: this.sync.status() };
  }

  /** Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      this.sync.close();
      await this.watch.close();
    })());
  }
}
