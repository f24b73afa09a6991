// The relay link, one of the agent's parts (agent.ts): the socket to this agent's inbox (relay-client.ts)
// and what the rest of the agent reads of it — its state for the status, the window and hub prefix the
// relay's `ready` granted, and `replaced` (another agent of the same inbox took over). Frames reach the
// other parts by type through on(), registered by the composition; they answer through ack, reject and
// send. Covered by test/node/delivery.e2e.test.ts, cli-start-status.e2e.test.ts and restarts.e2e.test.ts.
import { isHubPrefix } from "../../protocol/index.ts";
import type { ClientFrame, HubPrefix } from "../../protocol/index.ts";
import type { AgentStatus } from "../agent-status.ts";
import { DEFAULTS } from "../backoff.ts";
import type { Identity } from "../identity.ts";
import type { Logger } from "../logger.ts";
import type { SocketTiming } from "../reconnecting-socket.ts";
import type { AgentSettings } from "../settings.ts";
import { RelayClient } from "./relay-client.ts";
import type { FinishedLog, RejectInfo } from "./relay-client.ts";

export interface RelayLinkOptions {
  settings: AgentSettings;
  identity: Identity;
  logger: Logger;
  journal: FinishedLog | null;
  timing?: Partial<SocketTiming>;
}

export interface RelayLink {
  status(): AgentStatus["relay"];
  connected(): boolean;
  /** The unacknowledged messages the relay sends at most: what its `ready` granted; until then what is asked. */
  window(): number;
  /** The hub's sub-path prefix for envelopes the relay delivers itself (from `ready`). */
  hubPrefix(): HubPrefix;
  /** Every id up to here is finished. */
  readonly cursor: number;
  /** The relay of the current socket sends live requests (its `ready` named the feature). */
  live(): boolean;
  ack(id: number): void;
  reject(id: number, info: RejectInfo): void;
  send(frame: ClientFrame): boolean;
  reconnectNow(): boolean;
  on: RelayClient["on"];
  onState: RelayClient["onState"];
  /** Resolves when the relay retired this connection for a newer one of the same inbox. */
  replaced: Promise<void>;
  start(): void;
  close(): Promise<void>;
}

export function relayLink(options: RelayLinkOptions): RelayLink {
  const { settings } = options;
  const client = new RelayClient({
    relayUrl: settings.relay_url,
    identity: options.identity,
    logger: options.logger,
    ...(settings.window !== undefined ? { window: settings.window } : {}),
    ...(options.journal ? { journal: options.journal } : {}),
    ...(options.timing ? { timing: options.timing } : {}),
  });
  const view: AgentStatus["relay"] = { url: settings.relay_url, state: "disconnected", since: Date.now(), backlog: null, error: null };
  let window = settings.window ?? DEFAULTS.window;
  let hubPrefix: HubPrefix = settings.hub?.prefix ?? "agentgram";
  let markReplaced: () => void = () => {};
  const replaced = new Promise<void>((resolve) => (markReplaced = resolve));
  client.onState((state, detail) => {
    view.state = state;
    view.since = Date.now();
    view.backlog = detail.backlog ?? view.backlog;
    window = detail.window ?? window;
    // Only the two prefixes hubs use: a relay's word cannot steer posts to another gateway path.
    if (isHubPrefix(detail.hubPrefix)) hubPrefix = detail.hubPrefix;
    view.error = detail.error ?? (state === "connected" ? null : view.error);
    if (state === "replaced") markReplaced();
  });
  return {
    status: () => ({ ...view }),
    connected: () => view.state === "connected",
    window: () => window,
    hubPrefix: () => hubPrefix,
    get cursor() {
      return client.cursor;
    },
    live: () => client.liveMode,
    ack: (id) => client.ack(id),
    reject: (id, info) => client.reject(id, info),
    send: (frame) => client.send(frame),
    reconnectNow: () => client.reconnectNow(),
    on: (type, handler) => client.on(type, handler),
    onState: (listener) => client.onState(listener),
    replaced,
    start: () => client.start(),
    close: () => client.close(),
  };
}
