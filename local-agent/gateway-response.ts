// What a gateway answer means for a message (openclaw.md, "Responses to expect").
// Config errors pause all delivery (every later message would fail the same way, and order is kept);
// content errors set only that message aside; transient errors retry the same message.

export type GatewayOutcome =
  | { kind: "accepted" }
  | { kind: "transient"; reason: string }
  | { kind: "rate_limited"; retryAfterMs: number }
  | { kind: "config_error"; reason: string }
  | { kind: "content_error"; reason: string };

export function classifyGatewayResponse(status: number, retryAfter: string | null, defaultRetryAfterMs: number, detail = ""): GatewayOutcome {
  const what = detail ? `${status} ${detail}` : String(status);
  if (status === 200 || status === 202 || status === 204) return { kind: "accepted" };
  if (status === 0) return { kind: "transient", reason: detail || "gateway unreachable" };
  if (status === 429) return { kind: "rate_limited", retryAfterMs: parseRetryAfter(retryAfter) ?? defaultRetryAfterMs };
  if (status === 401) return { kind: "config_error", reason: `gateway answered ${what}: hooks.token does not match the gateway's (run clawrelay doctor)` };
  if (status === 404) return { kind: "config_error", reason: `gateway answered ${what}: hooks are disabled or no hooks.mappings entry matches this sub-path (run clawrelay doctor)` };
  if (status === 408 || status === 409 || status >= 500) return { kind: "transient", reason: `gateway answered ${what}` };
  return { kind: "content_error", reason: `gateway refused this message with ${what}` };
}

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}
