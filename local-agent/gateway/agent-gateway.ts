// The agent's gateway as agent.json and openclaw.json together describe it: the overrides agent.json
// may set, the environment openclaw.json is looked up in, where posts go, and whether a port answers.
// Used by agent.ts, doctor/doctor.ts and the plugin's tests.
import { connect } from "node:net";
import { AgentError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { AgentSettings } from "../settings.ts";
import type { GatewayTarget } from "../delivery/gateway-forwarder.ts";
import { fileGatewaySource } from "./gateway-source.ts";
import type { GatewaySource } from "./gateway-source.ts";
import type { Environment, GatewayOverrides, GatewaySettings } from "./openclaw-config.ts";

export function gatewayOverrides(settings: AgentSettings): GatewayOverrides {
  const o = settings.gateway ?? {};
  return { port: o.port, hooksToken: o.hooks_token, hooksPath: o.hooks_path, authToken: o.auth_token, chatCompletions: o.chat_completions };
}

/** The environment OpenClaw's config is looked up in: a config_path override wins, as the variable would. */
export function openClawEnv(overrides: AgentSettings["gateway"], env: Environment): Environment {
  return overrides?.config_path ? { ...env, OPENCLAW_CONFIG_PATH: overrides.config_path } : env;
}

/** The standalone agent's source: openclaw.json as found from the environment and agent.json. */
export function settingsGatewaySource(settings: AgentSettings, env: Environment, logger?: Logger): GatewaySource {
  return fileGatewaySource(openClawEnv(settings.gateway, env), gatewayOverrides(settings), undefined, (g) =>
    logger?.info("gateway settings re-read", { config: g.configPath, port: g.port, hooks_path: g.hooksPath, chat_completions: g.chatCompletionsEnabled, auth: g.auth.source }),
  );
}

export function gatewayTarget(gateway: GatewaySettings): GatewayTarget {
  if (!gateway.hooksToken) {
    throw new AgentError("no_hooks_token", `no hooks.token in ${gateway.configPath ?? "any OpenClaw config"}; enable hooks in openclaw.json (run clawrelay doctor)`);
  }
  return { port: gateway.port, hooksPath: gateway.hooksPath, hooksToken: gateway.hooksToken };
}

export function portIsListening(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

