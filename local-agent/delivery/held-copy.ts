// A held copy of a live request (DeliveryFrame.live_rid): the relay stored the request when its answer did
// not come in time, but the agent may have sent it to its target all the same. Before such a frame is
// posted, the delivery loop (delivery.ts) asks what became of that live request (the live part remembers
// the last ones: ../live/live-outcomes.ts): the target took it (2xx) → acknowledged, not posted again; it
// refused it (a 4xx but 408 and 429) → to the dead shelf with the target's status and words; anything else
// (408, 429, 5xx, unreachable, a request the agent does not know, as after a restart) → posted as any
// event. The small interface keeps delivery/ free of the live part. Covered by test/node/held-copy.test.ts
// and live-app.e2e.test.ts.
import type { Rejection } from "./delivery-status.ts";
import type { EventFields, Pending } from "./pending-message.ts";

/** What the target answered a live request, as the live part remembers it. */
export type HeldVerdict =
  | { action: "ack"; status: number }
  | { action: "reject"; status: number; reason: string }
  | { action: "post" };

export interface HeldCopies {
  /** Waits for live request `rid` to finish when it is still under way; "post" when it is not known. `messageId`: the held copy's, for the reason. */
  verdict(rid: string, messageId: number): Promise<HeldVerdict>;
}

/** How the loop finishes a message: acknowledged (rejection null) or to the dead shelf; the feed's event. */
export interface HeldCopyHost {
  /** The loop stops, or the relay abandoned the message meanwhile. */
  gone(): boolean;
  finished(rejection: Rejection | null, subpath: string): void;
  emit(event: EventFields): void;
}

/**
 * Settles a held copy by its live request's outcome; false when it is to be posted as usual (not a held
 * copy, no live part, or the verdict says post). True also when it was abandoned while waiting: then
 * nothing is done for it, as for any abandoned message.
 */
export async function settledByLive(pending: Pending, copies: HeldCopies | undefined, host: HeldCopyHost): Promise<boolean> {
  const { frame } = pending;
  if (frame.live_rid === undefined || copies === undefined) return false;
  const verdict = await copies.verdict(frame.live_rid, frame.id);
  if (host.gone()) return true;
  if (verdict.action === "post") return false;
  const subpath = frame.forward ? (frame.forward.tail !== "" ? frame.forward.tail : frame.forward.source) : (frame.subpath ?? "");
  const where = frame.forward ? { target: frame.forward.target, method: frame.forward.method } : {};
  if (verdict.action === "ack") {
    host.finished(null, subpath);
    host.emit({ outcome: "delivered", subpath, status: verdict.status, attempts: 0, detail: "answered live before: not posted again", ...where });
    return true;
  }
  host.finished({ reason: verdict.reason, status: verdict.status, attempts: 0 }, subpath);
  host.emit({ outcome: "rejected", subpath, status: verdict.status, attempts: 0, detail: verdict.reason, ...where });
  return true;
}
