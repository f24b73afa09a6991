// How an inbox is linked to its hub: how the hub delivers (webhooks, or nothing and the inbox pulls),
// which sub-path prefix it posts to, and what the link last did (for `clawrelay hub status`).
// The settings are part of the claim (inbox-config.ts); the state lives in meta 'hub_state', written
// only by the hub link (hub-link.ts) through the store. Shapes only, and the prefix rule; covered by
// test/worker/claim.test.ts and test/worker/hub-bridge.test.ts.
import { RelayError, isHubPrefix } from "../../protocol/index.ts";
import type { HubLinkMode, HubPrefix } from "../../protocol/index.ts";

export type HubMode = HubLinkMode;

export interface HubLinkSettings {
  /** webhook: the hub posts here (flat 2.x bodies are bridged to their signed originals); pull: the inbox polls the hub; off: not linked. */
  mode: HubMode;
  /** Set by the owner; null: learned from the hub's probes (HubState.learned_prefix), else the mode's default. */
  prefix: HubPrefix | null;
  /**
   * Pull mode: the longest wait between two pulls while nothing arrives (hub-schedule.ts backs off to
   * it). 120 s keeps an idle inbox at 720 alarm runs and row writes a day.
   */
  pull_interval_sec: number;
}

/** off: not linked (hub webhooks are stored as they come; nothing is bridged or pulled) — until `clawrelay hub register`. */
export const HUB_LINK_DEFAULTS: HubLinkSettings = { mode: "off", prefix: null, pull_interval_sec: 120 };

export interface HubOutcome {
  at: number;
  ok: boolean;
  /** The hub's HTTP status (0: unreachable). */
  status: number;
  detail: string;
}

/** A flat webhook body stored before its signed original was found (webhook-era/hub-bridge.ts). */
export interface BridgeClaim {
  /** The stored message's id. */
  seq: number;
  sender: string;
  /** sha-256 hex of the body's text after "says: " (the text itself may be large). */
  text_hash: string;
  session_key: string;
  at: number;
  /**
   * A body byte-identical to one stored in the last hour is held here instead (seq 0): the hub sends
   * the same bytes again after a 2xx it did not get, and a second identical message looks the same.
   * It is stored once the history shows a record no other body claimed, else dropped after the grace.
   */
  held?: { text: string; subpath: string; content_type: string };
}

export interface HubState {
  learned_prefix: HubPrefix | null;
  /** Flat bodies waiting for their signed original, oldest first. */
  claims: BridgeClaim[];
  /** sha-256 of the flat bodies stored lately (an hour at most), to notice the hub sending one again. */
  recent_bodies: { hash: string; at: number }[];
  /** hub_msg_id up to which history records are settled (bridged, not ours, or not messages). */
  history_cursor: string | null;
  bridge_due_at: number | null;
  last_receipt: (HubOutcome & { msg_id: string | null }) | null;
  receipts_refused: number;
  last_pull: (HubOutcome & { count: number }) | null;
  last_bridge: (HubOutcome & { acked: number }) | null;
  /**
   * The hub refused a token the inbox held (401) though it had not expired: another client of this
   * agent refreshed its token, which ends every older one. `hub status` and `doctor` show it.
   */
  token_lost: { count: number; last_at: number } | null;
  /** hub_msg_ids the inbox pulled lately (newest last), so a status check can tell what another client took. */
  recent_pulled: string[];
}

export const EMPTY_HUB_STATE: HubState = {
  learned_prefix: null,
  claims: [],
  recent_bodies: [],
  history_cursor: null,
  bridge_due_at: null,
  last_receipt: null,
  receipts_refused: 0,
  last_pull: null,
  last_bridge: null,
  token_lost: null,
  recent_pulled: [],
};

const bad = (message: string) => new RelayError(400, "invalid_claim", message);

/** A claim's `hub` object applied over the previous link; throws invalid_claim naming the field. */
export function parseHubLink(value: unknown, previous: HubLinkSettings): HubLinkSettings {
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

/**
 * The prefix messages the relay formats itself are posted under, so one pair of mappings serves all:
 * set, else learned from the hub's probes, else botcord for a pulling link (hubs that only offer pull
 * run the public code, whose webhooks used botcord_inbox/…), else agentgram (the Agentline service).
 */
export function effectivePrefix(link: HubLinkSettings, state: HubState): HubPrefix {
  return link.prefix ?? state.learned_prefix ?? (link.mode === "pull" ? "botcord" : "agentgram");
}

/** Where the effective prefix came from, for `hub status`. */
export function prefixSource(link: HubLinkSettings, state: HubState): string {
  if (link.prefix) return "set";
  if (state.learned_prefix) return "learned from the hub's probes";
  return link.mode === "pull" ? "default for a pulling link" : "default";
}
