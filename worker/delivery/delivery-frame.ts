// Turns a stored message into the frame the local agent receives (WebSocket and polling alike), and
// into what the owner's message detail shows of it. A source event whose source forwards to a local app
// now — looked up as the frame is built, so a target set or cleared applies to events already waiting —
// carries `forward` (protocol/forward.ts) with the source's policy fields its owner set; every other frame
// is as it always was; one held after its live deadline carries the live request's `live_rid`. Used by
// socket-session.ts, inbox-routes.ts (polling) and queue-routes.ts; covered by
// test/worker/sources-forward.test.ts, test/worker/websocket-delivery.test.ts and test/worker/live-held.test.ts.
import { SOURCE_HEADERS, decodeUtf8, toBase64 } from "../../protocol/index.ts";
import type { DeliveryFrame, ForwardFrame, StoredRequest } from "../../protocol/index.ts";
import { sourceNameOf } from "../sources/source-config.ts";
import type { ForwardTarget } from "../sources/source-config.ts";
import type { StoredMessage } from "../storage/stored-message.ts";

/** Where source `name`'s events go now (source-book.ts): its target and policy, or null for the gateway. */
export type ForwardTargets = (name: string) => ForwardTarget | null;

const OURS: readonly string[] = Object.values(SOURCE_HEADERS);

/** The request a source event was stored with; for one stored before requests were kept, the one it stands for. */
function requestOf(message: Pick<StoredMessage, "request" | "content_type">, headers: Record<string, string> | null): StoredRequest {
  if (message.request) return JSON.parse(message.request) as StoredRequest;
  return { method: "POST", tail: "", headers: [["content-type", message.content_type], ...Object.entries(headers ?? {})] };
}

/**
 * The frame's `forward` for `message` (its filtered `headers` already parsed), or null when it goes to the
 * gateway (not a source event, no target, source removed).
 */
function forwardOf(message: Pick<StoredMessage, "sender" | "request" | "content_type">, headers: Record<string, string> | null, targets: ForwardTargets): ForwardFrame | null {
  const source = sourceNameOf(message.sender);
  const target = source === null ? null : targets(source);
  if (source === null || target === null) return null;
  const request = requestOf(message, headers);
  // The relay's own x-clawrelay-* headers follow the sender's; the kept request never holds any (forward.ts).
  const ours = message.request && headers ? Object.entries(headers).filter(([name]) => OURS.includes(name)) : [];
  // The policy's fields only where the owner set them: the agent applies FORWARD_POLICY to those absent.
  const policy = {
    ...(target.timeout_sec !== undefined ? { timeout_sec: target.timeout_sec } : {}),
    ...(target.retries !== undefined ? { retries: target.retries } : {}),
    ...(target.ordered !== undefined ? { ordered: target.ordered } : {}),
  };
  return { source, target: target.url, allow_public: target.allow_public, method: request.method, tail: request.tail, headers: [...request.headers, ...ours], ...policy };
}

export function deliveryFrame(message: StoredMessage, targets: ForwardTargets): DeliveryFrame {
  const bytes = new Uint8Array(message.body);
  const text = decodeUtf8(bytes);
  const headers = message.headers ? (JSON.parse(message.headers) as Record<string, string>) : null;
  const forward = forwardOf(message, headers, targets);
  // A request held after its live deadline: the agent settles it by the live request's outcome.
  const liveRid = message.request ? (JSON.parse(message.request) as StoredRequest).live_rid : undefined;
  return {
    type: "message",
    id: message.seq,
    kind: message.kind,
    subpath: message.subpath,
    content_type: message.content_type,
    body: text ?? toBase64(bytes),
    encoding: text === null ? "base64" : "utf8",
    received_at: message.received_at,
    expires_at: message.expires_at,
    ...(headers ? { headers } : {}),
    ...(forward ? { forward } : {}),
    ...(liveRid ? { live_rid: liveRid } : {}),
  };
}
