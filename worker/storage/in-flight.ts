// What the connected agent holds unacknowledged, in either of a socket's two modes (socket-session.ts):
// an older agent's contiguous range (every queued id in (from, upTo]) or a lanes agent's set of ids. The
// store takes it wherever "sent" matters — summary and listing, ack, reject, drop, expiry — as a test in
// JS (holds) or as a SQL condition (inFlightSql). Pure; covered by test/worker/websocket-lanes.test.ts and
// test/worker/websocket-delivery.test.ts.

export type InFlight =
  /** An older agent's socket: queued ids in (from, upTo] were sent on it. */
  | { from: number; upTo: number }
  /** A lanes socket: exactly these ids were sent on it and not yet acknowledged. */
  | { ids: readonly number[] };

export function holds(inFlight: InFlight | null, seq: number): boolean {
  if (!inFlight) return false;
  return "ids" in inFlight ? inFlight.ids.includes(seq) : seq > inFlight.from && seq <= inFlight.upTo;
}

/**
 * `seq` is in flight, as a SQL condition and its parameters (one JSON parameter for a set: SQLite allows
 * 100 bound parameters a statement, a window holds up to 256 ids). Never true without a connected agent.
 */
export function inFlightSql(inFlight: InFlight | null): [string, SqlStorageValue[]] {
  if (inFlight && "ids" in inFlight) return ["seq IN (SELECT value FROM json_each(?))", [JSON.stringify(inFlight.ids)]];
  return ["(seq > ? AND seq <= ?)", [inFlight?.from ?? 0, inFlight?.upTo ?? 0]];
}

/** Whether one message, `seq`, is in flight, as a SQL condition: a set is looked up here, reading no row for it. */
export function seqInFlightSql(inFlight: InFlight, seq: number): [string, SqlStorageValue[]] {
  if ("ids" in inFlight) return [inFlight.ids.includes(seq) ? "1" : "0", []];
  return inFlightSql(inFlight);
}
