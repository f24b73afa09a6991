// How each forwarding source's app has been answering since the agent started: the last answer, since
// when it has been failing and why, and the counts. In memory only, like the delivery counters. Kept by
// forward-delivery.ts; read by agent.ts (GET /clawrelay/status → `forwards`), cli/cli-status.ts, the
// doctor (doctor/doctor-forward.ts) and the inspector. Covered by test/node/forward-delivery.test.ts,
// forward-policy.test.ts and forward-status.test.ts.

export interface ForwardTargetStatus {
  source: string;
  /** The source's target as its latest event named it. */
  target: string;
  /** The app's last HTTP answer (a refused or dropped connection is not one: see last_error). */
  last_answer: { status: number; detail: string; at: number; id: number } | null;
  /** Set at the first failure (no answer, 408, 429, 5xx) after a success; cleared by the app's next answer that is not one. */
  failing_since: number | null;
  /** The latest failure or refusal, as a person reads it; cleared by a delivery. */
  last_error: string | null;
  delivered: number;
  rejected: number;
  /** While its head waits to retry: when the next attempt goes. */
  next_try_at: number | null;
  /** Failures its current head has spent of the source's retry budget (protocol/lanes.ts FORWARD_POLICY). */
  head_failures: number;
  /** The source's retry budget, as its latest event named it (FORWARD_POLICY.retries when it named none). */
  retries?: number;
}

export class ForwardTargets {
  private readonly bySource = new Map<string, ForwardTargetStatus>();

  /** The state of `source`, made when its first event is seen; the target follows the latest event. */
  seen(source: string, target: string): ForwardTargetStatus {
    let state = this.bySource.get(source);
    if (!state) {
      state = { source, target, last_answer: null, failing_since: null, last_error: null, delivered: 0, rejected: 0, next_try_at: null, head_failures: 0 };
      this.bySource.set(source, state);
    }
    if (state.target !== target) {
      // Another app now: the old one's failures say nothing about it.
      state.target = target;
      state.failing_since = null;
      state.last_error = null;
    }
    return state;
  }

  find(source: string): ForwardTargetStatus | undefined {
    return this.bySource.get(source);
  }

  /** Copies, sorted by source, for a status answer. */
  list(): ForwardTargetStatus[] {
    return [...this.bySource.values()].sort((a, b) => a.source.localeCompare(b.source)).map((s) => ({ ...s, last_answer: s.last_answer && { ...s.last_answer } }));
  }
}
