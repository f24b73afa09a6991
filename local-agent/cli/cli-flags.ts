// Reading a parsed command's flags (cli-args.ts's Values): strings, switches, one of a list, http(s)
// URLs, the gateway overrides and a hub bind code. Each mistake is a UsageError or AgentError saying what to type.
// Pure; imported by cli.ts and cli-messages.ts, covered by test/node/cli-usage.e2e.test.ts.
import { fromBase64 } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import type { AgentSettings } from "../settings.ts";
import { UsageError } from "./cli-args.ts";
import type { Values } from "./cli-args.ts";

export function stringFlag(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

export function switchFlag(values: Values, name: string): boolean {
  return values[name] === true;
}

export function choiceFlag<T extends string>(values: Values, name: string, allowed: readonly T[]): T | undefined {
  const value = stringFlag(values, name);
  if (value !== undefined && !(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(", ")}, not "${value}"`);
  return value as T | undefined;
}

export function httpUrlFlag(values: Values, name: string, example: string): string | undefined {
  const value = stringFlag(values, name);
  if (value === undefined) return undefined;
  let protocol = "";
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = "";
  }
  if (protocol !== "http:" && protocol !== "https:") throw new AgentError("invalid_url_flag", `--${name} must be an http(s) URL, e.g. ${example} (not "${value}")`);
  return value;
}

/** Gateway flags win over the settings file, which wins over openclaw.json (the OpenClaw order). */
export function gatewayFlags(values: Values): AgentSettings["gateway"] {
  const portText = stringFlag(values, "gateway-port");
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && !(/^\d+$/.test(portText ?? "") && port > 0 && port < 65536)) throw new UsageError(`--gateway-port must be a TCP port number (1-65535), not "${portText}"`);
  const hooksPath = stringFlag(values, "hooks-path");
  const configPath = stringFlag(values, "openclaw-config");
  return { ...(port ? { port } : {}), ...(hooksPath ? { hooks_path: hooksPath } : {}), ...(configPath ? { config_path: configPath } : {}) };
}

/** --bind-code and --bind-nonce, which come together as the dashboard's install command prints them. */
export function bindFlags(values: Values): { code: string; nonce: string } | undefined {
  const code = stringFlag(values, "bind-code");
  const nonce = stringFlag(values, "bind-nonce");
  if (code === undefined && nonce === undefined) return undefined;
  if (code === undefined || nonce === undefined) throw new UsageError("--bind-code and --bind-nonce go together: copy both from the dashboard's install command");
  if (!/^bd_[A-Za-z0-9_-]+$/.test(code)) throw new UsageError(`--bind-code must be the dashboard's code, bd_… (not "${code}")`);
  if (!fromBase64(nonce)?.length) throw new UsageError("--bind-nonce must be the base64 nonce the dashboard's install command shows");
  return { code, nonce };
}
