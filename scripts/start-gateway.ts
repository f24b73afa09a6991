// Which gateway `npm start` (start.ts) has its agent post to, and the move to the real one when it comes
// up. A configured gateway (openclaw.json with hooks on and a token) is the one meant, running or not:
// when it is down at the start no stand-in takes its place (what a stand-in takes never reaches it);
// the agent follows openclaw.json and messages wait at the relay until it answers. Only with no usable
// config is the stand-in used, and then the first usable gateway that answers takes over: agent.json
// loses the stand-in's overrides, and the running agent, which follows agent.json and openclaw.json
// (local-agent/gateway/settings-follow.ts), posts to it from the next message on — no restart.
// Covered by test/node/start-gateway.test.ts.
import { portIsListening } from "../local-agent/gateway/agent-gateway.ts";
import { loadGatewaySettings } from "../local-agent/gateway/openclaw-config.ts";
import type { Environment, GatewaySettings } from "../local-agent/gateway/openclaw-config.ts";
import { loadSettings, saveSettings } from "../local-agent/settings.ts";

/** How often a gateway coming up is looked for (one config read and one TCP connect). */
export const GATEWAY_LOOK_EVERY_MS = 2_000;

export type GatewayChoice =
  /** Configured and answering: the agent follows openclaw.json. */
  | { kind: "real"; gateway: GatewaySettings }
  /** Configured, nothing listening yet: the agent follows openclaw.json; messages wait until it starts. */
  | { kind: "wait"; gateway: GatewaySettings }
  /** No openclaw.json with hooks on and a token: a stand-in prints what it receives. */
  | { kind: "standin" };

/** openclaw.json's gateway when it is set up for hooks (on, with a token); null otherwise or when unreadable. */
export function configuredGateway(env: Environment): GatewaySettings | null {
  let gateway: GatewaySettings;
  try {
    gateway = loadGatewaySettings(env);
  } catch {
    // An unreadable openclaw.json is no usable gateway here; `clawrelay doctor` names what is wrong with it.
    return null;
  }
  return gateway.configPath && gateway.hooksEnabled && gateway.hooksToken ? gateway : null;
}

export async function chooseGateway(env: Environment): Promise<GatewayChoice> {
  const gateway = configuredGateway(env);
  if (!gateway) return { kind: "standin" };
  return (await portIsListening(gateway.port)) ? { kind: "real", gateway } : { kind: "wait", gateway };
}

/**
 * Looks every `everyMs` for a configured gateway that answers; calls `up` once with it, then stops.
 * `stop()` ends the look early (npm start stopping).
 */
export function whenGatewayUp(env: Environment, up: (gateway: GatewaySettings) => void, everyMs = GATEWAY_LOOK_EVERY_MS): { stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    const gateway = configuredGateway(env);
    if (stopped) return;
    if (gateway && (await portIsListening(gateway.port)) && !stopped) {
      stopped = true;
      return up(gateway);
    }
    if (!stopped) timer = setTimeout(() => void look(), everyMs);
  };
  timer = setTimeout(() => void look(), everyMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The stand-in's overrides out of agent.json: the running agent then posts where openclaw.json says. */
export function dropGatewayOverrides(settingsPath: string): void {
  const settings = loadSettings(settingsPath);
  delete settings.gateway;
  saveSettings(settingsPath, settings);
}
