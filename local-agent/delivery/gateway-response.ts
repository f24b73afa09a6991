// What a gateway answer means for a message (the OpenClaw gateway's documented and observed answers).
// Config errors pause all delivery (every later message would fail the same way, and order is kept);
// content errors send that one message to the relay's dead shelf; transient errors retry it.
// A 404 is ambiguous on the real gateway — hooks off, or no mapping for this sub-path — so it is
// settled by a probe (classifyProbe) before anything is paused or shelved; an unmapped sub-path's reason
// carries a mapping fitted to the message's body (mapping-suggestion.ts).
// Covered by test/node/gateway-response.test.ts.
import { suggestMapping } from "./mapping-suggestion.ts";

export type GatewayOutcome =
  | { kind: "accepted" }
  | { kind: "transient"; reason: string }
  | { kind: "rate_limited"; retryAfterMs: number }
  | { kind: "config_error"; reason: string }
  | { kind: "content_error"; reason: string }
  | { kind: "not_found"; reason: string };

const DOCTOR = "(run clawrelay doctor)";

/** Why a 401: the token does not match — naming agent.json's override when the token came from there (GatewayTarget.tokenFrom). */
function tokenMismatch(tokenFrom: string | undefined): string {
  if (!tokenFrom) return `hooks.token does not match the gateway's ${DOCTOR}`;
  return `the hooks token set by ${tokenFrom} (it overrides openclaw.json's hooks.token) does not match the gateway's: correct it there or remove it ${DOCTOR}`;
}

export function classifyGatewayResponse(status: number, retryAfter: string | null, defaultRetryAfterMs: number, detail = "", tokenFrom?: string): GatewayOutcome {
  const what = detail ? `${status} ${detail}` : String(status);
  if (status === 200 || status === 202 || status === 204) return { kind: "accepted" };
  if (status === 0) return { kind: "transient", reason: detail || "gateway unreachable" };
  if (status === 429) return { kind: "rate_limited", retryAfterMs: parseRetryAfter(retryAfter) ?? defaultRetryAfterMs };
  if (status === 401) return { kind: "config_error", reason: `gateway answered ${what}: ${tokenMismatch(tokenFrom)}` };
  if (status === 404) return { kind: "not_found", reason: `gateway answered ${what}` };
  if (status === 408 || status === 409 || status >= 500) return { kind: "transient", reason: `gateway answered ${what}` };
  if (status === 413) return { kind: "content_error", reason: `gateway refused this message with ${what}: the body is above the gateway's 256 KiB hook limit` };
  return { kind: "content_error", reason: `gateway refused this message with ${what}` };
}

/** The body of the probe: the built-in wake route refuses it (400, "text required") without waking anyone. */
export const PROBE_SUBPATH = "wake";
export const PROBE_BODY = "{}";

/**
 * After a 404 on `subpath`, the answer to POST {hooks.path}/wake with {} tells which 404 it was:
 * 400 (or any acceptance) = hooks are on and the token is right, so only this sub-path has no mapping;
 * 401 = wrong token; 404 = hooks off or the wrong hooks.path; anything else = try again later.
 */
export function classifyProbe(probeStatus: number, subpath: string, hooksPath: string, first404: string, body: Uint8Array | string = "{}", tokenFrom?: string): GatewayOutcome {
  if (probeStatus === 400 || probeStatus === 200 || probeStatus === 202 || probeStatus === 204) {
    const { entry, note } = suggestMapping(subpath, body);
    return {
      kind: "content_error",
      reason:
        `${first404}: the gateway has no hooks.mappings entry for "${subpath}" (hooks are on and the token is right). ` +
        `For this body add ${entry} to hooks.mappings in openclaw.json, then replay this message${note ? `; ${note}` : ""}`,
    };
  }
  if (probeStatus === 401) return { kind: "config_error", reason: `${first404}, and ${hooksPath}/wake answered 401: ${tokenMismatch(tokenFrom)}` };
  if (probeStatus === 404) {
    return { kind: "config_error", reason: `${first404}, and ${hooksPath}/wake answered 404 too: hooks are disabled (hooks.enabled) or hooks.path is not "${hooksPath}" ${DOCTOR}` };
  }
  if (probeStatus === 429) return { kind: "rate_limited", retryAfterMs: 60_000 };
  return { kind: "transient", reason: `${first404}; the probe of ${hooksPath}/wake answered ${probeStatus || "nothing (unreachable)"}` };
}

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | null {
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}
