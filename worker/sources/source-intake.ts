// Storing a verified source event: byte-exact, with its headers of interest and its request (method,
// URL tail, the sender's headers for a forward target, credentials sealed: kept-credentials.ts), under its source's sub-path, dropping the
// provider's own retries by its delivery id — or, where that id is an unsigned header (GitHub), by the
// body's digest: the intake steps' capacity check, record and store (intake/). Used by
// source-routes.ts; covered by test/worker/sources-events.test.ts,
// test/worker/sources-github.test.ts and test/worker/sources-forward.test.ts.
import { SOURCE_HEADERS, forwardableHeaders, toHex } from "../../protocol/index.ts";
import { assertCapacity, hasRoom } from "../intake/admit-step.ts";
import type { Answer, IntakeContext } from "../intake/intake-context.ts";
import { recordStep, storeStep } from "../intake/keep-step.ts";
import { storedBytes } from "../storage/inbox-store.ts";
import type { NewMessage } from "../storage/stored-message.ts";
import { sourceSender } from "./source-config.ts";
import type { StoredSource } from "./source-config.ts";
import type { VerifiedEvent } from "./source-kinds.ts";

/** Dedup records of source events outlive Stripe's retries (up to three days) with a day to spare. */
export const SOURCE_DEDUP_RETENTION_SEC = 4 * 24 * 3600;

export interface SourceArrival {
  source: StoredSource;
  event: VerifiedEvent;
  body: Uint8Array;
  contentType: string;
  /**
   * The request as stored (KeptCredentials.storedJson): kept whatever its target now, as the target is read
   * when the event is delivered — but with credentials only when the source had a target as it arrived.
   */
  request: string;
}

/** The headers of interest an event carries to the gateway (stored with it; a live request's hook_headers). */
export function eventHeaders(source: Pick<StoredSource, "name">, event: VerifiedEvent): Record<string, string> {
  return forwardableHeaders({
    ...event.headers,
    [SOURCE_HEADERS.source]: source.name,
    ...(event.eventType !== null ? { [SOURCE_HEADERS.event]: event.eventType } : {}),
    ...(event.deliveryId !== null ? { [SOURCE_HEADERS.delivery]: event.deliveryId } : {}),
  });
}

export async function acceptSourceEvent(ctx: Pick<IntakeContext, "config" | "store" | "nowMs" | "stored">, arrival: SourceArrival): Promise<Answer> {
  const { source, event, body } = arrival;
  const sender = sourceSender(source.name);
  const { request } = arrival;
  const bytes = storedBytes({ body, request });
  const id = event.deliveryId;
  const fingerprint = id !== null || event.dedupByBody ? toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", body))) : null;
  // The record's key: the provider's delivery id, or for a body-deduplicated kind the body's digest.
  const key = event.dedupByBody ? `sha256:${fingerprint}` : id;
  // A record written before GitHub events were deduplicated by body is keyed by the delivery id (and kept
  // SOURCE_DEDUP_RETENTION_SEC): GitHub's "Redeliver" of such an event is a repeat too.
  const legacy = () => (event.dedupByBody && id !== null ? ctx.store.findDuplicate(sender, id) : null);
  const repeat = (): Answer | null => {
    const previous = (key === null ? null : ctx.store.findDuplicate(sender, key)) ?? legacy();
    return previous ? { ...(JSON.parse(previous.answer) as Answer), duplicate: true } : null;
  };
  // A retry of an accepted event is answered as accepted even when the inbox has filled since.
  if (!hasRoom(ctx, 1, bytes)) {
    const answer = repeat();
    if (answer) return answer;
    assertCapacity(ctx, bytes);
  }
  const seq = ctx.store.queueStats().lastSeq + 1;
  const headers = eventHeaders(source, event);
  const expiresAtMs = ctx.nowMs + ctx.config.limits.hook_ttl_sec * 1000;
  const message: NewMessage = {
    kind: "hook",
    subpath: source.subpath,
    content_type: arrival.contentType,
    body,
    received_at: ctx.nowMs,
    expires_at: expiresAtMs,
    sender,
    msg_id: id,
    env_type: event.eventType,
    headers: JSON.stringify(headers),
    request,
  };
  const answer: Answer = { queued: true, id: seq };
  if (key !== null && fingerprint !== null) {
    if (legacy()) return repeat()!;
    const keeping = { sender, msgId: key, fingerprint, answer, recordUntilMs: ctx.nowMs + SOURCE_DEDUP_RETENTION_SEC * 1000, owedAckSeq: null, message };
    if (!recordStep(ctx.store, keeping, null)) return repeat()!;
  }
  storeStep(ctx.store, message);
  await ctx.stored(seq, expiresAtMs);
  return answer;
}
