// The local agent as a gateway service: the same startAgent as `clawrelay start`, with the gateway's
// live config as the source of the hooks token, hooks path, port and gateway token. It still posts to
// the loopback hooks endpoint, exactly as the hub would (the in-process hook dispatch is reserved for
// OpenClaw's bundled plugins), so mappings, idempotency and every answer are the same as standalone.
import { join } from "node:path";
import type { OpenClawPluginApi, OpenClawPluginService, OpenClawPluginServiceContext, PluginLogger } from "openclaw/plugin-sdk/plugin-entry";
import { startAgent } from "../local-agent/agent.ts";
import type { AgentHandle } from "../local-agent/agent.ts";
import { cardPath } from "../local-agent/society/card-file.ts";
import { liveGatewaySource } from "../local-agent/gateway/gateway-source.ts";
import { formatEvent } from "../local-agent/logger.ts";
import type { LogFields, Logger } from "../local-agent/logger.ts";
import type { Environment } from "../local-agent/gateway/openclaw-config.ts";
import { journalPath, loadSettings, settingsHome } from "../local-agent/settings.ts";

export const PLUGIN_ID = "clawrelay";

/** plugins.entries.clawrelay.config (openclaw.plugin.json's configSchema says the same). */
export interface PluginConfig {
  /** clawrelay's settings folder (agent.json, card.json, the delivery journal). */
  home?: string;
  /** The local search/delegate API's port (default 19791, or SOCIETY_AI_API_PORT). */
  apiPort?: number;
  /** The gateway's port when it was started with --port (the config cannot tell). */
  gatewayPort?: number;
  /** Which OpenClaw agent runs delegated tasks: "openclaw" or "openclaw/<agentId>". */
  openclawAgent?: string;
}

function pluginConfigOf(value: unknown): PluginConfig {
  const c = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  const port = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 65535 ? v : undefined);
  return {
    ...(typeof c.home === "string" && c.home !== "" ? { home: c.home } : {}),
    ...(port(c.apiPort) !== undefined ? { apiPort: port(c.apiPort) } : {}),
    ...(port(c.gatewayPort) ? { gatewayPort: port(c.gatewayPort) } : {}),
    ...(typeof c.openclawAgent === "string" && c.openclawAgent !== "" ? { openclawAgent: c.openclawAgent } : {}),
  };
}

/** Our events into the gateway's log, prefixed so they can be found there. */
export function gatewayLogger(log: PluginLogger): Logger {
  const line = (event: string, fields?: LogFields) => `clawrelay: ${formatEvent(event, fields)}`;
  return {
    info: (event, fields) => log.info(line(event, fields)),
    warn: (event, fields) => log.warn(line(event, fields)),
    error: (event, fields) => log.error(line(event, fields)),
  };
}

/**
 * The service registered by the plugin entry. `register()` runs more than once (full and discovery
 * modes), so nothing happens until the gateway calls `start`.
 */
export function relayService(api: OpenClawPluginApi, env: Environment = process.env): OpenClawPluginService {
  let agent: AgentHandle | null = null;
  return {
    id: PLUGIN_ID,
    async start(ctx: OpenClawPluginServiceContext) {
      const config = pluginConfigOf(api.pluginConfig);
      const logger = gatewayLogger(ctx.logger);
      const home = config.home ?? settingsHome(env);
      // No agent.json yet: the plugin cannot claim an inbox by itself (that prints a token to keep).
      const settings = loadSettings(join(home, "agent.json"));
      if (config.openclawAgent) settings.openclaw_agent = config.openclawAgent;
      // Inside the gateway its config is the truth; the gateway hot-reloads it, so it is read live.
      const liveConfig = () => api.runtime?.config?.current?.() ?? ctx.config;
      const gateway = liveGatewaySource(liveConfig, env, config.gatewayPort ? { port: config.gatewayPort } : {}, "the gateway's own config (clawrelay plugin)");
      const apiPort = config.apiPort ?? settings.api_port;
      agent = await startAgent({
        settings,
        env,
        logger,
        gateway,
        runsIn: "gateway plugin",
        runDir: home,
        cardFile: cardPath(home),
        journalFile: journalPath(home),
        ...(apiPort !== undefined ? { apiPort } : {}),
      });
      const started = agent;
      // A standalone agent of the same inbox took over: stop here rather than fight over the socket.
      void started.replaced.then(() => {
        logger.warn("another clawrelay agent connected to this inbox; the plugin's agent stopped (restart the gateway or run: openclaw plugins reload clawrelay)");
        return started.close();
      });
    },
    async stop() {
      const running = agent;
      agent = null;
      await running?.close();
    },
  };
}
