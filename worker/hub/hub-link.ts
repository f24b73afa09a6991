// How an inbox is linked to its hub: how the hub delivers (webhooks, or nothing and the inbox pulls),
// which sub-path prefix it posts to, and what the link last did (for `clawrelay hub status`).
// The settings are part of the claim (inbox-config.ts); the state lives in meta 'hub_state'.
import { RelayError, isHubPrefix } from "../../protocol/index.ts";
import type { HubPrefix } from "../../protocol/index.ts";

export type HubMode = "webhook" | "pull" | "off";

export interface HubLink {
  /** webhook: the hub posts here (flat 2.x bodies are bridged to their signed originals); pull: the inbox polls the hub; off: not linked. */
  mode: HubMode;
  /** Set by the owner; null: learned from the hub's probes (HubState.learned_prefix), else agentgram. */
  prefix: HubPrefix | null;
  pull_interval_sec: number;
}

/** off: not linked (hub webhooks are stored as they come; nothing is bridged or pulled) — until `clawrelay hub register`. */
export const HUB_LINK_DEFAULTS: HubLink = { mode: "off", prefix: null, pull_interval_sec: 15 };

export interface HubOutcome {
  at: number;
  ok: boolean;
  /** The hub's HTTP status (0: unreachable). */
  status: number;
  detail: string;
}

export interface HubState {
  learned_prefix: HubPrefix | null;
  /** hub_msg_id up to which history records are settled (bridged, not ours, or not messages). */
  history_cursor: string | null;
  bridge_due_at: number | null;
  last_receipt: (HubOutcome & { msg_id: string | null }) | null;
  receipts_refused: number;
  last_pull: (HubOutcome & { count: number }) | null;
  last_bridge: (HubOutcome & { acked: number }) | null;
}

export const EMPTY_HUB_STATE: HubState = {
  learned_prefix: null,
  history_cursor: null,
  bridge_due_at: null,
  last_receipt: null,
  receipts_refused: 0,
  last_pull: null,
  last_bridge: null,
};

const bad = (message: string) => new RelayError(400, "invalid_claim", message);

/** A claim's `hub` object applied over the previous link; throws invalid_claim naming the field. */
export function parseHubLink(value: unknown, previous: HubLink): HubLink {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad("hub must be an object: {mode, prefix, pull_interval_sec}");
  const input = value as Record<string, unknown>;
  const mode = input.mode ?? previous.mode;
  if (mode !== "webhook" && mode !== "pull" && mode !== "off") throw bad('hub.mode must be "webhook", "pull" or "off"');
  const prefix = input.prefix === undefined ? previous.prefix : input.prefix;
  if (prefix !== null && !isHubPrefix(prefix)) throw bad('hub.prefix must be "agentgram", "botcord" or null (learn it from the hub\'s probes)');
  const interval = input.pull_interval_sec ?? previous.pull_interval_sec;
  if (typeof interval !== "number" || !Number.isInteger(interval) || interval < 5 || interval > 3600) throw bad("hub.pull_interval_sec must be an integer from 5 to 3600");
  return { mode, prefix, pull_interval_sec: interval };
}

/** The prefix messages the relay formats itself are posted under, so one pair of mappings serves all. */
export function effectivePrefix(link: HubLink, state: HubState): HubPrefix {
  return link.prefix ?? state.learned_prefix ?? "agentgram";
}
