// agent.json followed as openclaw.json is (gateway-source.ts): its gateway overrides — hooks_token, port,
// hooks_path, config_path, auth_token, chat_completions — apply to the next post without a restart. One
// stat per look (an editor's or saveSettings' atomic rename is a new inode, so it is seen too); on a
// change the file is re-read and the openclaw.json source rebuilt with the new overrides. A broken edit
// keeps the last good settings and says why (`settingsFile.error`); fields the running agent cannot take
// live (identity, relay, API port, window, concurrency) are named in `restart_needed`, never half-applied.
// Overrides given on the command line (--gateway-port, --hooks-path, --openclaw-config) keep winning.
// Used by agent.ts; covered by test/node/agent-json-followed.e2e.test.ts and
// test/openclaw/agent-json.interop.test.ts.
import { existsSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "../logger.ts";
import { loadSettings } from "../settings.ts";
import type { AgentSettings } from "../settings.ts";
import { settingsGatewaySource } from "./agent-gateway.ts";
import { fileSignature } from "./gateway-source.ts";
import type { GatewaySource } from "./gateway-source.ts";
import type { Environment, GatewaySettings } from "./openclaw-config.ts";

type GatewayFields = NonNullable<AgentSettings["gateway"]>;

/** What a running agent cannot change without a restart (its socket, keys, API port and delivery shape). */
const RESTART_FIELDS = ["agent_id", "relay_url", "key", "receipt_key", "api_port", "window", "delivery_concurrency"] as const;
const TYPES: Record<keyof GatewayFields, string> = { port: "number", hooks_token: "string", hooks_path: "string", config_path: "string", auth_token: "string", chat_completions: "boolean" };

export interface SettingsFileStatus {
  path: string;
  /** Why the latest edit was not applied (the last good settings are in use); null when it was. */
  error: string | null;
  /** Fields changed in the file that take effect only after a restart. */
  restart_needed: string[];
}

export interface FollowedSource extends GatewaySource {
  /** null when there is no agent.json to follow (settings given in code). */
  readonly settingsFile: SettingsFileStatus | null;
  /** "gateway.hooks_token in <agent.json>" while that override is in use; null when openclaw.json's hooks.token is. */
  hooksTokenFrom(): string | null;
}

/** The gateway object's fields of the wrong type, as a sentence; null when all are right. */
function gatewayProblem(gateway: unknown): string | null {
  if (gateway === undefined) return null;
  if (typeof gateway !== "object" || gateway === null || Array.isArray(gateway)) return "gateway is not an object";
  const wrong = Object.entries(gateway).filter(([k, v]) => k in TYPES && typeof v !== TYPES[k as keyof GatewayFields]);
  return wrong.length === 0 ? null : wrong.map(([k]) => `gateway.${k} must be a ${TYPES[k as keyof GatewayFields]}`).join("; ");
}

/** The standalone agent's gateway source: openclaw.json with agent.json's overrides, both followed. */
export function followedGatewaySource(path: string, settings: AgentSettings, env: Environment, logger: Logger): FollowedSource {
  let inner = settingsGatewaySource(settings, env, logger);
  if (!existsSync(path)) return Object.assign(inner, { settingsFile: null, hooksTokenFrom: () => null });
  // What the caller set beyond the file (command-line flags) is pinned over every re-read.
  let fromFile: AgentSettings = settings;
  try {
    fromFile = loadSettings(path);
  } catch {
    // Read once by the caller; a race with an edit is settled by the first look.
  }
  const pinned = Object.fromEntries(Object.entries(settings.gateway ?? {}).filter(([k, v]) => !isDeepStrictEqual(v, (fromFile.gateway as Record<string, unknown> | undefined)?.[k])));
  let active: GatewayFields = { ...settings.gateway };
  let seen = fileSignature(path);
  const file: SettingsFileStatus = { path, error: null, restart_needed: [] };

  const refuse = (error: string) => {
    if (file.error !== error) logger.error("agent.json changed but cannot be used; keeping the last good settings", { path, error });
    file.error = error;
  };
  const look = () => {
    const now = fileSignature(path);
    if (now === seen) return;
    seen = now;
    let next: AgentSettings;
    try {
      next = loadSettings(path);
    } catch (err) {
      return refuse((err as Error).message);
    }
    const problem = gatewayProblem(next.gateway);
    if (problem) return refuse(`${path}: ${problem}`);
    const restart = RESTART_FIELDS.filter((k) => !isDeepStrictEqual(next[k], settings[k]));
    if (restart.join() !== file.restart_needed.join() && restart.length > 0) logger.warn("agent.json changed fields that apply only after a restart", { path, fields: restart.join(", "), fix: "restart clawrelay" });
    file.restart_needed = restart;
    const gateway: GatewayFields = { ...next.gateway, ...pinned };
    if (!isDeepStrictEqual(gateway, active)) {
      try {
        inner = settingsGatewaySource({ ...settings, gateway }, env, logger);
      } catch (err) {
        return refuse(`the openclaw.json agent.json now points to cannot be read: ${(err as Error).message}`);
      }
      const changed = [...new Set([...Object.keys(gateway), ...Object.keys(active)])].filter((k) => !isDeepStrictEqual(gateway[k as keyof GatewayFields], active[k as keyof GatewayFields]));
      active = gateway;
      logger.info("agent.json re-read: gateway settings applied", { path, changed: changed.join(", ") });
    }
    file.error = null;
  };
  return {
    current(): GatewaySettings {
      look();
      return inner.current();
    },
    get error() {
      return inner.error;
    },
    get origin() {
      return inner.origin;
    },
    settingsFile: file,
    hooksTokenFrom: () => (active.hooks_token === undefined ? null : `gateway.hooks_token in ${path}`),
  };
}
