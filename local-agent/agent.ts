// The long-lived local agent, as a short composition of parts that each own one concern and close with
// it: the gateway followed (gateway/gateway-watch.ts), the Society side (society/agent-society.ts), the
// relay link (relay/relay-link.ts), forwarding (forward/agent-forwarding.ts), delivery
// (delivery/agent-delivery.ts), live requests (live/agent-live.ts), the hub link's running side (hub/hub-side.ts), the local API
// (api/local-api.ts) and run.json (run-file.ts). The relay link's frames reach the parts by type through
// the handlers registered here. Returns a handle; only cli.ts touches process (signals, exit). Covered
// end to end by test/node/delivery.e2e.test.ts, cli-start-status.e2e.test.ts, forward-agent.e2e.test.ts and live-*.e2e.test.ts.
import type { AgentRunsIn, AgentStatus } from "./agent-status.ts";
import { DEFAULT_API_PORT } from "./api/api-server.ts";
import { createLocalApi } from "./api/local-api.ts";
import type { LocalApi } from "./api/local-api.ts";
import { openJournal, startDelivery } from "./delivery/agent-delivery.ts";
import type { AgentDelivery } from "./delivery/agent-delivery.ts";
import { DeliveryFeed } from "./inspector/delivery-feed.ts";
import { startForwarding } from "./forward/agent-forwarding.ts";
import type { AgentForwarding } from "./forward/agent-forwarding.ts";
import type { GatewaySource } from "./gateway/gateway-source.ts";
import { watchGateway } from "./gateway/gateway-watch.ts";
import type { GatewayWatch } from "./gateway/gateway-watch.ts";
import type { Environment } from "./gateway/openclaw-config.ts";
import type { PluginConfig } from "./gateway/plugin-config.ts";
import { HubSide } from "./hub/hub-side.ts";
import type { HubSideTiming } from "./hub/hub-side.ts";
import { settingsIdentity } from "./identity.ts";
import { startLive } from "./live/agent-live.ts";
import type { AgentLive } from "./live/agent-live.ts";
import type { Logger } from "./logger.ts";
import type { SocketTiming } from "./reconnecting-socket.ts";
import type { InboxAccess } from "./relay/messages.ts";
import { relayLink } from "./relay/relay-link.ts";
import type { RelayLink } from "./relay/relay-link.ts";
import { writeRunFile } from "./run-file.ts";
import type { RunFile } from "./run-file.ts";
import type { AgentSettings } from "./settings.ts";
import { startSociety } from "./society/agent-society.ts";
import type { AgentSociety } from "./society/agent-society.ts";

export interface AgentHandle {
  status(): AgentStatus;
  apiPort: number;
  /** Stops taking messages, abandons the one in flight unacknowledged, closes the socket. Idempotent. */
  close(): Promise<void>;
  /** Resolves when the relay retired this connection for a newer one of the same inbox. */
  replaced: Promise<void>;
}

export interface AgentOptions {
  runsIn?: AgentRunsIn;
  /** The plugin's config as it started with it (inside the gateway only), reported in the status. */
  pluginConfig?: PluginConfig;
  settings: AgentSettings;
  env: Environment;
  logger: Logger;
  /** Where `status` finds the running agent (run.json); omitted in tests. */
  runDir?: string;
  apiPort?: number;
  /** card.json to publish to the directory (see examples/card.json); none = not listed. */
  cardFile?: string;
  /** The delivery journal (delivery-journal.ts); none = the cursor lives in memory only. */
  journalFile?: string;
  /** Where gateway settings come from; default: openclaw.json, followed as it changes. */
  gateway?: GatewaySource;
  /** Hub-side timings (tests shorten them). */
  hubTiming?: HubSideTiming;
  /** The relay socket's timings (tests shorten them). */
  relayTiming?: Partial<SocketTiming>;
}

/** The parts, in the order they close: intake first, then the sockets, the API, and what they wrote to. */
interface Parts {
  gateway: GatewayWatch;
  delivery: AgentDelivery;
  society: AgentSociety;
  relay: RelayLink;
  hub: HubSide;
  api: LocalApi;
  forwarding: AgentForwarding;
  live: AgentLive;
  runFile: RunFile | null;
}

export async function startAgent(options: AgentOptions): Promise<AgentHandle> {
  const { settings, env, logger } = options;
  // The key may be the root key or one the root key listed for the inbox: the relay decides.
  const identity = { ...(await settingsIdentity(settings)), agentId: settings.agent_id };
  const access: InboxAccess = { relayUrl: settings.relay_url, agentId: settings.agent_id, identity };
  const startedAt = Date.now();
  const gateway = watchGateway({ settings, env, logger, ...(options.gateway ? { source: options.gateway } : {}), ...(options.runsIn ? { runsIn: options.runsIn } : {}) });
  const society = startSociety({ settings, identity, logger, gateway: gateway.settings, ...(options.cardFile ? { cardFile: options.cardFile } : {}) });
  const journal = openJournal(options.journalFile, settings.agent_id, logger);
  const relay = relayLink({ settings, identity, logger, journal, ...(options.relayTiming ? { timing: options.relayTiming } : {}) });
  const forwarding = startForwarding();
  const feed = new DeliveryFeed();
  const live = startLive({ agentId: settings.agent_id, logger, relay, forwarding, gateway, feed });
  const delivery = startDelivery({ settings, logger, journal, relay, target: gateway.target, forwarding, intercept: society.intercept, feed, heldCopies: live.heldCopies });
  const hub = new HubSide({ settings, logger, relay, ...(options.hubTiming ? { timing: options.hubTiming } : {}) });
  relay.on("message", (frame) => delivery.push(frame));
  relay.on("abandon", (frame) => delivery.abandon(frame));
  relay.on("request", (frame) => live.handle(frame));
  relay.on("hub_token", (frame) => hub.relayToken(frame));
  relay.onState((state, detail) => {
    delivery.relayState(state);
    if (state === "connected") hub.relayReady(detail.hubMode);
  });
  const retry = (why: string) => retryNow(delivery, relay, logger, why);
  // A fixed token or port ends a config-error pause (or a wait for a gateway) at once.
  gateway.onTargetChange(() => void (delivery.paused() && retry("the gateway settings changed")));
  // Asked only by requests and the handle, which all come once `api` below exists.
  const status = (): AgentStatus => statusOf(options, startedAt, { gateway, delivery, society, relay, hub, api, live });
  const api = createLocalApi({ society: society.apiDeps(relay.connected, startedAt), agent: { status, access, retry: () => retry("asked") }, inspector: { feed: delivery.feed, retry: () => retry("the inspector's Retry now") } });
  const parts: Parts = { gateway, delivery, society, relay, hub, api, forwarding, live, runFile: null };
  await launch(parts, options, startedAt);
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= closeParts(parts).then(() => logger.info("agent stopped", { delivered: delivery.status().delivered })));
  return { apiPort: api.port, status, replaced: relay.replaced, close };
}

/** Listens, writes run.json, connects to the relay and lists the card; a failure on the way closes what started. */
async function launch(parts: Parts, options: AgentOptions, startedAt: number): Promise<void> {
  const { settings, env, logger } = options;
  try {
    await parts.api.listen(options.apiPort ?? settings.api_port ?? (Number(env.SOCIETY_AI_API_PORT) || DEFAULT_API_PORT));
    parts.runFile = writeRunFile(options.runDir, { apiPort: parts.api.port, startedAt });
    parts.relay.start();
    await parts.society.publish();
  } catch (err) {
    await closeParts(parts);
    throw err;
  }
  const { port, problem } = parts.gateway.status();
  logger.info("agent started", { agent_id: settings.agent_id, relay: settings.relay_url, gateway_port: port, api_port: parts.api.port, inspector: `http://127.0.0.1:${parts.api.port}/` });
  if (problem !== null) logger.warn("no gateway to post to: gateway-bound messages wait; events forwarded to local apps go on", { error: problem });
}

/** `clawrelay retry`, the inspector's Retry now, or a changed gateway: every wait cut short at once, and what was woken. */
function retryNow(delivery: AgentDelivery, relay: RelayLink, logger: Logger, why: string) {
  const woke = { ...delivery.retryNow(), relay_reconnect: relay.reconnectNow() };
  logger.info("retrying now", { why, woken: woke.woken, hold_cut_ms: woke.hold_cut_ms, probe_now: woke.probe_now, relay_reconnect: woke.relay_reconnect, paused: woke.paused });
  return woke;
}

function statusOf(options: AgentOptions, startedAt: number, parts: Omit<Parts, "forwarding" | "runFile">): AgentStatus {
  return {
    agent_id: options.settings.agent_id,
    runs_in: options.runsIn ?? "standalone",
    ...(options.pluginConfig ? { plugin_config: { ...options.pluginConfig } } : {}),
    relay: parts.relay.status(),
    gateway: parts.gateway.status(),
    delivery: { ...parts.delivery.status(), cursor: parts.relay.cursor },
    delegation: parts.society.status(),
    hub: parts.hub.status(),
    live: { ...parts.live.status(), relay: parts.relay.live() },
    api_port: parts.api.port,
    started_at: startedAt,
  };
}

/** Stops taking messages first (the ones in flight get their grace), then the sockets, the API, and what they wrote to. */
async function closeParts(parts: Parts): Promise<void> {
  parts.gateway.close();
  await parts.delivery.stop();
  await parts.society.close();
  await parts.relay.close();
  await parts.hub.close();
  await parts.api.close();
  await parts.delivery.close();
  parts.live.close();
  parts.forwarding.close();
  parts.runFile?.close();
}
