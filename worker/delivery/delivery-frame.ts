// Turns a stored message into the frame the local agent receives (WebSocket and polling alike), and
// into what the owner's message detail shows of it. A source event whose source forwards to a local app
// now — looked up as the frame is built, so a target set or cleared applies to events already waiting —
// carries `forward` (protocol/forward.ts) with the source's policy fields its owner set; every other frame
// is as it always was; one held after its live deadline carries the live request's `live_rid`. Only
// `forward` carries the sender's credentials, opened from their seal (sources/kept-credentials.ts): the
// WebSocket pump sends only frames whose request is open (framesReady), polling awaits it (openedFrame).
// Used by socket-session.ts, inbox-routes.ts (polling) and queue-routes.ts; covered by
// test/worker/sources-forward.test.ts, test/worker/kept-credentials.test.ts,
// test/worker/websocket-delivery.test.ts and test/worker/live-held.test.ts.
import { SOURCE_HEADERS, decodeUtf8, toBase64 } from "../../protocol/index.ts";
import type { DeliveryFrame, ForwardFrame, StoredRequest } from "../../protocol/index.ts";
import type { KeptCredentials } from "../sources/kept-credentials.ts";
import { sourceNameOf } from "../sources/source-config.ts";
import type { ForwardTarget } from "../sources/source-config.ts";
import { parseKeptRequest, shownRequest } from "../storage/kept-request.ts";
import type { StoredMessage } from "../storage/stored-message.ts";

/** Where source `name`'s events go now (source-book.ts): its target and policy, or null for the gateway. */
export type ForwardTargets = (name: string) => ForwardTarget | null;

/** What building frames needs of the inbox: where each source's events go now, and the kept credentials. */
export interface FrameSources {
  readonly forwardTargets: ForwardTargets;
  readonly keptCredentials: Pick<KeptCredentials, "requestNow" | "request">;
}

/** The stored request as the frame's `forward` carries it (credentials open), or null while they are being opened. */
type RequestReader = (json: string) => StoredRequest | null;

const OURS: readonly string[] = Object.values(SOURCE_HEADERS);

/** The request a source event was stored with; for one stored before requests were kept, the one it stands for. */
function requestOf(message: Pick<StoredMessage, "seq" | "request" | "content_type">, headers: Record<string, string> | null, read: RequestReader): StoredRequest {
  if (message.request) {
    const request = read(message.request);
    if (request === null) throw new Error(`message ${message.seq}'s frame was built before its kept credentials were opened (framesReady, openedFrame)`);
    return request;
  }
  return { method: "POST", tail: "", headers: [["content-type", message.content_type], ...Object.entries(headers ?? {})] };
}

/**
 * The frame's `forward` for `message` (its filtered `headers` already parsed), or null when it goes to the
 * gateway (not a source event, no target, source removed).
 */
function forwardOf(message: Pick<StoredMessage, "seq" | "sender" | "request" | "content_type">, headers: Record<string, string> | null, targets: ForwardTargets, read: RequestReader): ForwardFrame | null {
  const target = forwardTargetOf(message, targets);
  if (target === null) return null;
  const request = requestOf(message, headers, read);
  // The relay's own x-clawrelay-* headers follow the sender's; the kept request never holds any (forward.ts).
  const ours = message.request && headers ? Object.entries(headers).filter(([name]) => OURS.includes(name)) : [];
  // The policy's fields only where the owner set them: the agent applies FORWARD_POLICY to those absent.
  const policy = {
    ...(target.timeout_sec !== undefined ? { timeout_sec: target.timeout_sec } : {}),
    ...(target.retries !== undefined ? { retries: target.retries } : {}),
    ...(target.ordered !== undefined ? { ordered: target.ordered } : {}),
  };
  return { source: sourceNameOf(message.sender)!, target: target.url, allow_public: target.allow_public, method: request.method, tail: request.tail, headers: [...request.headers, ...ours], ...policy };
}

/** The target a source event goes to now; null for the gateway (not a source event, no target, source removed). */
function forwardTargetOf(message: Pick<StoredMessage, "sender">, targets: ForwardTargets): ForwardTarget | null {
  const source = sourceNameOf(message.sender);
  return source === null ? null : targets(source);
}

/**
 * Of `messages`, in the order they would be sent, those before the first whose frame cannot be built yet:
 * a forwarded event whose sealed credentials are being opened (the opening is started for every one; when
 * one is open the inbox pumps again). Never reorders: a later message waits behind an earlier one.
 */
export function framesReady(messages: readonly StoredMessage[], sources: FrameSources): StoredMessage[] {
  const waiting = messages.map((m) => m.request !== null && forwardTargetOf(m, sources.forwardTargets) !== null && sources.keptCredentials.requestNow(m.request) === null);
  const first = waiting.indexOf(true);
  return first === -1 ? [...messages] : messages.slice(0, first);
}

/** The frame of a message framesReady let through (the WebSocket pump). */
export function deliveryFrame(message: StoredMessage, sources: FrameSources): DeliveryFrame {
  return buildFrame(message, sources.forwardTargets, (json) => sources.keptCredentials.requestNow(json));
}

/** The frame of any message, its credentials opened first (polling). */
export async function openedFrame(message: StoredMessage, sources: FrameSources): Promise<DeliveryFrame> {
  const forwards = message.request !== null && forwardTargetOf(message, sources.forwardTargets) !== null;
  const opened = forwards ? await sources.keptCredentials.request(message.request!) : null;
  return buildFrame(message, sources.forwardTargets, () => opened);
}

/** The frame as the owner's message detail shows it: every credential in `forward` redacted, nothing opened. */
export function shownFrame(message: StoredMessage, targets: ForwardTargets): DeliveryFrame {
  return buildFrame(message, targets, (json) => shownRequest(parseKeptRequest(json)));
}

function buildFrame(message: StoredMessage, targets: ForwardTargets, read: RequestReader): DeliveryFrame {
  const bytes = new Uint8Array(message.body);
  const text = decodeUtf8(bytes);
  const headers = message.headers ? (JSON.parse(message.headers) as Record<string, string>) : null;
  const forward = forwardOf(message, headers, targets, read);
  // A request held after its live deadline: the agent settles it by the live request's outcome.
  const liveRid = message.request ? parseKeptRequest(message.request).live_rid : undefined;
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
