// Answers one live request (protocol/live.ts LiveRequestFrame) by sending it where it goes: to "app"
// through the forwarding part's app client (the same checks as a forwarded event's: the target, the URL
// its tail makes, the address guard), to "gateway" as the hook post a delivery of the source's event
// would be (delivery/gateway-forwarder.ts), to "a2a" at the gateway's own port, only at the A2A channel's
// paths, the sender's headers kept (its bearer token too: the gateway checks it again). The answer is read
// whole up to LIVE.answerBodyMaxBytes. Whatever the relay sent is checked again here. A failure says
// `not_sent` only when the target provably did not get the request (a refused connection, a request
// refused before any connection), since the relay then holds the request to deliver it later. Never
// throws. Used by agent-live.ts; covered by test/node/live-app.e2e.test.ts and live-gateway.e2e.test.ts.
import { LIVE, checkForwardTarget, forwardUrl, fromBase64, utf8 } from "../../protocol/index.ts";
import type { LiveFailure, LiveRequestFrame } from "../../protocol/index.ts";
import type { NoGateway } from "../delivery/delivery-options.ts";
import { hookPath } from "../delivery/gateway-forwarder.ts";
import type { GatewayAnswer, GatewayTarget, PostOptions } from "../delivery/gateway-forwarder.ts";
import type { GatewayRequest } from "../delivery/hub-format.ts";
import type { AppRequest } from "../forward/app-client.ts";
import type { AppAnswer, WholeAnswer } from "../forward/app-response.ts";
import { FORWARD_DEFAULTS } from "../forward/app-response.ts";
import { withoutConnectionHeaders } from "../forward/forward-request.ts";

/** The A2A channel's paths on the gateway (docs/channels/a2a.md): nothing else of it is reached this way. */
export const A2A_PATHS = ["/a2a/v1", "/.well-known/agent-card.json", "/.well-known/agent.json"] as const;

export type LiveResult =
  | { kind: "answered"; status: number; headers: [string, string][]; body: Uint8Array }
  | { kind: "failed"; failure: LiveFailure; status: number | null };

export interface LiveTargets {
  agentId: string;
  postToApp(request: AppRequest, signal?: AbortSignal): Promise<AppAnswer>;
  postToGateway(target: GatewayTarget, request: GatewayRequest, idempotencyKey: string | null, options: PostOptions): Promise<GatewayAnswer>;
  /** Where the gateway's hooks are now, or why there are none. */
  gatewayTarget(): GatewayTarget | NoGateway;
  /** The gateway's port now (its A2A channel answers there, hooks token or not). */
  gatewayPort(): number;
}

const failed = (code: LiveFailure["code"], message: string, notSent: boolean, status: number | null = null): LiveResult => ({ kind: "failed", failure: { code, message, not_sent: notSent }, status });

/** The agent gives up on a live post at the relay's deadline plus a source's forward time-out (the app may still be slow to answer a held copy). */
export function liveTimeoutMs(frame: LiveRequestFrame): number {
  return frame.deadline_ms + FORWARD_DEFAULTS.timeoutMs;
}

/** An answer read whole: returned, or a failure when it was too large or broken off. */
function wholeResult(status: number, whole: WholeAnswer | undefined, what: string): LiveResult {
  if (!whole) return failed("unreachable", `${what} answered ${status} but its body could not be read`, false, status);
  if (whole.tooLarge) return failed("answer_too_large", `${what} answered ${status} with a body over ${LIVE.answerBodyMaxBytes} bytes, more than a live answer may carry; nothing of it was returned`, false, status);
  if (!whole.ended) return failed("unreachable", `${what} answered ${status} but the connection ended before the body did`, false, status);
  return { kind: "answered", status, headers: whole.headers, body: whole.body };
}

function fromApp(answer: AppAnswer, what: string): LiveResult {
  if (answer.kind === "not_sent") return failed("target_refused", answer.reason, true);
  if (answer.kind === "unreachable") return failed("unreachable", answer.detail, answer.refusedConnection);
  return wholeResult(answer.status, answer.whole, what);
}

export async function answerLiveRequest(frame: LiveRequestFrame, targets: LiveTargets, signal: AbortSignal): Promise<LiveResult> {
  const body = frame.encoding === "utf8" ? utf8(frame.body) : fromBase64(frame.body);
  if (body === null) return failed("bad_request", "the request's body is not valid base64", true);
  const headers = withoutConnectionHeaders(frame.headers);
  const timeoutMs = liveTimeoutMs(frame);
  if (frame.to === "app") {
    const source = frame.source ?? "";
    const check = checkForwardTarget(String(frame.target ?? ""), true, { stored: true });
    if (!check.ok) return failed("target_refused", `the source's target cannot be used (${check.problem}); set another: clawrelay sources set ${source} --forward URL`, true);
    const url = forwardUrl(check.url, frame.tail);
    if (url === null) return failed("bad_request", `its URL tail "${frame.tail.slice(0, 80)}" would leave the target's path or is not a path and query`, true);
    const request: AppRequest = { source, target: check.url, allowPublic: frame.allow_public === true, url, method: frame.method, headers, body, timeoutMs, keepBodyBytes: LIVE.answerBodyMaxBytes };
    return fromApp(await targets.postToApp(request, signal), `the app at ${check.url}`);
  }
  if (frame.to === "a2a") {
    if (!(A2A_PATHS as readonly string[]).includes(frame.tail)) return failed("bad_request", `"${frame.tail.slice(0, 80)}" is not one of the A2A channel's paths (${A2A_PATHS.join(", ")})`, true);
    const base = `http://127.0.0.1:${targets.gatewayPort()}`;
    const request: AppRequest = { source: "a2a", target: base, allowPublic: false, url: `${base}${frame.tail}`, method: frame.method, headers, body, timeoutMs, keepBodyBytes: LIVE.answerBodyMaxBytes };
    return fromApp(await targets.postToApp(request, signal), "the gateway's A2A channel");
  }
  if (frame.method !== "POST") return failed("bad_request", `the gateway's hooks take POST only, not ${frame.method}`, true);
  const target = targets.gatewayTarget();
  if ("problem" in target) return failed("gateway_unavailable", `no gateway to post to: ${target.problem}`, true);
  const subpath = frame.subpath ?? "";
  try {
    hookPath(target.hooksPath, subpath);
  } catch (err) {
    // The forwarder refuses a sub-path that is not canonical before any connection.
    return failed("bad_request", (err as Error).message, true);
  }
  const request: GatewayRequest = { subpath, contentType: frame.content_type ?? "application/json", body, ...(frame.hook_headers ? { headers: frame.hook_headers } : {}) };
  const answer = await targets.postToGateway(target, request, `clawrelay:${targets.agentId}:live:${frame.rid}`, { keepBodyBytes: LIVE.answerBodyMaxBytes, timeoutMs });
  if (answer.status === 0) return failed("unreachable", answer.detail, answer.refused === true);
  return wholeResult(answer.status, answer.whole, "the gateway");
}
