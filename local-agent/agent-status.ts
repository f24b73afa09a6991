// What the running agent reports of itself (GET /clawrelay/status, `clawrelay status`, the inspector).
// Types only, apart from agent.ts so the readers of a status need not import the agent that makes it.
// Covered by test/node/cli-start-status.e2e.test.ts and forward-status.test.ts.
import type { OutboxPage, QueueSummary } from "../protocol/index.ts";
import type { DeliveryStatus } from "./delivery/delivery-status.ts";
import type { ForwardTargetStatus } from "./forward/forward-targets.ts";
import type { ConnectionState } from "./relay/relay-client.ts";
import type { HubSideStatus } from "./hub/hub-side.ts";
import type { SettingsFileStatus } from "./gateway/settings-follow.ts";
import type { PluginConfig } from "./gateway/plugin-config.ts";

export type AgentRunsIn = "standalone" | "gateway plugin";

export interface AgentStatus {
  agent_id: string;
  /** "standalone" (clawrelay start) or "gateway plugin" (openclaw-plugin/). */
  runs_in: AgentRunsIn;
  /** Inside the gateway: plugins.entries.clawrelay.config as the plugin started with it. */
  plugin_config?: PluginConfig;
  relay: { url: string; state: ConnectionState; since: number; backlog: number | null; error: string | null };
  /** `problem`: why nothing can be posted to the gateway (no hooks token: none set up); null when it can. */
  gateway: {
    port: number; hooks_path: string; config_path: string | null; auth_source: string; config_error: string | null; problem: string | null;
    /** agent.json as followed (gateway/settings-follow.ts): a broken edit's error, fields that need a restart; null: not followed. */
    settings_file?: SettingsFileStatus | null;
  };
  /**
   * `cursor`: every id up to it is finished (persisted in the delivery journal). `forwards`: each source
   * seen since the start whose events go to a local app, and how that app has been answering.
   */
  delivery: DeliveryStatus & { cursor: number; forwards: ForwardTargetStatus[] };
  delegation: { waiting: number; late_results_dropped: number };
  /** The hub link's side: the mode the relay said, the hub's WebSocket, the credentials file kept in step. */
  hub: HubSideStatus;
  /**
   * Live requests this process answered (local-agent/live/): counts, under way now, the latest (its path
   * without the query). `relay` says whether the relay's `ready` named live. Absent from an older agent.
   */
  live?: {
    answered: number;
    failed: number;
    in_flight: number;
    last: { at: number; method: string; path: string; status: number | null; duration_ms: number; to: string } | null;
    relay?: boolean;
  };
  api_port: number;
  started_at: number;
}

/** What `GET /clawrelay/status` answers: the agent's own status and the relay's live counts. */
export type AgentStatusAnswer = AgentStatus & {
  relay_queue: QueueSummary | { error: string };
  /** The relay's view of the hub link (GET /inbox/{id}/hub), null when it could not be read. */
  relay_hub: { mode: string; prefix: string; last_receipt: { at: number; ok: boolean; status: number; detail: string } | null; receipts_refused: number } | null;
  /** The relay's outbox (GET /inbox/{id}/outbox?limit=0): records kept and the acks setting; null when it has none (an older relay) or could not be read. */
  relay_outbox?: Pick<OutboxPage, "total" | "acks"> | null;
};

