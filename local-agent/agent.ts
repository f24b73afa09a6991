// The long-lived local agent: relay socket → ordered delivery into the gateway → acks, plus the local
// API and the hub link's side (hub/hub-side.ts: one shared hub token, the hub's WebSocket in pull mode).
// Returns a handle; only cli.ts touches process (signals, exit). Covered end to end by
// test/node/delivery.e2e.test.ts, cli-start-status.e2e.test.ts and forward-agent.e2e.test.ts.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_API_PORT, startApiServer } from "./api-server.ts";
import type { ApiServer } from "./api-server.ts";
import { publishCard, readCardFile } from "./society/card-file.ts";
import { Delegator } from "./society/delegation.ts";
import { DeliveryJournal } from "./delivery/delivery-journal.ts";
import { DeliveryLoop } from "./delivery/delivery.ts";
import { DeliveryFeed } from "./inspector/delivery-feed.ts";
import { inspectorPages } from "./inspector/inspector-routes.ts";
import { queueSummary, replayMessage } from "./relay/messages.ts";
import { DEFAULTS } from "./backoff.ts";
import { signedRelayCall } from "./relay/relay-api.ts";
import { createGatewayClient } from "./delivery/gateway-forwarder.ts";
import { AgentError } from "./errors.ts";
import { settingsIdentity } from "./identity.ts";
import type { Logger } from "./logger.ts";
import type { GatewaySource } from "./gateway/gateway-source.ts";
import type { Environment, GatewaySettings } from "./gateway/openclaw-config.ts";
import type { PluginConfig } from "./gateway/plugin-config.ts";
import type { GatewayTarget } from "./delivery/gateway-forwarder.ts";
import type { NoGateway } from "./delivery/delivery-options.ts";
import { RelayClient } from "./relay/relay-client.ts";
import { HubSide } from "./hub/hub-side.ts";
import type { HubSideOptions } from "./hub/hub-side.ts";
import { societyRoutes } from "./society/society-api.ts";
import { TaskRunner } from "./society/task-runner.ts";
import type { AgentSettings } from "./settings.ts";
import { isHubPrefix } from "../protocol/index.ts";
import type { HubPrefix } from "../protocol/index.ts";
import type { AgentRunsIn, AgentStatus } from "./agent-status.ts";
import { gatewayTarget, portIsListening } from "./gateway/agent-gateway.ts";
import { followedGatewaySource } from "./gateway/settings-follow.ts";
import { settingsPath } from "./settings.ts";

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
  hubTiming?: { watch?: HubSideOptions["watchTiming"]; pollMs?: number };
}

export const DEFAULT_DELEGATE_TIMEOUT_MS = 180_000;
/** How often agent.json and openclaw.json are looked at (one stat each) while nothing is posted. */
const FOLLOW_EVERY_MS = 1_000;

/** Where posts go, as a comparable string (a NoGateway's problem included). */
const targetKey = (t: GatewayTarget | NoGateway) => ("problem" in t ? `none:${t.problem}` : `${t.port}|${t.hooksPath}|${t.hooksToken}`);

/** The gateway as the status shows it: where posts go, and why none can when there is no hooks token. */
function gatewayView(gateway: GatewaySettings, target: GatewayTarget | NoGateway): Omit<AgentStatus["gateway"], "config_error"> {
  const problem = "problem" in target ? target.problem : null;
  return { port: gateway.port, hooks_path: gateway.hooksPath, config_path: gateway.configPath, auth_source: gateway.auth.source, problem };
}

function removeIfOurs(runFile: string, record: string): void {
  try {
    if (readFileSync(runFile, "utf8").trim() === record) rmSync(runFile, { force: true });
  } catch {
    // Already gone.
  }
}

export async function startAgent(options: AgentOptions): Promise<AgentHandle> {
  const { settings, env, logger } = options;
  // The key may be the root key or one the root key listed for the inbox: the relay decides.
  const identity = { ...(await settingsIdentity(settings)), agentId: settings.agent_id };
  // agent.json is followed as openclaw.json is (gateway/settings-follow.ts); the plugin's live config is its own.
  const followed = options.gateway ? null : followedGatewaySource(settingsPath(env), settings, env, logger);
  const source = options.gateway ?? followed!;
  // No hooks token (no OpenClaw here, or hooks not set up) is no reason to stop: events forwarded to
  // local apps still go, and gateway-bound messages wait, paused with the problem, until it is set up
  // (openclaw.json is followed as it changes). Once usable, unusable changes keep the last good target.
  const targetOf = (gateway: GatewaySettings): GatewayTarget | NoGateway => {
    try {
      return gatewayTarget(gateway);
    } catch (err) {
      return { problem: (err as Error).message };
    }
  };
  const initial = source.current();
  let current = { gateway: initial, target: targetOf(initial) };
  // Inside the gateway there is a gateway: hooks not set up are its own config's mistake, said at its
  // start in its log (docs/openclaw-setup.md), not by messages waiting.
  if (options.runsIn === "gateway plugin" && "problem" in current.target) throw new AgentError("no_hooks_token", current.target.problem);
  let seen = initial;
  const refresh = () => {
    const gateway = source.current();
    if (gateway === seen) return current;
    seen = gateway;
    const target = targetOf(gateway);
    if ("problem" in target && !("problem" in current.target)) logger.error("gateway settings unusable; keeping the previous ones", { error: target.problem });
    else current = { gateway, target };
    return current;
  };
  const gatewayClient = createGatewayClient();
  const startedAt = Date.now();
  const relay: AgentStatus["relay"] = { url: settings.relay_url, state: "disconnected", since: startedAt, backlog: null, error: null };

  const card = options.cardFile ? readCardFile(options.cardFile) : null;
  const delegator = new Delegator({ relayUrl: settings.relay_url, identity, timeoutMs: settings.delegate_timeout_ms ?? DEFAULT_DELEGATE_TIMEOUT_MS, logger });
  const tasks = new TaskRunner({
    relayUrl: settings.relay_url,
    identity,
    card: () => card,
    chat: () => {
      const now = refresh();
      return { port: now.gateway.port, authToken: now.gateway.authToken, authProblem: now.gateway.auth.problem, model: settings.openclaw_agent ?? "openclaw", enabled: now.gateway.chatCompletionsEnabled };
    },
    timeoutMs: settings.delegate_timeout_ms ?? DEFAULT_DELEGATE_TIMEOUT_MS,
    logger,
    reachable: (port) => portIsListening(port),
  });

  const feed = new DeliveryFeed();
  const access = { relayUrl: settings.relay_url, agentId: settings.agent_id, identity };
  // What the relay granted (its `ready` frame); until then what is asked.
  let window = settings.window ?? DEFAULTS.window;
  const loop = new DeliveryLoop({
    agentId: settings.agent_id,
    // Asked before every post: a fixed hooks token or path takes effect on the next message.
    target: () => refresh().target,
    post: (target, message, key) => gatewayClient.post(target, message, key),
    ack: (id) => client.ack(id),
    reject: (id, rejection) => client.reject(id, rejection),
    hubPrefix: () => hubPrefix,
    ...(settings.delivery_concurrency !== undefined ? { concurrency: settings.delivery_concurrency } : {}),
    logger,
    // Results of our own delegations go to their waiting callers; tasks for us go to the task runner.
    intercept: (envelope) => delegator.intercept(envelope) || tasks.intercept(envelope),
    onEvent: (event) => feed.record(event),
    window: () => window,
    // A failing app's set-aside events come back through the owner API, as `clawrelay messages replay`.
    replay: async (id) => (await replayMessage(access, id)).id,
  });

  const journal = options.journalFile ? DeliveryJournal.open(options.journalFile, { agentId: settings.agent_id }) : null;
  if (journal?.freshReason) logger.warn("delivery journal started afresh", { path: options.journalFile ?? null, reason: journal.freshReason });

  let hubPrefix: HubPrefix = settings.hub?.prefix ?? "agentgram";
  let markReplaced: () => void = () => {};
  const replaced = new Promise<void>((resolve) => (markReplaced = resolve));
  const client: RelayClient = new RelayClient({
    relayUrl: settings.relay_url,
    identity,
    window: settings.window,
    logger,
    ...(journal ? { journal } : {}),
    onMessage: (frame) => loop.push(frame),
    onDisconnect: () => loop.dropQueued(),
    onHubToken: (frame) => hubSide.relayToken(frame),
    onState: (state, detail) => {
      if (state === "connected" && relay.state !== "connected") feed.connections++;
      if (state === "connected") hubSide.relayReady(detail.hubMode);
      relay.state = state;
      relay.since = Date.now();
      relay.backlog = detail.backlog ?? relay.backlog;
      window = detail.window ?? window;
      // Only the two prefixes hubs use: a relay's word cannot steer posts to another gateway path.
      if (isHubPrefix(detail.hubPrefix)) hubPrefix = detail.hubPrefix;
      relay.error = detail.error ?? (state === "connected" ? null : relay.error);
      if (state === "replaced") markReplaced();
    },
  });

  const hubSide = new HubSide({
    settings,
    logger,
    relay: { sendHubPull: () => client.sendHubPull(), sendHubToken: (token, expiresAt) => client.sendHubToken(token, expiresAt) },
    ...(options.hubTiming?.watch ? { watchTiming: options.hubTiming.watch } : {}),
    ...(options.hubTiming?.pollMs ? { pollMs: options.hubTiming.pollMs } : {}),
  });

  let api: ApiServer | null = null;
  let listed = false;
  const status = (): AgentStatus => ({
    agent_id: settings.agent_id,
    runs_in: options.runsIn ?? "standalone",
    ...(options.pluginConfig ? { plugin_config: { ...options.pluginConfig } } : {}),
    relay: { ...relay },
    gateway: { ...gatewayView(current.gateway, current.target), config_error: source.error, settings_file: followed?.settingsFile ? { ...followed.settingsFile } : null },
    delivery: { ...loop.status, recent_rejections: [...loop.status.recent_rejections], cursor: client.cursor, forwards: loop.forwards.status() },
    delegation: { waiting: delegator.waiting, late_results_dropped: delegator.lateResultsDropped },
    hub: hubSide.status(),
    api_port: api?.port ?? 0,
    started_at: startedAt,
  });

  const retryNow = (why: string) => {
    const woke = { ...loop.retryNow(), relay_reconnect: client.reconnectNow() };
    logger.info("retrying now", { why, woken: woke.woken, hold_cut_ms: woke.hold_cut_ms, probe_now: woke.probe_now, relay_reconnect: woke.relay_reconnect, paused: woke.paused });
    return woke;
  };
  // Followed between posts too: a fixed token or port ends a config-error pause (or a wait for a gateway)
  // at once, rather than after the paused message's 60 s; the next attempt uses the new target.
  let lastTarget = targetKey(current.target);
  const follow = setInterval(() => {
    const now = targetKey(refresh().target);
    if (now === lastTarget) return;
    lastTarget = now;
    if (loop.status.paused !== null) retryNow("the gateway settings changed");
  }, FOLLOW_EVERY_MS);
  follow.unref();

  const inspector = inspectorPages({ status, feed, access, retry: () => retryNow("the inspector's Retry now") });
  api = await startApiServer(options.apiPort ?? settings.api_port ?? (Number(env.SOCIETY_AI_API_PORT) || DEFAULT_API_PORT), {
    ...societyRoutes({
      relayUrl: settings.relay_url,
      agentName: () => card?.name ?? settings.display_name ?? settings.agent_id,
      relayConnected: () => relay.state === "connected",
      listed: () => listed,
      gatewayReachable: () => portIsListening(refresh().gateway.port),
      apiPort: () => api?.port ?? 0,
      startedAt,
      delegator,
    }),
    // The relay holds the truth about the backlog and the dead shelf: asked on every status call.
    "GET /clawrelay/status": async () => {
      const relayQueue = await queueSummary(access).catch((err: Error) => ({ error: err.message }));
      const hub = await signedRelayCall(settings.relay_url, identity, "GET", `/inbox/${settings.agent_id}/hub`).catch(() => null);
      return { status: 200, body: { ...status(), relay_queue: relayQueue, relay_hub: hub?.status === 200 ? hub.body : null } };
    },
    // `clawrelay retry` (and the inspector's Retry now): every wait cut short at once, and what was woken.
    "POST /clawrelay/retry": async () => ({ status: 200, body: retryNow("asked") }),
  }, inspector.pages);
  const runFile = options.runDir ? join(options.runDir, "run.json") : null;
  const runRecord = JSON.stringify({ pid: process.pid, api_port: api.port, started_at: startedAt });
  if (runFile) writeFileSync(runFile, runRecord + "\n", { mode: 0o600 });
  client.start();
  if (card) {
    await publishCard(settings.relay_url, identity, card, logger);
    listed = true;
  }
  else logger.info("no card.json: this agent is not listed in the directory", { path: options.cardFile ?? null });
  logger.info("agent started", { agent_id: settings.agent_id, relay: settings.relay_url, gateway_port: current.gateway.port, api_port: api.port, inspector: `http://127.0.0.1:${api.port}/` });
  if ("problem" in current.target) logger.warn("no gateway to post to: gateway-bound messages wait; events forwarded to local apps go on", { error: current.target.problem });

  let closing: Promise<void> | null = null;
  return {
    apiPort: api.port,
    status,
    replaced,
    close: () =>
      (closing ??= (async () => {
        clearInterval(follow);
        await loop.stop();
        await Promise.race([tasks.idle(), new Promise((r) => setTimeout(r, 2000))]);
        await client.close();
        await hubSide.close();
        await api?.close();
        gatewayClient.close();
        journal?.close();
        // Only our own: a replaced agent must not delete the run.json of the one that replaced it.
        if (runFile) removeIfOurs(runFile, runRecord);
        logger.info("agent stopped", { delivered: loop.status.delivered });
      })()),
  };
}
