// The inspector's and /metrics' figures: outcomes counted, the latency histogram, the last hour by
// minute (zero-filled, older minutes dropped), finished bodies kept within their byte budget, and the
// Prometheus text rendered from them; a kept message's credential headers redacted.
import { describe, expect, it } from "vitest";
import { DeliveryFeed, LATENCY_BOUNDS_S } from "../../local-agent/inspector/delivery-feed.ts";
import type { DeliveryEvent } from "../../local-agent/inspector/delivery-feed.ts";
import { renderMetrics } from "../../local-agent/inspector/metrics.ts";

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const event = (over: Partial<DeliveryEvent>): DeliveryEvent => ({
  outcome: "delivered", id: 1, subpath: "a", sender: null, status: 200, at: T0, latency_ms: 20, attempts: 1, detail: null, ...over,
});

describe("DeliveryFeed", () => {
  it("counts outcomes, bins delivered latencies, and figures the last hour by minute", () => {
    const feed = new DeliveryFeed();
    feed.record(event({ id: 1, latency_ms: 3 }));
    feed.record(event({ id: 2, latency_ms: 700, at: T0 + 61_000 }));
    feed.record(event({ id: 3, outcome: "rejected", status: 400, at: T0 + 61_000 }));
    feed.record(event({ id: 4, outcome: "retrying", status: 503, at: T0 + 62_000 }));
    feed.record(event({ id: 5, latency_ms: 5 * 3600_000, at: T0 + 62_000 }));
    expect(feed.totals).toEqual({ delivered: 3, rejected: 1, retried: 1 });
    expect(feed.latencyBuckets[0]).toBe(1);
    expect(feed.latencyBuckets[LATENCY_BOUNDS_S.indexOf(1)]).toBe(1);
    expect(feed.latencyBuckets.at(-1)).toBe(1);
    const hour = feed.lastHour(T0 + 62_000);
    expect(hour).toHaveLength(60);
    expect(hour.at(-1)).toEqual({ at: T0 + 60_000, delivered: 2, failed: 2, latency_sum_ms: 700 + 5 * 3600_000, latency_max_ms: 5 * 3600_000 });
    expect(hour.at(-2)).toMatchObject({ at: T0, delivered: 1, failed: 0 });
    expect(hour[0]).toMatchObject({ delivered: 0, failed: 0 });
    // Two hours on, nothing of that is in the last hour.
    feed.record(event({ id: 6, at: T0 + 2 * 3600_000 }));
    expect(feed.lastHour(T0 + 2 * 3600_000).reduce((n, m) => n + m.delivered + m.failed, 0)).toBe(1);
  });

  it("keeps a finished message's credential headers redacted: the inspector never holds a sender's Authorization or Cookie", () => {
    const feed = new DeliveryFeed();
    const headers = { authorization: "Bearer sk_live_abc", cookie: "session=1", "x-gitlab-token": "glt-1", "stripe-signature": "t=1,v1=ab", "content-type": "application/json" };
    feed.record(event({ id: 9, message: { content_type: "application/json", body: "{}", encoding: "utf8", headers, kind: "hook" } }));
    expect(feed.keptMessage(9)?.headers).toEqual({ authorization: "[redacted]", cookie: "[redacted]", "x-gitlab-token": "[redacted]", "stripe-signature": "t=1,v1=ab", "content-type": "application/json" });
  });

  it("tells listeners, keeps finished bodies within 4 MiB and never the retried ones, and counts reconnects", () => {
    const feed = new DeliveryFeed();
    const seen: number[] = [];
    const stop = feed.subscribe((e) => seen.push(e.id));
    const big = "x".repeat(900 * 1024);
    for (let id = 1; id <= 6; id++) feed.record(event({ id, message: { content_type: "text/plain", body: big, encoding: "utf8", headers: null, kind: "hook" } }));
    feed.record(event({ id: 7, outcome: "retrying", message: { content_type: "text/plain", body: "retry", encoding: "utf8", headers: null, kind: "hook" } }));
    stop();
    feed.record(event({ id: 8 }));
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(feed.keptMessage(1)).toBeNull();
    expect(feed.keptMessage(2)).toBeNull();
    expect(feed.keptMessage(6)?.body.length).toBe(big.length);
    expect(feed.keptMessage(7)).toBeNull();
    expect(feed.recent.every((e) => !("message" in e))).toBe(true);
    expect(feed.reconnects).toBe(0);
    feed.connections = 3;
    expect(feed.reconnects).toBe(2);
  });
});

describe("renderMetrics", () => {
  it("renders counters, gauges and a cumulative histogram; the relay's counts only when it answered", () => {
    const feed = new DeliveryFeed();
    feed.record(event({ latency_ms: 4 }));
    feed.record(event({ latency_ms: 40 }));
    feed.record(event({ outcome: "rejected" }));
    const text = renderMetrics({ feed, relayConnected: true, relayQueue: { queued: 3, sent: 1, dead: 2, oldest_waiting_at: null }, inAgent: 1, paused: false, startedAtMs: T0 });
    expect(text).toContain('clawrelay_deliveries_total{outcome="delivered"} 2\n');
    expect(text).toContain('clawrelay_delivery_latency_seconds_bucket{le="0.005"} 1\n');
    expect(text).toContain('clawrelay_delivery_latency_seconds_bucket{le="0.05"} 2\n');
    expect(text).toContain('clawrelay_delivery_latency_seconds_bucket{le="+Inf"} 2\n');
    expect(text).toContain("clawrelay_delivery_latency_seconds_sum 0.044\n");
    expect(text).toContain('clawrelay_queued_messages{state="queued"} 3\n');
    expect(text).toContain("clawrelay_dead_messages 2\n");
    expect(text).toContain("# TYPE clawrelay_delivery_latency_seconds histogram\n");
    const offline = renderMetrics({ feed, relayConnected: false, relayQueue: null, inAgent: 0, paused: true, startedAtMs: T0 });
    expect(offline).toContain("clawrelay_relay_queue_up 0\n");
    expect(offline).toContain("clawrelay_delivery_paused 1\n");
    expect(offline).not.toContain("clawrelay_dead_messages");
  });
});
