// Finds the credential the gateway wants on /v1/* (chat completions, models) the way the gateway
// does (docs/openclaw-setup.md, "The gateway token"): gateway.auth.token (or .password in password
// mode) as a plain string, a ${VAR} substitution or a secret reference; when the config has none,
// OPENCLAW_GATEWAY_TOKEN (OPENCLAW_GATEWAY_PASSWORD). Pure apart from reading a file provider's file,
// which is injected (by default a bounded read of a regular file only: config-file.ts).
import { AgentError } from "../errors.ts";
import { readConfigText } from "./config-file.ts";
import { homedir } from "node:os";
import { join } from "node:path";

/** The variables ${VAR} substitutions and env secret references read (an openclaw-config.ts Environment). */
type Variables = Readonly<Record<string, string | undefined>>;

export type GatewayAuthMode = "token" | "password" | "none" | "trusted-proxy";

export interface GatewayAuth {
  mode: GatewayAuthMode;
  /** The value to send as `Authorization: Bearer …`; null when none was found or none is needed. */
  token: string | null;
  /** Where it came from, for doctor and status (never the value). */
  source: string;
  /** Why a configured credential could not be used, with what to do; null when all is well. */
  problem: string | null;
}

export type ReadText = (path: string) => string;

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;
const FALLBACK_FIX = "or give clawrelay the token directly: OPENCLAW_GATEWAY_TOKEN in its environment, or gateway.auth_token in agent.json";

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

interface Found {
  value: string | null;
  source: string;
  problem: string | null;
}

/** `${VAR}` anywhere in a string is replaced from the environment; `$${VAR}` stays a literal `${VAR}`. */
function substitute(text: string, env: Variables, where: string): Found {
  const missing: string[] = [];
  let used = false;
  const value = text.replace(/\$?\$\{([A-Z_][A-Z0-9_]*)\}/g, (match, name: string) => {
    if (match.startsWith("$$")) return match.slice(1);
    used = true;
    const v = env[name];
    if (v === undefined || v === "") {
      missing.push(name);
      return match;
    }
    return v;
  });
  if (missing.length > 0) {
    return { value: null, source: `${where} (\${${missing[0]}})`, problem: `${where} refers to \${${missing[0]}}, which is not set in clawrelay's environment; export it where clawrelay runs, ${FALLBACK_FIX}` };
  }
  return { value, source: used ? `${where} (env substitution)` : where, problem: null };
}

/** A config string after the gateway's ${VAR} substitution; null when a variable is unset. */
export function substitutedString(text: string, env: Variables): string | null {
  return substitute(text, env, "value").value;
}

/** RFC 6901: "/a/b~1c" → ["a", "b/c"]. */
function pointer(document: unknown, path: string): unknown {
  if (!path.startsWith("/")) return undefined;
  let at: unknown = document;
  for (const raw of path.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    at = record(at)[key];
  }
  return at;
}

function expandHome(path: string, home: string): string {
  return path === "~" || path.startsWith("~/") ? join(home, path.slice(1)) : path;
}

/** A secret reference `{source, provider, id}` as far as a process outside the gateway can read it. */
function secretRef(ref: Record<string, unknown>, config: Record<string, unknown>, env: Variables, where: string, readText: ReadText, home: string): Found {
  const source = String(ref.source);
  const id = typeof ref.id === "string" ? ref.id : "";
  const secrets = record(config.secrets);
  const defaults = record(secrets.defaults);
  const providerName = typeof ref.provider === "string" ? ref.provider : typeof defaults[source] === "string" ? (defaults[source] as string) : "default";
  const label = `${where} (secret reference ${source}:${id || "?"})`;
  const provider = record(record(secrets.providers)[providerName]);
  if (source === "env") {
    const allow = Array.isArray(provider.allowlist) ? provider.allowlist : null;
    if (allow && !allow.includes(id)) return { value: null, source: label, problem: `${label}: provider "${providerName}" does not allow ${id}` };
    const v = env[id];
    if (!ENV_NAME.test(id) || v === undefined || v === "") {
      return { value: null, source: label, problem: `${label}: ${id || "the id"} is not set in clawrelay's environment; export it where clawrelay runs, ${FALLBACK_FIX}` };
    }
    return { value: v, source: label, problem: null };
  }
  if (source === "file") {
    if (provider.source !== "file" || typeof provider.path !== "string") {
      return { value: null, source: label, problem: `${label}: secrets.providers.${providerName} is not a file provider with a path` };
    }
    const path = expandHome(provider.path, home);
    let text: string;
    try {
      text = readText(path);
    } catch (err) {
      const why = err instanceof AgentError ? err.message : ((err as NodeJS.ErrnoException).code ?? (err as Error).message);
      return { value: null, source: label, problem: `${label}: cannot read ${path} (${why}); run clawrelay as the gateway's user, ${FALLBACK_FIX}` };
    }
    if (provider.mode === "singleValue") return { value: text.replace(/\r?\n$/, ""), source: label, problem: null };
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      return { value: null, source: label, problem: `${label}: ${path} is not JSON` };
    }
    const v = pointer(document, id);
    if (typeof v !== "string" || v === "") return { value: null, source: label, problem: `${label}: ${path} has no string at ${id}` };
    return { value: v, source: label, problem: null };
  }
  // exec providers run a command and the store lives inside the gateway: clawrelay does neither.
  return { value: null, source: label, problem: `${label}: clawrelay cannot resolve "${source}" secret references; ${FALLBACK_FIX}` };
}

/** One SecretInput field: absent, a string (plain, ${VAR}, or the $VAR shorthand) or a reference. */
function secretInput(value: unknown, config: Record<string, unknown>, env: Variables, where: string, readText: ReadText, home: string): Found | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value === "string") {
    const shorthand = /^\$([A-Z_][A-Z0-9_]*)$/.exec(value);
    if (shorthand) return secretRef({ source: "env", id: shorthand[1] }, config, env, where, readText, home);
    return substitute(value, env, where);
  }
  const ref = record(value);
  if (typeof ref.source === "string") return secretRef(ref, config, env, where, readText, home);
  return { value: null, source: where, problem: `${where} is neither a string nor a secret reference {source, provider, id}` };
}

const defaultRead: ReadText = (path) => readConfigText(path);

export function resolveGatewayAuth(config: unknown, env: Variables, override?: string, readText: ReadText = defaultRead, home = homedir()): GatewayAuth {
  const root = record(config);
  const auth = record(record(root.gateway).auth);
  const configured = auth.mode;
  const hasPassword = auth.password !== undefined && auth.password !== "";
  const mode: GatewayAuthMode =
    configured === "password" || configured === "none" || configured === "trusted-proxy" || configured === "token"
      ? configured
      : hasPassword && (auth.token === undefined || auth.token === "") ? "password" : "token";
  if (override) return { mode, token: override, source: "gateway.auth_token in agent.json", problem: null };
  if (mode === "none") return { mode, token: null, source: "gateway.auth.mode none", problem: null };
  // A trusted-proxy gateway still lets same-host callers in with its password.
  const field = mode === "token" ? "token" : "password";
  const variable = field === "token" ? "OPENCLAW_GATEWAY_TOKEN" : "OPENCLAW_GATEWAY_PASSWORD";
  // A configured credential is authoritative, even when it cannot be resolved: the gateway does not
  // fall back to the environment then either.
  const found = secretInput(auth[field], root, env, `gateway.auth.${field}`, readText, home);
  if (found) return { mode, token: found.value, source: found.source, problem: found.problem };
  const fromEnv = env[variable];
  if (fromEnv) return { mode, token: fromEnv, source: variable, problem: null };
  return {
    mode,
    token: null,
    source: "none",
    problem: `no gateway.auth.${field} in openclaw.json and no ${variable} in clawrelay's environment: delegated tasks cannot run on this gateway; ${FALLBACK_FIX}`,
  };
}
