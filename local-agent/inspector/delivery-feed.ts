// What the inspector page and /metrics show of deliveries: the latest outcomes, per-minute figures over
// the last hour, counters and a latency histogram since the process started, and how often the relay
// link came up; the live requests the agent answered are listed too (kind "live"), not counted. In memory only (a restart starts afresh, as the status counters do). Fed by delivery.ts
// and agent.ts; read by inspector-routes.ts and metrics.ts; covered by test/node/delivery-feed.test.ts.
// A kept message's credential headers are stored redacted (protocol/credential-headers.ts): the page
// and its API never hold a sender's Authorization, Cookie or API key.
import { redactHeaderRecord } from "../../protocol/index.ts";

export type DeliveryOutcome = "delivered" | "rejected" | "retrying";

/** What a person opening a finished message sees: the stored body as the relay delivered it. */
export interface KeptMessage {
  content_type: string;
  body: string;
  encoding: "utf8" | "base64";
  headers: Record<string, string> | null;
  kind: "hook" | "envelope";
}

export interface DeliveryEvent {
  /** "live": a live request the agent answered (delivered) or could not (rejected); its id is negative, no message's. */
  kind?: "live";
  outcome: DeliveryOutcome;
  id: number;
  /** The gateway sub-path; for a forwarded event, its URL tail, else its source's name. */
  subpath: string;
  /** An envelope's signed sender, a hub body's, or a webhook source (`source:github`); null when unknown. */
  sender: string | null;
  /** The gateway's status, or the app's for a forwarded event (0: unreachable or not posted). */
  status: number;
  /** A forwarded event's URL (its source's target with its tail) and method; absent for the gateway's. */
  target?: string;
  method?: string;
  at: number;
  /** From the relay's receipt of the message to this outcome. */
  latency_ms: number;
  attempts: number;
  /** Why it was rejected, or why it is retried. */
  detail: string | null;
  /** The message itself, kept a while for the inspector once it is finished (never sent in the feed). */
  message?: KeptMessage;
}

export interface MinuteFigures {
  /** Start of the minute (ms). */
  at: number;
  delivered: number;
  failed: number;
  latency_sum_ms: number;
  latency_max_ms: number;
}

/** Histogram bounds (s) for relay receipt → gateway accept: milliseconds live, hours after a night offline. */
export const LATENCY_BOUNDS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600] as const;
const RECENT = 200;
/** Finished messages' bodies are kept up to this much in all, newest first: the relay deletes them on ack. */
const KEPT_BYTES = 4 * 1024 * 1024;
const MINUTE_MS = 60_000;
const HOUR_MINUTES = 60;

export class DeliveryFeed {
  readonly recent: DeliveryEvent[] = [];
  readonly totals = { delivered: 0, rejected: 0, retried: 0 };
  /** Delivered messages with latency ≤ each bound (not cumulative here; metrics.ts sums them), then +Inf. */
  readonly latencyBuckets: number[] = new Array<number>(LATENCY_BOUNDS_S.length + 1).fill(0);
  latencySumS = 0;
  /** Times the relay link came up; the first is the start, each after it a reconnect. */
  connections = 0;
  private readonly minutes = new Map<number, MinuteFigures>();
  private readonly listeners = new Set<(event: DeliveryEvent) => void>();
  private readonly kept = new Map<number, KeptMessage>();
  private keptBytes = 0;

  record(full: DeliveryEvent): void {
    const { message, ...event } = full;
    if (event.kind === "live") return this.recordLive(event);
    if (message && event.outcome !== "retrying") this.keep(event.id, message);
    this.recent.push(event);
    if (this.recent.length > RECENT) this.recent.shift();
    if (event.outcome === "delivered") {
      this.totals.delivered++;
      const seconds = event.latency_ms / 1000;
      this.latencySumS += seconds;
      const bucket = LATENCY_BOUNDS_S.findIndex((bound) => seconds <= bound);
      this.latencyBuckets[bucket === -1 ? LATENCY_BOUNDS_S.length : bucket]! += 1;
    } else if (event.outcome === "rejected") this.totals.rejected++;
    else this.totals.retried++;
    const minute = this.minute(event.at);
    if (event.outcome === "delivered") {
      minute.delivered++;
      minute.latency_sum_ms += event.latency_ms;
      minute.latency_max_ms = Math.max(minute.latency_max_ms, event.latency_ms);
    } else minute.failed++;
    for (const listener of this.listeners) listener(event);
  }

  /** A live request is listed, never counted with deliveries (it was no inbox message), never kept. */
  private recordLive(event: DeliveryEvent): void {
    this.recent.push(event);
    if (this.recent.length > RECENT) this.recent.shift();
    for (const listener of this.listeners) listener(event);
  }

  get reconnects(): number {
    return Math.max(0, this.connections - 1);
  }

  /** The last 60 minutes up to `nowMs`, oldest first, minutes without deliveries included. */
  lastHour(nowMs: number): MinuteFigures[] {
    const current = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS;
    const out: MinuteFigures[] = [];
    for (let i = HOUR_MINUTES - 1; i >= 0; i--) {
      const at = current - i * MINUTE_MS;
      out.push(this.minutes.get(at) ?? { at, delivered: 0, failed: 0, latency_sum_ms: 0, latency_max_ms: 0 });
    }
    return out;
  }

  /** A finished message's body and headers, while it is still kept. */
  keptMessage(id: number): KeptMessage | null {
    return this.kept.get(id) ?? null;
  }

  private keep(id: number, message: KeptMessage): void {
    if (message.body.length > KEPT_BYTES / 4) return;
    const previous = this.kept.get(id);
    if (previous) {
      this.kept.delete(id);
      this.keptBytes -= previous.body.length;
    }
    this.kept.set(id, message.headers ? { ...message, headers: redactHeaderRecord(message.headers) } : message);
    this.keptBytes += message.body.length;
    for (const [oldest, old] of this.kept) {
      if (this.keptBytes <= KEPT_BYTES) break;
      this.kept.delete(oldest);
      this.keptBytes -= old.body.length;
    }
  }

  /** Calls `listener` with every event from now on; returns the way to stop. */
  subscribe(listener: (event: DeliveryEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private minute(at: number): MinuteFigures {
    const start = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    let figures = this.minutes.get(start);
    if (!figures) {
      figures = { at: start, delivered: 0, failed: 0, latency_sum_ms: 0, latency_max_ms: 0 };
      this.minutes.set(start, figures);
      for (const key of this.minutes.keys()) if (key <= start - HOUR_MINUTES * MINUTE_MS) this.minutes.delete(key);
    }
    return figures;
  }
}
