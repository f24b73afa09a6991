// A delivered frame as the delivery loop (delivery.ts) holds it: parsed once, with its conversation (its
// lane, as the relay named it; against an older relay, the agent's own conversationOf) and sender, the
// signal that it was abandoned, and what its lane shows meanwhile; the gateway request it becomes; the
// feed event each of its outcomes makes. Pure. Covered by test/node/delivery.e2e.test.ts,
// conversations.e2e.test.ts, delivery-abandon.test.ts and gateway-path.test.ts.
import { isCanonicalSubpath } from "../../protocol/index.ts";
import type { DeliveryFrame, Envelope, HubPrefix } from "../../protocol/index.ts";
import type { DeliveryEvent } from "../inspector/delivery-feed.ts";
import { conversationOf, senderOf } from "./conversation.ts";
import { frameEnvelope, gatewayRequestFor } from "./hub-format.ts";
import type { GatewayRequest } from "./hub-format.ts";

/** The gateway drops a second post of the same key within 5 minutes (gateway-forwarder.ts). */
export function idempotencyKeyFor(agentId: string, id: number): string {
  return `clawrelay:${agentId}:${id}`;
}

export interface Pending {
  frame: DeliveryFrame;
  /** Parsed once; null for a hook frame. */
  envelope: Envelope | null;
  /** Why an envelope frame could not be parsed (deliver() rejects it with this). */
  unreadable: string | null;
  /** Its lane: order is kept within it (conversation-line.ts). */
  conversation: string;
  /** Who it is from, for a person looking at deliveries (senderOf). */
  sender: string | null;
  /** Aborted when the relay takes it back (an `abandon` frame): no ack, no reject, no further attempt. */
  readonly abort: AbortController;
  /** While it waits to try again: when (ms). */
  nextTryAt: number | null;
  /** Its latest failure, as a person reads it. */
  lastError: string | null;
}

export function pendingFor(frame: DeliveryFrame): Pending {
  let envelope: Envelope | null = null;
  let unreadable: string | null = null;
  try {
    envelope = frameEnvelope(frame);
  } catch (err) {
    unreadable = (err as Error).message;
  }
  const own = conversationOf(frame, envelope);
  // The relay's lane is the same key for a gateway conversation (protocol/lanes.ts laneOf), so only a
  // frame from an older relay, which names none, is ordered by the agent's own.
  const conversation = typeof frame.lane === "string" && frame.lane !== "" ? frame.lane : own;
  return { frame, envelope, unreadable, conversation, sender: senderOf(frame, envelope, own), abort: new AbortController(), nextTryAt: null, lastError: null };
}

/** What to post for a pending message; throws when it cannot go (no request, or one that leaves hooks.path). */
export function postableRequest(pending: Pending, prefix: HubPrefix): GatewayRequest {
  const request = gatewayRequestFor(pending.frame, pending.envelope, prefix);
  if (!isCanonicalSubpath(request.subpath)) {
    throw new Error(`its sub-path "${request.subpath.slice(0, 80)}" is not canonical, so it could leave hooks.path; it was not posted`);
  }
  return request;
}

export type EventFields = Pick<DeliveryEvent, "outcome" | "subpath" | "status" | "attempts" | "detail" | "target" | "method">;

/** The headers a person sees with a finished message: the gateway's of interest, or the sender's for a forwarded event. */
function shownHeaders(frame: DeliveryFrame): Record<string, string> | null {
  if (!frame.forward) return frame.headers ?? null;
  const shown = new Map<string, string>();
  for (const [name, value] of Array.isArray(frame.forward.headers) ? frame.forward.headers : []) shown.set(name, shown.has(name) ? `${shown.get(name)}, ${value}` : value);
  return Object.fromEntries(shown);
}

export function deliveryEvent(pending: Pending, event: EventFields): DeliveryEvent {
  const { frame } = pending;
  const at = Date.now();
  const message = { content_type: frame.content_type, body: frame.body, encoding: frame.encoding, headers: shownHeaders(frame), kind: frame.kind };
  return { ...event, id: frame.id, sender: pending.sender, at, latency_ms: at - frame.received_at, message };
}
