// The gateway as the running agent follows it, one of the agent's parts (agent.ts): its settings
// (openclaw.json with agent.json's overrides, both followed: settings-follow.ts; or the plugin's live
// config), where posts go now, and a look every second between posts so a fixed hooks token or port ends
// a config-error pause at once (the composition retries then), rather than after the paused message's
// 60 s. No hooks token (no OpenClaw here, or hooks not set up) is no reason to stop: events forwarded to
// local apps still go, and gateway-bound messages wait, paused with the problem, until it is set up. Once
// usable, unusable changes keep the last good target. Covered by test/node/gateway-followed.e2e.test.ts,
// agent-json-followed.e2e.test.ts and retry-now.e2e.test.ts.
import type { AgentRunsIn, AgentStatus } from "../agent-status.ts";
import type { NoGateway } from "../delivery/delivery-options.ts";
import type { GatewayTarget } from "../delivery/gateway-forwarder.ts";
import { AgentError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { settingsPath } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";
import { gatewayTarget } from "./agent-gateway.ts";
import type { GatewaySource } from "./gateway-source.ts";
import type { Environment, GatewaySettings } from "./openclaw-config.ts";
import { followedGatewaySource } from "./settings-follow.ts";
import type { FollowedSource } from "./settings-follow.ts";

/** How often agent.json and openclaw.json are looked at (one stat each) while nothing is posted. */
export const FOLLOW_EVERY_MS = 1_000;

export interface GatewayWatchOptions {
  settings: AgentSettings;
  env: Environment;
  logger: Logger;
  /** Where the settings come from; default: openclaw.json with agent.json's overrides, followed as they change. */
  source?: GatewaySource;
  runsIn?: AgentRunsIn;
  followEveryMs?: number;
}

export interface GatewayWatch {
  /** The gateway's settings now (the files looked at again). */
  settings(): GatewaySettings;
  /** Where posts go now, or why none can; asked before every post. */
  target(): GatewayTarget | NoGateway;
  status(): AgentStatus["gateway"];
  /** `changed` is called whenever where posts go changes, looked at every second between posts too. */
  onTargetChange(changed: () => void): void;
  close(): void;
}

/** Where posts go, as a comparable string (a NoGateway's problem included). */
const targetKey = (t: GatewayTarget | NoGateway) => ("problem" in t ? `none:${t.problem}` : `${t.port}|${t.hooksPath}|${t.hooksToken}`);

function targetOf(gateway: GatewaySettings, tokenFrom: string | null): GatewayTarget | NoGateway {
  try {
    const target = gatewayTarget(gateway);
    return tokenFrom ? { ...target, tokenFrom } : target;
  } catch (err) {
    // gatewayTarget's only refusal (no hooks token) is a state to show and wait out, not a failure.
    return { problem: (err as Error).message };
  }
}

export function watchGateway(options: GatewayWatchOptions): GatewayWatch {
  const { settings, env, logger } = options;
  // agent.json is followed as openclaw.json is; the plugin's live config is its own.
  const followed: FollowedSource | null = options.source ? null : followedGatewaySource(settingsPath(env), settings, env, logger);
  const source = options.source ?? followed!;
  const initial = source.current();
  let current = { gateway: initial, target: targetOf(initial, followed?.hooksTokenFrom() ?? null) };
  // Inside the gateway there is a gateway: hooks not set up are its own config's mistake, said at its
  // start in its log (docs/openclaw-setup.md), not by messages waiting.
  if (options.runsIn === "gateway plugin" && "problem" in current.target) throw new AgentError("no_hooks_token", current.target.problem);
  let seen = initial;
  const refresh = () => {
    const gateway = source.current();
    if (gateway === seen) return current;
    seen = gateway;
    const target = targetOf(gateway, followed?.hooksTokenFrom() ?? null);
    if ("problem" in target && !("problem" in current.target)) logger.error("gateway settings unusable; keeping the previous ones", { error: target.problem });
    else current = { gateway, target };
    return current;
  };
  const listeners: (() => void)[] = [];
  let lastTarget = targetKey(current.target);
  const follow = setInterval(() => {
    const now = targetKey(refresh().target);
    if (now === lastTarget) return;
    lastTarget = now;
    for (const changed of listeners) changed();
  }, options.followEveryMs ?? FOLLOW_EVERY_MS);
  follow.unref();
  return {
    settings: () => refresh().gateway,
    target: () => refresh().target,
    status: () => {
      const { gateway, target } = current;
      const problem = "problem" in target ? target.problem : null;
      const settingsFile = followed?.settingsFile ? { ...followed.settingsFile } : null;
      return { port: gateway.port, hooks_path: gateway.hooksPath, config_path: gateway.configPath, auth_source: gateway.auth.source, problem, config_error: source.error, settings_file: settingsFile };
    },
    onTargetChange: (changed) => void listeners.push(changed),
    close: () => clearInterval(follow),
  };
}
