// plugins.entries.clawrelay.config of openclaw.json, read one way by both of its readers: the plugin's
// service (openclaw-plugin/relay-service.ts), which starts with it and reports it in its status, and
// doctor/status (doctor/agent-presence.ts), which compare that with what the file holds now. The
// gateway does not replace a plugin while an agent run uses it and does not try again, so a change
// saved during a run stays unapplied until `openclaw plugins reload clawrelay`: the comparison is how
// the user learns. Covered by test/node/plugin-config.test.ts and test/openclaw/doctor-plugin.interop.test.ts.

/** openclaw.plugin.json's configSchema says the same. */
export interface PluginConfig {
  /** clawrelay's settings folder (agent.json, card.json, the delivery journal). */
  home?: string;
  /** The local search/delegate API's port (default 19791, or SOCIETY_AI_API_PORT). */
  apiPort?: number;
  /** The gateway's port when it was started with --port (the config cannot tell). */
  gatewayPort?: number;
  /** Which OpenClaw agent runs delegated tasks: "openclaw" or "openclaw/<agentId>". */
  openclawAgent?: string;
}

const KEYS = ["home", "apiPort", "gatewayPort", "openclawAgent"] as const;

/** The fields the plugin uses; anything else (or of the wrong type) is left out, as the plugin ignores it. */
export function pluginConfigOf(value: unknown): PluginConfig {
  const c = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  const port = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 65535 ? v : undefined);
  const apiPort = port(c.apiPort);
  const gatewayPort = port(c.gatewayPort);
  return {
    ...(typeof c.home === "string" && c.home !== "" ? { home: c.home } : {}),
    ...(apiPort !== undefined ? { apiPort } : {}),
    // 0 would mean "any port", which cannot be where the gateway listens.
    ...(gatewayPort ? { gatewayPort } : {}),
    ...(typeof c.openclawAgent === "string" && c.openclawAgent !== "" ? { openclawAgent: c.openclawAgent } : {}),
  };
}

/** "apiPort 19791 → 4100" for each field that differs between the running plugin's config and the saved one; [] when none. */
export function pluginConfigChanges(running: PluginConfig, saved: PluginConfig): string[] {
  const shown = (v: string | number | undefined) => (v === undefined ? "(unset)" : typeof v === "string" ? JSON.stringify(v) : String(v));
  return KEYS.filter((key) => running[key] !== saved[key]).map((key) => `${key} ${shown(running[key])} → ${shown(saved[key])}`);
}
