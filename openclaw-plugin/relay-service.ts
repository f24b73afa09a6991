// The local agent as a gateway service: the same startAgent as `clawrelay start`, with the gateway's
// live config as the source of the hooks token, hooks path, port and gateway token. It still posts to
// the loopback hooks endpoint, exactly as the hub would (the in-process hook dispatch is reserved for
// OpenClaw's bundled plugins), so mappings, idempotency and every answer are the same as standalone.
// Covered by test/node/plugin-service.e2e.test.ts, terminal-output.test.ts (gatewayLogger) and
// test/openclaw/doctor-plugin.interop.test.ts.
import { join } from "node:path";
import type { OpenClawPluginApi, OpenClawPluginService, OpenClawPluginServiceContext, PluginLogger } from "openclaw/plugin-sdk/plugin-entry";
import { startAgent } from "../local-agent/agent.ts";
import type { AgentHandle } from "../local-agent/agent.ts";
import { cardPath } from "../local-agent/society/card-file.ts";
import { liveGatewaySource } from "../local-agent/gateway/gateway-source.ts";
import { terminalOutput } from "../local-agent/cli/terminal-text.ts";
import { formatEvent } from "../local-agent/logger.ts";
import type { LogFields, Logger } from "../local-agent/logger.ts";
import type { Environment } from "../local-agent/gateway/openclaw-config.ts";
import { pluginConfigOf } from "../local-agent/gateway/plugin-config.ts";
import { AgentError } from "../local-agent/errors.ts";
import { journalPath, loadSettings, settingsHome } from "../local-agent/settings.ts";
import type { AgentSettings } from "../local-agent/settings.ts";

export const PLUGIN_ID = "clawrelay";

/** What the plugin's agent logs when another agent of the same inbox (a `clawrelay start`) takes it. */
export const REPLACED_TEXT =
  "another clawrelay agent (a standalone `clawrelay start`) connected to this inbox; the plugin's agent stopped. To run standalone, turn the plugin off, or it takes the inbox back when the gateway restarts: openclaw plugins disable clawrelay. To run here again: stop the standalone agent, then openclaw plugins reload clawrelay";

/**
 * The settings in the plugin's home. The CLI's own advice (`clawrelay init --relay <url>`) would write
 * to the CLI's default home, not necessarily this one: the message names this home.
 */
export function settingsOfHome(home: string, fromConfig: boolean): AgentSettings {
  const path = join(home, "agent.json");
  try {
    return loadSettings(path);
  } catch (err) {
    if (!(err instanceof AgentError) || err.code !== "no_settings") throw err;
    const set = fromConfig ? "plugins.entries.clawrelay.config.home" : "no plugins.entries.clawrelay.config.home set, so $CLAWRELAY_HOME or ~/.clawrelay";
    throw new AgentError("no_settings", `no agent.json in the plugin's home ${home} (${set}); claim an inbox there: clawrelay init --relay <url> --home ${home}, or set plugins.entries.clawrelay.config.home to the folder that has your agent.json; then: openclaw plugins reload clawrelay (clawrelay doctor checks it)`);
  }
}

/**
 * Our events into the gateway's log, prefixed so they can be found there; escaped as the CLI's own log
 * lines are (a path, a lane or an app's error may hold a sender's ESC sequences, and the gateway's log is
 * printed on the terminal it runs in).
 */
export function gatewayLogger(log: PluginLogger): Logger {
  const line = (event: string, fields?: LogFields) => terminalOutput(`clawrelay: ${formatEvent(event, fields)}`);
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
      const settings = settingsOfHome(home, config.home !== undefined);
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
        // Reported in its status: doctor and status compare it with openclaw.json to tell an unapplied change.
        pluginConfig: config,
        runDir: home,
        cardFile: cardPath(home),
        journalFile: journalPath(home),
        ...(apiPort !== undefined ? { apiPort } : {}),
      });
      const started = agent;
      // A standalone agent of the same inbox took over: stop here rather than fight over the socket.
      void started.replaced.then(() => {
        logger.warn(REPLACED_TEXT);
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
