// Live requests: a request whose sender reads the answer (a slash command, a GET callback, an A2A call)
// goes down the agent's socket as a `request` frame while the agent is connected, and the app's answer
// comes back up as `answer` frames and is returned to the sender. When no agent that speaks `live` is
// connected, or the answer does not come in time, a request that carries an event (POST, PUT, PATCH,
// DELETE) is held — stored and delivered later like any event — and a GET or HEAD is refused at once.
// Shared by the relay (worker/live/) and the agent (local-agent/live/); pure. Covered by
// test/protocol/live.test.ts.
import { SENDABLE_HEADER_VALUE, lowerCasedHeaders } from "./forward.ts";
import { cutText } from "./text-cut.ts";

export const LIVE = {
  /** A live source's deadline when its owner gave none (sources add --live). */
  deadlineSec: 10,
  /** The longest any live request is waited for, A2A included (an awaited answer keeps the inbox's object billed). */
  deadlineSecMax: 300,
  /** The relay's A2A deadline is the gateway's replyTimeoutMs plus this, so the gateway's own answer (its working task) comes back first. */
  a2aMarginSec: 5,
  /** Live requests waiting for an answer at once, per inbox; beyond: 429 with Retry-After. */
  inFlightMax: 32,
  /** A live request's body at most (the A2A channel's own request limit). */
  requestBodyMaxBytes: 1024 * 1024,
  /**
   * An answer's body at most; a larger one reaches the sender as 502 answer_too_large. The relay holds each
   * waiting answer whole: with inFlightMax answers and their requests at their limits that is 64 MiB, half an
   * object's 128 MB. The A2A channel's own answers stop at 1 MiB too.
   */
  answerBodyMaxBytes: 1024 * 1024,
  /** An answer's body travels in frames of at most this many raw bytes (below the relay's 1 MiB client-frame limit once base64). */
  answerChunkBytes: 256 * 1024,
  /** An answer's headers at most (count and bytes), as for a forwarded request's. */
  answerHeadersMaxCount: 64,
  answerHeadersMaxBytes: 16 * 1024,
  /** A failure's message is cut to this many characters. */
  messageMax: 1000,
} as const;

/** Set on the relay's answer to a request that was held instead of answered live; the value is a HeldReason. */
export const HELD_HEADER = "x-clawrelay-held";

/**
 * Why a request was held (stored, delivered later) rather than answered live:
 * offline — no agent connected; agent_too_old — the connected agent does not speak live;
 * deadline — no answer within the source's deadline (the request may still reach the app: see live_rid);
 * unreachable — the agent could not reach the target (nothing answered it);
 * queued_ahead — earlier held requests of the source are still queued, and order is kept.
 */
export type HeldReason = "offline" | "agent_too_old" | "deadline" | "unreachable" | "queued_ahead";

/** Where a live request goes on the agent's side. */
export type LiveTarget =
  /** The source's forward target (a local app): `forward` says where. */
  | "app"
  /** The gateway's hooks, at `subpath`, as a delivery of the source's event would be posted. */
  | "gateway"
  /** The gateway's A2A channel: `tail` is "/a2a/v1" or an Agent Card path. */
  | "a2a";

export const LIVE_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;
export type LiveMethod = (typeof LIVE_METHODS)[number];

/** Relay → agent: answer this request. */
export interface LiveRequestFrame {
  type: "request";
  /** The relay's id for this request, unique in the inbox's life; the answer names it. */
  rid: string;
  to: LiveTarget;
  method: LiveMethod;
  /** to "app": the path and query after the source's URL ("" or "/cb?code=…"); to "a2a": the gateway path. */
  tail: string;
  /** The sender's headers, names lower-cased, hop-by-hop, proxy and relay headers left out (forward.ts keptRequestHeaders). */
  headers: [string, string][];
  body: string;
  encoding: "utf8" | "base64";
  /** How long the relay waits for the answer, from sending this frame. */
  deadline_ms: number;
  /** The source (to "app" and "gateway"). */
  source?: string;
  /** to "app": where and how (the same checks as a forwarded event's). */
  target?: string;
  allow_public?: boolean;
  /** to "gateway": the hook sub-path, content type and the source's headers of interest, as in a DeliveryFrame. */
  subpath?: string;
  content_type?: string;
  hook_headers?: Record<string, string>;
}

/** Why the agent could not answer; `held` says whether nothing reached the target (the relay may hold the request). */
export interface LiveFailure {
  code: "unreachable" | "target_refused" | "answer_too_large" | "bad_request" | "gateway_unavailable";
  message: string;
  /** True only when the target provably did not take the request (connection refused, address refused). */
  not_sent: boolean;
}

/**
 * Agent → relay: the answer, in one frame or several. The first frame has `status` and `headers` (or
 * `failed` and nothing else); every frame but the last has `more: true`; the body is the frames' bodies
 * in order.
 */
export interface LiveAnswerFrame {
  type: "answer";
  rid: string;
  status?: number;
  headers?: [string, string][];
  body?: string;
  encoding?: "utf8" | "base64";
  more?: true;
  failed?: LiveFailure;
}

/** Headers of an answer that belong to one connection, that the relay sets itself, or that would reach every inbox on the relay's origin. */
const ANSWER_DROPPED = new Set([
  "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade",
  "content-length", "content-encoding", "set-cookie", "set-cookie2", "alt-svc", "strict-transport-security", "public-key-pins",
]);

/** An answer's headers as the relay returns them: hop-by-hop ones (and those Connection names) and cookies left out. */
export function answerHeaders(entries: Iterable<[string, string]>): [string, string][] {
  const { all, connectionNamed } = lowerCasedHeaders(entries);
  return all.filter(([name, value]) => !ANSWER_DROPPED.has(name) && !connectionNamed.has(name) && SENDABLE_HEADER_VALUE.test(value));
}

const RID = /^[A-Za-z0-9_-]{8,64}$/;

function isHeaderList(value: unknown, maxCount: number): value is [string, string][] {
  return Array.isArray(value) && value.length <= maxCount && value.every((h) => Array.isArray(h) && h.length === 2 && typeof h[0] === "string" && typeof h[1] === "string");
}

/** Parses an answer frame's fields (already known to be an object of type "answer"); null when it is not one. */
export function parseAnswerFrame(frame: Record<string, unknown>): LiveAnswerFrame | null {
  if (typeof frame.rid !== "string" || !RID.test(frame.rid)) return null;
  const out: LiveAnswerFrame = { type: "answer", rid: frame.rid };
  if (frame.failed !== undefined) {
    const f = frame.failed as Record<string, unknown> | null;
    if (typeof f !== "object" || f === null || typeof f.code !== "string" || typeof f.message !== "string" || typeof f.not_sent !== "boolean") return null;
    const codes: LiveFailure["code"][] = ["unreachable", "target_refused", "answer_too_large", "bad_request", "gateway_unavailable"];
    if (!codes.includes(f.code as LiveFailure["code"])) return null;
    out.failed = { code: f.code as LiveFailure["code"], message: cutText(f.message, LIVE.messageMax), not_sent: f.not_sent };
    return out;
  }
  if (frame.status !== undefined) {
    if (typeof frame.status !== "number" || !Number.isInteger(frame.status) || frame.status < 100 || frame.status > 599) return null;
    out.status = frame.status;
  }
  if (frame.headers !== undefined) {
    if (!isHeaderList(frame.headers, LIVE.answerHeadersMaxCount)) return null;
    out.headers = frame.headers;
  }
  if (frame.body !== undefined) {
    if (typeof frame.body !== "string" || (frame.encoding !== "utf8" && frame.encoding !== "base64")) return null;
    out.body = frame.body;
    out.encoding = frame.encoding;
  }
  if (frame.more !== undefined) {
    if (frame.more !== true) return null;
    out.more = true;
  }
  return out;
}

/** Parses a request frame (agent side); null when it is not one. */
export function parseRequestFrame(frame: Record<string, unknown>): LiveRequestFrame | null {
  if (typeof frame.rid !== "string" || !RID.test(frame.rid)) return null;
  if (frame.to !== "app" && frame.to !== "gateway" && frame.to !== "a2a") return null;
  if (!LIVE_METHODS.includes(frame.method as LiveMethod)) return null;
  if (typeof frame.tail !== "string" || typeof frame.body !== "string" || (frame.encoding !== "utf8" && frame.encoding !== "base64")) return null;
  if (!isHeaderList(frame.headers, 256)) return null;
  if (typeof frame.deadline_ms !== "number" || !Number.isSafeInteger(frame.deadline_ms) || frame.deadline_ms <= 0) return null;
  return frame as unknown as LiveRequestFrame;
}

/** The header the relay sets on every live answer it returns: an app's page runs in an opaque origin (the relay's origin is shared by every inbox). */
export const ANSWER_CSP = "sandbox allow-scripts allow-forms allow-popups";

/** What became of a live request, as the relay's live log keeps it. */
export type LiveOutcome = "answered" | "late" | "failed" | "held";

/** One live request in the relay's log (GET /inbox/{id}/live): never its body, never its query. */
export interface LiveLogEntry {
  at_ms: number;
  /** The source's name; "a2a" for the A2A routes. */
  source: string;
  method: string;
  /** The path after the source's URL (or the A2A path) without its query: an OAuth query holds a one-time code. */
  path: string;
  /** The app's status (answered, late); null when none came. */
  status: number | null;
  duration_ms: number;
  outcome: LiveOutcome;
  /** Why it failed or was held (a LiveFailure code, deadline_passed, a HeldReason); null when answered. */
  code: string | null;
}

/** GET /inbox/{id}/live: the newest first. */
export interface LiveLogView {
  requests: LiveLogEntry[];
  in_flight: number;
}

/** The queue summary's `live` (QueueSummary.live): absent from an older relay. */
export interface LiveSummary {
  in_flight: number;
  /** Answered live requests among the last ones the log keeps. */
  answered: number;
  /** When the newest live request came (null when none). */
  last_at: number | null;
}
