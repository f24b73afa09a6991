// The running agent's side of the hub link, beside its relay socket: the token sync (the credentials
// file and the relay on one token) and, in pull mode, the hub's WebSocket that asks the relay to pull the
// moment the hub has mail. agent.ts feeds it the relay's frames and closes it with the agent. Covered by
// test/node/token-sync.test.ts and test/node/hub-watch.test.ts.
import type { HubTokenFrame } from "../../protocol/index.ts";
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
  relay: { sendHubPull(): boolean; sendHubToken(token: string, expiresAt: number): boolean };
  /** Tests shorten these. */
  watchTiming?: HubWatchOptions["timing"];
  pollMs?: number;
}

export class HubSide {
  private mode: string | null = null;
  private readonly sync: TokenSync;
  private readonly watch: HubWatch;

  constructor(options: HubSideOptions) {
    const { settings, logger, relay } = options;
    this.sync = new TokenSync({
      hubUrl: settings.hub_url,
      link: settings.hub_credentials ?? null,
      logger,
      // An older relay (its ready frame names no hub mode) would close the socket on a frame it does not know.
      sendUp: (token) => this.mode !== null && relay.sendHubToken(token.token, token.expiresAt),
      onNewest: () => this.watch.tokenChanged(),
      ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    });
    this.watch = new HubWatch({
      hubUrl: settings.hub_url,
      logger,
      token: () => this.sync.newest(),
      // Nothing to do when the relay is away: it pulls as soon as the agent is back.
      onMail: () => void relay.sendHubPull(),
      ...(options.watchTiming ? { timing: options.watchTiming } : {}),
    });
  }

  /** The relay authenticated the agent; `mode` from its ready frame. */
  relayReady(mode: string | undefined): void {
    this.mode = mode ?? null;
    this.sync.relayConnected();
    this.watch.setEnabled(mode === "pull");
  }

  relayToken(frame: HubTokenFrame): void {
    this.sync.fromRelay({ token: frame.token, expiresAt: frame.expires_at });
  }

  status(): HubSideStatus {
    return { mode: this.mode, watch: this.watch.status(), credentials: this.sync.status() };
  }

  async close(): Promise<void> {
    this.sync.close();
    await this.watch.close();
  }
}
