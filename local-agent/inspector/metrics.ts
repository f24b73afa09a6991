// GET /metrics on the agent's loopback port, in the Prometheus text format (version 0.0.4), for people
// who already scrape into Grafana: deliveries by outcome, the relay's queued and dead counts, the
// latency histogram, the relay link. Pure: the figures come in, text goes out. Served by
// inspector-routes.ts; covered by test/node/delivery-feed.test.ts.
import type { QueueSummary } from "../../protocol/index.ts";
import { LATENCY_BOUNDS_S } from "./delivery-feed.ts";
import type { DeliveryFeed } from "./delivery-feed.ts";

export interface MetricsInput {
  feed: DeliveryFeed;
  relayConnected: boolean;
  /** The relay's own counts (null: it could not be asked just now). */
  relayQueue: QueueSummary | null;
  /** Taken from the relay and not finished by this agent. */
  inAgent: number;
  paused: boolean;
  startedAtMs: number;
}

function metric(lines: string[], name: string, type: "counter" | "gauge" | "histogram", help: string, samples: [string, number][]): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  for (const [labels, value] of samples) lines.push(`${name}${labels} ${Number.isFinite(value) ? value : "NaN"}`);
}

export function renderMetrics(input: MetricsInput): string {
  const { feed } = input;
  const lines: string[] = [];
  metric(lines, "clawrelay_deliveries_total", "counter", "Outcomes of gateway posts since the agent started: delivered (accepted), rejected (to the dead shelf), retried (a failure to try again).", [
    ['{outcome="delivered"}', feed.totals.delivered],
    ['{outcome="rejected"}', feed.totals.rejected],
    ['{outcome="retried"}', feed.totals.retried],
  ]);
  let cumulative = 0;
  const buckets: [string, number][] = LATENCY_BOUNDS_S.map((bound, i) => {
    cumulative += feed.latencyBuckets[i]!;
    return [`_bucket{le="${bound}"}`, cumulative];
  });
  buckets.push(['_bucket{le="+Inf"}', feed.totals.delivered], ["_sum", feed.latencySumS], ["_count", feed.totals.delivered]);
  lines.push("# HELP clawrelay_delivery_latency_seconds From the relay's receipt of a message to the gateway's accept.", "# TYPE clawrelay_delivery_latency_seconds histogram");
  for (const [suffix, value] of buckets) lines.push(`clawrelay_delivery_latency_seconds${suffix} ${value}`);
  metric(lines, "clawrelay_relay_connected", "gauge", "1 while the agent's WebSocket to its inbox is up.", [["", input.relayConnected ? 1 : 0]]);
  metric(lines, "clawrelay_relay_reconnects_total", "counter", "Times the link to the relay came up again after the first.", [["", feed.reconnects]]);
  metric(lines, "clawrelay_delivery_paused", "gauge", "1 while a gateway configuration error holds every message back.", [["", input.paused ? 1 : 0]]);
  metric(lines, "clawrelay_agent_messages", "gauge", "Messages taken from the relay and not yet finished by the agent.", [["", input.inAgent]]);
  metric(lines, "clawrelay_relay_queue_up", "gauge", "1 when the relay answered for its queue counts on this scrape.", [["", input.relayQueue ? 1 : 0]]);
  if (input.relayQueue) {
    metric(lines, "clawrelay_queued_messages", "gauge", "Messages the relay holds for this inbox, by state (queued: waiting; sent: in the agent's hands).", [
      ['{state="queued"}', input.relayQueue.queued],
      ['{state="sent"}', input.relayQueue.sent],
    ]);
    metric(lines, "clawrelay_dead_messages", "gauge", "Messages on the relay's dead shelf, waiting for a replay or a drop.", [["", input.relayQueue.dead]]);
  }
  metric(lines, "clawrelay_agent_start_time_seconds", "gauge", "When the agent started (unix seconds).", [["", Math.floor(input.startedAtMs / 1000)]]);
  return lines.join("\n") + "\n";
}
