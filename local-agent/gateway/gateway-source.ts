// Where the agent's gateway settings come from, kept current: the gateway hot-reloads hooks and chat
// completions settings from openclaw.json, so the agent must follow without a restart.
// - Standalone: the config file, re-read whenever it (or the .env beside it) changes — one stat per
//   read, so it is asked on every delivery and every delegated task.
// - Inside the gateway (openclaw-plugin/): the gateway's own live config object.
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { gatewaySettingsFrom, locateOpenClawConfig, readOpenClawConfig } from "./openclaw-config.ts";
import type { Environment, GatewayOverrides, GatewaySettings } from "./openclaw-config.ts";

export interface GatewaySource {
  /** The settings now; the last good ones when the file became unreadable (see `error`). */
  current(): GatewaySettings;
  /** Why the latest re-read failed (the gateway refuses such a file too); null when it did not. */
  readonly error: string | null;
  /** What the settings are read from, for status and logs. */
  readonly origin: string;
}

/** What changes when a file is edited or replaced (an atomic rename is a new inode): one stat. */
export function fileSignature(path: string): string {
  const s = statSync(path, { throwIfNoEntry: false });
  return s ? `${s.ino}:${s.size}:${s.mtimeMs}` : "-";
}

/** Throws when the config cannot be read at the start (nothing good to fall back on). */
export function fileGatewaySource(env: Environment, overrides: GatewayOverrides, home = homedir(), onChange?: (settings: GatewaySettings) => void): GatewaySource {
  // Located once; looked for again only while there is no file there (OpenClaw installed later).
  let location = locateOpenClawConfig(env, home);
  const stamp = () => {
    let file = location ? fileSignature(location.path) : "-";
    if (file === "-") {
      location = locateOpenClawConfig(env, home);
      file = location ? fileSignature(location.path) : "-";
    }
    return location ? `${location.path}|${file}|${fileSignature(join(location.stateDir, ".env"))}` : "none";
  };
  const load = (): GatewaySettings => {
    const file = readOpenClawConfig(env, home);
    return gatewaySettingsFrom(file.config, file.env, overrides, file.exists ? file.location!.path : null);
  };
  let seen = stamp();
  let settings = load();
  let error: string | null = null;
  return {
    current() {
      const now = stamp();
      if (now === seen) return settings;
      seen = now;
      try {
        settings = load();
        error = null;
        onChange?.(settings);
      } catch (err) {
        error = (err as Error).message;
      }
      return settings;
    },
    get error() {
      return error;
    },
    get origin() {
      return settings.configPath ?? "no openclaw.json (defaults)";
    },
  };
}

/** The gateway's live config (a plugin's `api.runtime.config.current()`), read on every call. */
export function liveGatewaySource(config: () => unknown, env: Environment, overrides: GatewayOverrides, origin: string): GatewaySource {
  return {
    current: () => gatewaySettingsFrom(config(), env, overrides, origin),
    error: null,
    origin,
  };
}
