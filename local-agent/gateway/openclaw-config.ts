// Finds and reads the OpenClaw gateway's config the way OpenClaw does (docs/openclaw-setup.md,
// "Where openclaw.json is found"): only reads it, never writes — the gateway validates that file strictly.
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
// A namespace import: a named one would stop the CLI from loading on a Node without parseEnv.
import * as util from "node:util";
import JSON5 from "json5";
import { readConfigText } from "./config-file.ts";
import { resolveGatewayAuth, substitutedString } from "./gateway-token.ts";
import type { GatewayAuth } from "./gateway-token.ts";

export const DEFAULT_GATEWAY_PORT = 18789;
export const DEFAULT_HOOKS_PATH = "/hooks";

export type Environment = Record<string, string | undefined>;

export interface ConfigLocation {
  path: string;
  /** Which rule chose it, for doctor's output. */
  source: "OPENCLAW_CONFIG_PATH" | "OPENCLAW_STATE_DIR" | "OPENCLAW_HOME" | "home" | "legacy";
  stateDir: string;
}

/** The config file OpenClaw would use; `exists` is injected so the precedence is testable. */
export function locateOpenClawConfig(env: Environment, home = homedir(), exists: (p: string) => boolean = existsSync): ConfigLocation | null {
  if (env.OPENCLAW_CONFIG_PATH) {
    return { path: env.OPENCLAW_CONFIG_PATH, source: "OPENCLAW_CONFIG_PATH", stateDir: env.OPENCLAW_STATE_DIR ?? join(env.OPENCLAW_CONFIG_PATH, "..") };
  }
  if (env.OPENCLAW_STATE_DIR) return { path: join(env.OPENCLAW_STATE_DIR, "openclaw.json"), source: "OPENCLAW_STATE_DIR", stateDir: env.OPENCLAW_STATE_DIR };
  // OPENCLAW_HOME replaces the home directory; the search below it is the same, legacy dirs included.
  const base = env.OPENCLAW_HOME ?? home;
  const source = env.OPENCLAW_HOME ? "OPENCLAW_HOME" : "home";
  const stateDir = join(base, ".openclaw");
  if (exists(stateDir)) return { path: join(stateDir, "openclaw.json"), source, stateDir };
  // Earlier names of the project; read only when .openclaw is absent.
  for (const legacy of [".clawdbot", ".moltbot"]) {
    const dir = join(base, legacy);
    for (const file of ["openclaw.json", `${legacy.slice(1)}.json`]) {
      if (exists(join(dir, file))) return { path: join(dir, file), source: "legacy", stateDir: dir };
    }
  }
  return env.OPENCLAW_HOME ? { path: join(stateDir, "openclaw.json"), source, stateDir } : null;
}

/**
 * A .env file's variables, as Node's own `util.parseEnv` reads them (quotes, escapes in double quotes,
 * multi-line quoted values, `#` comments). It is in Node from 20.12 and 21.7; the CLI runs on Node ≥ 20,
 * so on an older 20.x a .env is refused with the fix rather than read differently.
 */
type ParseEnv = (content: string) => Record<string, string>;

export function parseDotEnv(text: string, path = ".env", parseEnv: ParseEnv | null = (util as { parseEnv?: ParseEnv }).parseEnv ?? null): Record<string, string> {
  if (!parseEnv) throw new OpenClawConfigError(`${path} cannot be read on Node ${process.version}: reading a .env needs Node 20.12 or later (util.parseEnv); update Node, or set its variables in the environment and remove the file`);
  return parseEnv(text);
}

export interface GatewaySettings {
  configPath: string | null;
  port: number;
  portSource: "flag" | "OPENCLAW_GATEWAY_PORT" | "gateway.port" | "default";
  hooksEnabled: boolean;
  hooksToken: string | null;
  hooksPath: string;
  maxBodyBytes: number | null;
  /** match.path of every hooks.mappings entry, slashes trimmed as OpenClaw compares them. */
  mappingPaths: string[];
  mappings: HookMapping[];
  /** hooks.allowRequestSessionKey: whether a posted `sessionKey` may pick the session. */
  allowRequestSessionKey: boolean;
  /** hooks.allowedSessionKeyPrefixes; null when unset. */
  allowedSessionKeyPrefixes: string[] | null;
  /** The /v1/* credential (gateway-token.ts); `authToken` is its value. */
  auth: GatewayAuth;
  authToken: string | null;
  chatCompletionsEnabled: boolean;
}

/** The parts of a hooks.mappings entry clawrelay checks. */
export interface HookMapping {
  path: string;
  action: string | null;
  /** The mapping's sessionKey template (per-sender sessions need "{{sessionKey}}"). */
  sessionKey: string | null;
}

export interface GatewayOverrides {
  port?: number;
  hooksToken?: string;
  hooksPath?: string;
  authToken?: string;
  chatCompletions?: boolean;
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function normaliseHooksPath(path: string): string {
  const trimmed = path.trim().replace(/\/+$/, "");
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/** Pure: the gateway settings from a parsed config, the merged environment and flags. */
export function gatewaySettingsFrom(config: unknown, env: Environment, overrides: GatewayOverrides = {}, configPath: string | null = null): GatewaySettings {
  const root = record(config);
  const gateway = record(root.gateway);
  const hooks = record(root.hooks);
  const envPort = Number(env.OPENCLAW_GATEWAY_PORT);
  const configPort = Number(gateway.port);
  const [port, portSource]: [number, GatewaySettings["portSource"]] = overrides.port
    ? [overrides.port, "flag"]
    : Number.isInteger(envPort) && envPort > 0
      ? [envPort, "OPENCLAW_GATEWAY_PORT"]
      : Number.isInteger(configPort) && configPort > 0
        ? [configPort, "gateway.port"]
        : [DEFAULT_GATEWAY_PORT, "default"];
  const mappings: HookMapping[] = (Array.isArray(hooks.mappings) ? hooks.mappings : [])
    .map((m) => {
      const entry = record(m);
      return {
        path: String(record(entry.match).path ?? "").replace(/^\/+|\/+$/g, ""),
        action: typeof entry.action === "string" ? entry.action : null,
        sessionKey: typeof entry.sessionKey === "string" ? entry.sessionKey : null,
      };
    })
    .filter((m) => m.path !== "");
  const auth = resolveGatewayAuth(root, env, overrides.authToken);
  const prefixes = hooks.allowedSessionKeyPrefixes;
  const endpoints = record(record(record(gateway.http).endpoints).chatCompletions);
  return {
    configPath,
    port,
    portSource,
    hooksEnabled: hooks.enabled === true,
    hooksToken: overrides.hooksToken ?? (typeof hooks.token === "string" && hooks.token !== "" ? substitutedString(hooks.token, env) : null),
    hooksPath: normaliseHooksPath(overrides.hooksPath ?? (typeof hooks.path === "string" && hooks.path !== "" ? hooks.path : DEFAULT_HOOKS_PATH)),
    maxBodyBytes: typeof hooks.maxBodyBytes === "number" ? hooks.maxBodyBytes : null,
    mappingPaths: mappings.map((m) => m.path),
    mappings,
    allowRequestSessionKey: hooks.allowRequestSessionKey === true,
    allowedSessionKeyPrefixes: Array.isArray(prefixes) ? prefixes.filter((p): p is string => typeof p === "string") : null,
    auth,
    authToken: auth.token,
    chatCompletionsEnabled: overrides.chatCompletions ?? endpoints.enabled === true,
  };
}

export class OpenClawConfigError extends Error {
  override readonly name = "OpenClawConfigError";
}

export interface OpenClawConfigFile {
  location: ConfigLocation | null;
  /** The parsed config, {} when there is no file. */
  config: unknown;
  /** The environment with the state dir's .env filling unset variables. */
  env: Environment;
  exists: boolean;
}

/** Locates and reads (JSON5) the config; `.env` of the state dir fills unset variables. */
export function readOpenClawConfig(env: Environment, home = homedir()): OpenClawConfigFile {
  const location = locateOpenClawConfig(env, home);
  if (!location) return { location, config: {}, env, exists: false };
  const dotEnv = join(location.stateDir, ".env");
  // Both are read only as regular files within CONFIG_FILE_MAX_BYTES (config-file.ts): a FIFO or a link to a device is refused, not waited on.
  const merged = existsSync(dotEnv) ? { ...parseDotEnv(readConfigText(dotEnv), dotEnv), ...env } : env;
  if (!existsSync(location.path)) return { location, config: {}, env: merged, exists: false };
  const text = readConfigText(location.path);
  try {
    return { location, config: JSON5.parse(text), env: merged, exists: true };
  } catch (err) {
    throw new OpenClawConfigError(`${location.path} is not valid JSON5: ${(err as Error).message}`);
  }
}

/** The gateway settings the agent uses: config file, .env, environment, then flags. */
export function loadGatewaySettings(env: Environment, overrides: GatewayOverrides = {}, home = homedir()): GatewaySettings {
  const file = readOpenClawConfig(env, home);
  return gatewaySettingsFrom(file.config, file.env, overrides, file.exists ? file.location!.path : null);
}
