// The agent's own settings file (never openclaw.json, which the gateway validates strictly):
// $CLAWRELAY_HOME/agent.json, default ~/.clawrelay/agent.json, mode 600 because it holds keys; read only
// as a regular file within gateway/config-file.ts's bound (test/node/config-file-bounds.test.ts).
import { chmodSync, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { isAgentId } from "../protocol/index.ts";
import type { HubPrefix } from "../protocol/index.ts";
import { AgentError } from "./errors.ts";
import { readConfigText } from "./gateway/config-file.ts";
import type { Environment } from "./gateway/openclaw-config.ts";

export interface KeySettings {
  key_id: string;
  private_key: string;
  public_key: string;
}

/** Where the hub delivers: it pushes webhooks to the inbox, or the relay pulls from the hub's inbox. */
export type HubMode = "webhook" | "pull";
export const HUB_MODES: readonly HubMode[] = ["webhook", "pull"];
/** What `clawrelay hub register` settled with the hub (local-agent/hub/hub-link.ts). */
export interface HubSettings {
  mode: HubMode;
  /**
   * The sub-path prefix the relay uses for this inbox (`agentgram` on the Agentline service, `botcord`
   * in the public hub code), as the relay reported it after registering.
   */
  prefix: HubPrefix;
  /** Where the relay got it: "set" (--prefix, kept by later runs), "learned from the hub's probes", a default. */
  prefix_source?: string;
  /** ms since the epoch. */
  registered_at: number;
  /** The hub's state for the webhook endpoint (`active`, `unverified`, …); absent in pull mode. */
  endpoint_state?: string;
}

export interface AgentSettings {
  relay_url: string;
  agent_id: string;
  display_name?: string;
  hub_url: string;
  key: KeySettings;
  receipt_key: KeySettings;
  /** Shown once by the relay; kept here (mode 600) so `init` can print it again. */
  webhook_token?: string;
  /** Overrides of what is read from openclaw.json. */
  gateway?: {
    port?: number;
    hooks_token?: string;
    hooks_path?: string;
    config_path?: string;
    /** gateway.auth.token, for running delegated tasks through chat completions. */
    auth_token?: string;
    chat_completions?: boolean;
  };
  api_port?: number;
  window?: number;
  /** Posts in flight at once across conversations (default 4; 1 = one post at a time, conversations still interleave). */
  delivery_concurrency?: number;
  /** The OpenClaw agent that runs delegated tasks: "openclaw" (default agent) or "openclaw/<agentId>". */
  openclaw_agent?: string;
  /** How long a delegation waits for the target's result (default 180000). */
  delegate_timeout_ms?: number;
  hub?: HubSettings;
  /**
   * The hub client's credentials file whose token the agent keeps on the relay's (one token per agent:
   * a refresh by any client ends every older token). Set by `init --import-botcord` / `--import-agentline`.
   */
  hub_credentials?: HubCredentialsLink;
}

export type HubCredentialsFormat = "botcord" | "agentline";

export interface HubCredentialsLink {
  path: string;
  format: HubCredentialsFormat;
}

export function settingsHome(env: Environment): string {
  return env.CLAWRELAY_HOME ?? join(homedir(), ".clawrelay");
}

export function settingsPath(env: Environment): string {
  return join(settingsHome(env), "agent.json");
}

/** The delivery journal beside the settings (finished ids and the resume cursor). */
export function journalPath(home: string): string {
  return join(home, "delivery-journal.log");
}

export function loadSettings(path: string): AgentSettings {
  if (!existsSync(path)) throw new AgentError("no_settings", `no settings at ${path}; run \`clawrelay init --relay <url>\` first`);
  // Not a regular file, or past the bound: refused by readConfigText with the file named (never a hang).
  const text = readConfigText(path);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AgentError("invalid_settings", `${path} is not valid JSON (${(err as Error).message}); fix it or run \`clawrelay init --force\``);
  }
  const s = value as Partial<AgentSettings>;
  const missing = (["relay_url", "agent_id", "hub_url", "key", "receipt_key"] as const).filter((k) => !s[k]);
  if (missing.length > 0 || !isAgentId(s.agent_id) || typeof s.key?.private_key !== "string") {
    throw new AgentError("invalid_settings", `${path} lacks ${missing.join(", ") || "a valid agent_id/key"}; run \`clawrelay init --force\``);
  }
  return s as AgentSettings;
}

/** Writes atomically with mode 600 in a 700 directory. */
export function saveSettings(path: string, settings: AgentSettings): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(settings, null, 2) + "\n", { mode: 0o600 });
  renameSync(temp, path);
  chmodSync(path, 0o600);
}

export function fileMode(path: string): number {
  return statSync(path).mode & 0o777;
}
