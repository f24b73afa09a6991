// doctor's checks of the OpenClaw gateway: what openclaw.json says and what the running gateway
// answers (docs/openclaw-setup.md). Each check is OK/WARN/FAIL with the exact fix; a hooks token that
// agent.json overrides is named as such, and npm start's stand-in is told from a gateway. Covered by
// test/node/doctor-gateway.e2e.test.ts, session-key-prefixes.test.ts and start-gateway.test.ts.
import { HUB_PREFIXES, HUB_SESSION_KEY_PREFIXES, hubSubpaths } from "../../protocol/index.ts";
import type { HubPrefix } from "../../protocol/index.ts";
import type { GatewaySettings, HookMapping } from "../gateway/openclaw-config.ts";
import { PROBE_BODY, PROBE_SUBPATH } from "../delivery/gateway-response.ts";
import { gatewayErrorText } from "../gateway/chat-completions.ts";

export type Level = "OK" | "WARN" | "FAIL";
export type AddCheck = (level: Level, what: string, fix?: string) => void;

const PROBE_TIMEOUT_MS = 5000;

/**
 * The header `npm start`'s stand-in gateway answers with (scripts/standin-gateway.ts STANDIN_HEADER;
 * local-agent/ cannot import scripts/): its value says who runs it.
 */
const STANDIN_HEADER = "x-clawrelay-standin";

interface Probe {
  status: number;
  text: string;
  /** Who runs the stand-in that answered (npm start), null for a gateway. */
  standin: string | null;
}

async function probe(url: string, init: RequestInit): Promise<Probe> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return { status: res.status, text: gatewayErrorText(await res.text()), standin: res.headers.get(STANDIN_HEADER) };
  } catch (err) {
    return { status: 0, text: (err as Error).message, standin: null };
  }
}

/**
 * Where the hooks token the agent posts with comes from, when agent.json's gateway.hooks_token overrides
 * openclaw.json's hooks.token: the agent posts with the override, so a refusal is the override's, and
 * the fix is in agent.json (the agent follows an edit there without a restart).
 */
export interface HooksTokenOverride {
  /** The agent.json that sets gateway.hooks_token. */
  settingsPath: string;
  /** openclaw.json's own hooks.token (substituted), null when it has none. */
  configToken: string | null;
}

/** POST {hooks.path}/wake with {}: 400 = hooks on and the token right; nothing is woken (no `text`). */
async function hooksTokenCheck(gateway: GatewaySettings, override: HooksTokenOverride | null, add: AddCheck): Promise<void> {
  if (!gateway.hooksToken) return;
  const answer = await probe(`http://127.0.0.1:${gateway.port}${gateway.hooksPath}/${PROBE_SUBPATH}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gateway.hooksToken}` },
    body: PROBE_BODY,
  });
  const asked = `POST ${gateway.hooksPath}/wake {} answered ${answer.status || "nothing"}`;
  if (answer.standin !== null) {
    // Everything below would pass: the stand-in answers as a gateway does. Nothing it takes reaches a model.
    return add("WARN", `127.0.0.1:${gateway.port} is the stand-in gateway of ${answer.standin}, not OpenClaw: it only prints what it receives, and no OpenClaw agent sees these messages`,
      `start the OpenClaw gateway with hooks on (docs/openclaw-setup.md): ${answer.standin} moves delivery to it as soon as it answers`);
  }
  if (answer.status === 400) add("OK", `the gateway accepts hooks.token (${asked}: hooks on, token right)`);
  else if (answer.status === 401 && override) {
    add("FAIL", `the gateway refused the hooks token set by gateway.hooks_token in ${override.settingsPath}, which overrides openclaw.json's hooks.token (${asked})`,
      override.configToken !== null && override.configToken !== gateway.hooksToken
        ? `remove gateway.hooks_token from ${override.settingsPath} (the agent then posts with openclaw.json's hooks.token; a running agent follows the edit), or set it to the running gateway's hooks.token`
        : `set gateway.hooks_token in ${override.settingsPath} to the running gateway's hooks.token, or remove it and restart the gateway after editing openclaw.json`);
  } else if (answer.status === 401) add("FAIL", `the gateway refused hooks.token (${asked})`, "the running gateway has another hooks.token: restart it after editing openclaw.json, or copy its token into agent.json gateway.hooks_token");
  else if (answer.status === 404) add("FAIL", `hooks are off in the running gateway or hooks.path is not ${gateway.hooksPath} (${asked})`, `set "hooks": { "enabled": true, "path": "${gateway.hooksPath}" } in openclaw.json`);
  else if (answer.status === 429) add("WARN", `the gateway is refusing hooks from this machine for a while (${asked}): too many wrong tokens in a minute`, "wait a minute; check hooks.token in agent.json if you set one there");
  else add("WARN", `could not confirm the hooks token (${asked}${answer.text ? `: ${answer.text}` : ""})`, "run clawrelay doctor again once the gateway is up");
}

const CHAT_ON = `"gateway": { "http": { "endpoints": { "chatCompletions": { "enabled": true } } } }`;

/** The /v1 credential: found (where), and accepted by GET /v1/models. Delegated tasks need both. */
async function gatewayTokenChecks(gateway: GatewaySettings, listening: boolean, add: AddCheck): Promise<void> {
  const level: Level = gateway.chatCompletionsEnabled ? "FAIL" : "WARN";
  if (gateway.chatCompletionsEnabled) add("OK", "chat completions are on (delegated tasks can run here)");
  else add("WARN", "chat completions are off: tasks other agents delegate to this one will fail", `set ${CHAT_ON} in openclaw.json (the gateway applies it without a restart)`);
  const auth = gateway.auth;
  if (auth.mode === "none") {
    add("OK", "the gateway asks no credential on /v1 (gateway.auth.mode none)");
  } else if (auth.problem || !auth.token) {
    add(level, `gateway token not usable: ${auth.problem ?? "none found"}`, "set OPENCLAW_GATEWAY_TOKEN for clawrelay, or gateway.auth_token in agent.json");
    return;
  } else {
    add("OK", `gateway token found (${auth.source})`);
  }
  if (!listening) return;
  const answer = await probe(`http://127.0.0.1:${gateway.port}/v1/models`, { headers: auth.token ? { authorization: `Bearer ${auth.token}` } : {} });
  const asked = `GET /v1/models answered ${answer.status || "nothing"}`;
  if (answer.status === 200) add("OK", `the gateway accepts the gateway token (${asked})`);
  else if (answer.status === 401 || answer.status === 403) add(level, `the gateway refused the gateway token from ${auth.source} (${asked})`, "use the running gateway's gateway.auth.token: OPENCLAW_GATEWAY_TOKEN for clawrelay, or gateway.auth_token in agent.json");
  else if (answer.status === 404) add(level, `the gateway does not serve /v1 (${asked})`, `set ${CHAT_ON} in openclaw.json`);
  else add("WARN", `could not confirm the gateway token (${asked}${answer.text ? `: ${answer.text}` : ""})`);
}

const pairOf = (prefix: HubPrefix) => Object.values(hubSubpaths(prefix));

/**
 * The hub posts to <prefix>_inbox/agent and …/wake: `agentgram` on Agentline, `botcord` in the public
 * code. Either full pair passes; with a prefix chosen by `hub register`, only its own pair is OK.
 * Returns the prefix whose mappings the session checks look at.
 */
function mappingChecks(paths: string[], chosen: HubPrefix | undefined, add: AddCheck): HubPrefix {
  const mapped = HUB_PREFIXES.filter((prefix) => pairOf(prefix).every((p) => paths.includes(p)));
  const preferred = chosen ?? mapped[0] ?? "agentgram";
  if (mapped.includes(preferred)) {
    for (const subpath of pairOf(preferred)) add("OK", `hooks.mappings has ${subpath}`);
    return preferred;
  }
  const other = mapped[0];
  if (other) {
    add("WARN", `hooks.mappings has ${other}_inbox/agent and …/wake, but the hub was registered with prefix ${preferred}: its webhooks will get 404`,
      `add mappings for ${pairOf(preferred).join(" and ")}, or run clawrelay hub register --prefix ${other}`);
    return preferred;
  }
  for (const subpath of pairOf(preferred)) {
    if (paths.includes(subpath)) add("OK", `hooks.mappings has ${subpath}`);
    else add("FAIL", `hooks.mappings has no entry for ${subpath}: the gateway will answer 404`, `add { "match": { "path": "${subpath}" }, … } as the Agentline set-up does`);
  }
  return preferred;
}

/**
 * Whether the gateway lets a session key with this prefix through: it lower-cases the allowed prefixes
 * and the key and tests startsWith (OpenClaw's hooks.ts isSessionKeyAllowedByPrefix); no list allows all.
 */
function prefixAllowed(prefix: string, allowed: readonly string[] | null): boolean {
  return allowed === null || allowed.some((a) => a.trim() !== "" && prefix.toLowerCase().startsWith(a.trim().toLowerCase()));
}

/**
 * Per-sender sessions: every hub message carries the hub's `sessionKey` (botcord:<uuid of its room>, or
 * Agentline's agentline:<room>, HUB_SESSION_KEY_PREFIXES); the gateway uses it only when the mapping
 * passes it on and hooks allow request session keys with those prefixes. Without the mapping line every
 * message opens a fresh session (nothing breaks, no conversation has a memory): WARN. With it, the
 * gateway refuses every key it does not allow (400 "sessionKey is disabled…", "sessionKey must start
 * with one of…"), and the agent shelves those messages: FAIL. Exported for
 * test/node/session-key-prefixes.test.ts, which holds this advice to docs/openclaw-setup.md.
 */
export function sessionChecks(gateway: GatewaySettings, prefix: HubPrefix, add: AddCheck): void {
  const agentPath = hubSubpaths(prefix).agent;
  const mapping: HookMapping | undefined = gateway.mappings.find((m) => m.path === agentPath);
  if (!mapping) return;
  const passesKey = mapping.sessionKey?.includes("{{sessionKey}}") === true;
  const missing: string[] = [];
  if (!passesKey) missing.push(`on the ${agentPath} mapping: "sessionKey": "{{sessionKey}}"`);
  if (!gateway.allowRequestSessionKey) missing.push(`in "hooks": "allowRequestSessionKey": true`);
  const prefixes = gateway.allowedSessionKeyPrefixes;
  const refused = HUB_SESSION_KEY_PREFIXES.filter((p) => !prefixAllowed(p, prefixes));
  if (prefixes && refused.length > 0) missing.push(`in "hooks": "allowedSessionKeyPrefixes": [${[...prefixes, ...refused].map((p) => JSON.stringify(p)).join(", ")}]`);
  const fix = `add ${missing.join("; and ")}`;
  if (missing.length === 0) add("OK", `per-sender sessions: each sender's messages continue one session (the hub's sessionKey: ${HUB_SESSION_KEY_PREFIXES.join(" or ")})`);
  else if (!passesKey) add("WARN", "per-sender sessions are off: every message from the hub opens a fresh session", fix);
  else {
    const which = gateway.allowRequestSessionKey ? `keys starting with ${refused.map((p) => JSON.stringify(p)).join(" or ")}` : "every key (allowRequestSessionKey is off)";
    add("FAIL", `the ${agentPath} mapping passes the hub's sessionKey, but the gateway refuses ${which}: those messages are shelved`, fix);
  }
}

/** The agent posts with agent.json's token: said as such, and a WARN when openclaw.json holds another. */
function tokenOverrideCheck(override: HooksTokenOverride, gateway: GatewaySettings, add: AddCheck): void {
  const where = `gateway.hooks_token in ${override.settingsPath}`;
  if (override.configToken === null || override.configToken === gateway.hooksToken) return add("OK", `the hooks token is set by ${where} (overriding openclaw.json's hooks.token${override.configToken === null ? ", which is unset" : ", the same value"})`);
  add("WARN", `the hooks token is set by ${where}, and differs from openclaw.json's hooks.token: the agent posts with agent.json's, which the gateway refuses unless it runs with that token`,
    `unless you meant it: remove gateway.hooks_token from ${override.settingsPath} (the agent then follows openclaw.json's hooks.token)`);
}

/** Everything doctor checks about the gateway, given the settings the agent would use. */
export async function gatewayChecks(gateway: GatewaySettings, chosenPrefix: HubPrefix | undefined, listening: boolean, add: AddCheck, override: HooksTokenOverride | null = null): Promise<void> {
  if (gateway.hooksEnabled) add("OK", "hooks.enabled is true");
  else add("FAIL", "hooks.enabled is not true", 'set "hooks": { "enabled": true, "token": "<long random>" } in openclaw.json');
  if (override) tokenOverrideCheck(override, gateway, add);
  else if (gateway.hooksToken) add("OK", "hooks.token is set");
  else add("FAIL", "hooks.token is missing", "set hooks.token in openclaw.json (a long random string)");
  add(gateway.hooksPath === "/hooks" ? "OK" : "WARN", `hooks.path is ${gateway.hooksPath}`);
  if (listening) add("OK", `gateway listening on 127.0.0.1:${gateway.port} (${gateway.portSource})`);
  else add("FAIL", `nothing listens on 127.0.0.1:${gateway.port} (${gateway.portSource})`, "start the gateway: openclaw gateway");
  if (listening && gateway.hooksEnabled) await hooksTokenCheck(gateway, override, add);
  const prefix = mappingChecks(gateway.mappingPaths, chosenPrefix, add);
  sessionChecks(gateway, prefix, add);
  await gatewayTokenChecks(gateway, listening, add);
}
