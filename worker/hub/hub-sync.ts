// The inbox's side of its hub link (hub-link.ts), run from webhook intake and the alarm:
// - a JWT of its own, refreshed with the receipt key (an active key of the agent at the hub);
// - the bridge: a flat 2.x webhook body ("Alice (ag_x) says: hi") carries no msg_id and no signature,
//   so the inbox reads the signed originals from GET /hub/history, matches the body to its record,
//   verifies it under the usual rules, deduplicates by msg_id (a body the hub re-sent is dropped)
//   and acknowledges it at /hub/receipt; records no body matched are acknowledged from the alarm;
// - pull mode: GET /hub/inbox?ack=false, store each record as if it had been posted, then confirm
//   with POST /hub/inbox/ack — nothing is confirmed before it is stored.
// Covered by test/node/hub-link.e2e.test.ts against a stand-in hub.
import { HubCallError, ackHubInbox, fetchHubHistory, pullHubInbox, refreshHubToken } from "./hub-client.ts";
import type { HubRecord } from "./hub-client.ts";
import { RelayError, fromBase64, parseEnvelope, prefixOfSubpath, randomBytes, toBase64, utf8 } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { deadTtlSec, hubLinkOf } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { HubState } from "./hub-link.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import { acceptEnvelope } from "../intake/intake.ts";
import type { Answer, Arrival, IntakeContext } from "../intake/intake.ts";
import type { Signer } from "../intake/receipts.ts";

export interface HubHost {
  /** The agent's hub JWT, in memory only (a secret; refreshed after an eviction with the receipt key). */
  hubToken: { value: string; expires_at: number } | null;
  readonly store: InboxStore;
  requireConfig(): InboxConfig;
  signer(): Promise<Signer>;
  intake(nowMs?: number): IntakeContext;
  ensureAlarm(at: number): Promise<void>;
}

const TOKEN_MARGIN_MS = 60_000;
const MAX_PAGES = 5;
/** A history record no flat body claimed within this long is acknowledged from the alarm. */
const UNMATCHED_GRACE_MS = 30_000;

function update(host: HubHost, change: (state: HubState) => void): HubState {
  const state = host.store.loadHubState();
  change(state);
  host.store.saveHubState(state);
  return state;
}

/** A JWT for the agent: cached, refreshed a minute before it expires (POST …/token/refresh). */
export async function hubToken(host: HubHost, nowMs: number): Promise<string> {
  const cached = host.hubToken;
  if (cached && cached.expires_at - TOKEN_MARGIN_MS > nowMs) return cached.value;
  const config = host.requireConfig();
  const nonce = toBase64(randomBytes(32));
  const sig = toBase64(await (await host.signer())(fromBase64(nonce)!));
  const fresh = await refreshHubToken(config.hub_url, config.agent_id, config.receipt_key.key_id, nonce, sig);
  host.hubToken = { value: fresh.token, expires_at: fresh.expiresAt };
  return fresh.token;
}

function payloadText(envelope: Envelope): string {
  const text = envelope.payload.text;
  return typeof text === "string" ? text : JSON.stringify(envelope.payload);
}

/** Does the hub's flat body stand for this envelope? Same sender (sessionKey) and the same text. */
function flatMatches(flat: { sender: string; message: string }, envelope: Envelope): boolean {
  return envelope.type === "message" && envelope.from === flat.sender && flat.message.endsWith(` says: ${payloadText(envelope)}`);
}

/** The sender and text of a flat /agent body, or null when it is not one. */
export function flatBody(bytes: Uint8Array): { sender: string; message: string } | null {
  try {
    const body = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
    const sender = typeof body.sessionKey === "string" ? /^agentline:(ag_[0-9a-f]{12})$/.exec(body.sessionKey)?.[1] : undefined;
    return sender && typeof body.message === "string" ? { sender, message: body.message } : null;
  } catch {
    return null;
  }
}

function envelopeOf(record: HubRecord): Envelope | null {
  try {
    return parseEnvelope(record.envelope);
  } catch {
    return null;
  }
}

/**
 * The signed original of a flat body: the oldest matching history record not yet bridged, or — when
 * every match is bridged — the newest, so that intake answers it as the duplicate it is. Null when the
 * history holds no match (yet).
 */
export async function findOriginal(host: HubHost, flat: { sender: string; message: string }, nowMs: number): Promise<Envelope | null> {
  const config = host.requireConfig();
  const token = await hubToken(host, nowMs);
  let after = host.store.loadHubState().history_cursor;
  let lastMatch: Envelope | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const { messages, hasMore } = await fetchHubHistory(config.hub_url, token, after);
    for (const record of messages) {
      const envelope = envelopeOf(record);
      if (!envelope || envelope.to !== config.agent_id || !flatMatches(flat, envelope)) continue;
      if (!host.store.findDuplicate(envelope.from, envelope.msg_id)) return envelope;
      lastMatch = envelope;
    }
    if (!hasMore || messages.length === 0) break;
    after = messages[messages.length - 1]!.hub_msg_id;
  }
  return lastMatch;
}

/**
 * From the alarm: acknowledges history records addressed here that no flat body claimed (verified
 * first, and deduplicated, so a late flat body is dropped), and moves the cursor past settled records.
 */
export async function bridgeHistory(host: HubHost, nowMs: number): Promise<void> {
  const config = host.requireConfig();
  let acked = 0;
  try {
    const token = await hubToken(host, nowMs);
    let after = host.store.loadHubState().history_cursor;
    let settledUpTo = after;
    let open = false;
    /** When the youngest unclaimed record's grace ends: the next run is scheduled for then. */
    let dueAt: number | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const { messages, hasMore } = await fetchHubHistory(config.hub_url, token, after);
      for (const record of messages) {
        const envelope = envelopeOf(record);
        const ours = envelope && envelope.to === config.agent_id && envelope.type === "message" && envelope.from !== "hub";
        if (ours && !host.store.findDuplicate(envelope.from, envelope.msg_id)) {
          const created = Date.parse(String((record as { created_at?: unknown }).created_at ?? ""));
          if (Number.isFinite(created) && nowMs - created < UNMATCHED_GRACE_MS) {
            open = true;
            const ends = created + UNMATCHED_GRACE_MS + 1000;
            dueAt = dueAt === null ? ends : Math.min(dueAt, ends);
            continue;
          }
          if (await acknowledgeUnmatched(host, envelope, nowMs)) acked++;
        }
        if (!open) settledUpTo = record.hub_msg_id;
      }
      if (!hasMore || messages.length === 0) break;
      after = messages[messages.length - 1]!.hub_msg_id;
    }
    update(host, (state) => {
      state.history_cursor = settledUpTo;
      state.bridge_due_at = open ? (dueAt ?? nowMs + UNMATCHED_GRACE_MS) : null;
      state.last_bridge = { at: nowMs, ok: true, status: 200, detail: open ? "some records wait for their webhook body" : "", acked };
    });
  } catch (err) {
    const status = err instanceof HubCallError ? err.status : 0;
    update(host, (state) => {
      state.bridge_due_at = nowMs + 60_000;
      state.last_bridge = { at: nowMs, ok: false, status, detail: (err as Error).message.slice(0, 300), acked };
    });
  }
}

/** Verifies a record whose flat body was delivered unbridged, then records it and queues its ack. */
async function acknowledgeUnmatched(host: HubHost, envelope: Envelope, nowMs: number): Promise<boolean> {
  try {
    await acceptEnvelope(host.intake(nowMs), envelope, { via: "hub", alreadyDelivered: true });
    return true;
  } catch {
    return false;
  }
}

/** After a failed hub call, webhook bodies are stored as they come (the alarm bridges) for this long. */
const BRIDGE_BACKOFF_MS = 60_000;

/**
 * A flat body the linked hub posted: stored under its signed original's sender and msg_id (verified,
 * deduplicated, acknowledged at the hub), or null to store it as it is — not a linked hub's /agent
 * body, no matching record yet, or the hub unreachable; the alarm's bridge then acknowledges it.
 */
export async function acceptFlatHubHook(host: HubHost, arrival: Extract<Arrival, { via: "hook" }>, nowMs: number): Promise<Answer | null> {
  const config = host.requireConfig();
  if (hubLinkOf(config).mode !== "webhook" || !prefixOfSubpath(arrival.subpath)) return null;
  const flat = flatBody(arrival.body);
  if (!flat) return null;
  const state = host.store.loadHubState();
  let original: Envelope | null = null;
  if (!(state.last_bridge && !state.last_bridge.ok && nowMs - state.last_bridge.at < BRIDGE_BACKOFF_MS)) {
    try {
      original = await findOriginal(host, flat, nowMs);
    } catch (err) {
      const status = err instanceof HubCallError ? err.status : 0;
      update(host, (s) => (s.last_bridge = { at: nowMs, ok: false, status, detail: (err as Error).message.slice(0, 300), acked: 0 }));
    }
  }
  // Either way the alarm comes by: it acknowledges what no body claimed and moves the history cursor
  // past what is settled, so the next body's look-up starts there (coalesced: one run per 30 s).
  await scheduleBridge(host, nowMs + UNMATCHED_GRACE_MS);
  if (!original) return null;
  return acceptEnvelope(host.intake(nowMs), original, { ...arrival, fromHubHistory: true });
}

async function scheduleBridge(host: HubHost, at: number): Promise<void> {
  const state = host.store.loadHubState();
  if (state.bridge_due_at !== null && state.bridge_due_at <= at) return;
  update(host, (s) => (s.bridge_due_at = at));
  await host.ensureAlarm(at);
}

/** The hub probed one of its sub-paths: remember its prefix, so messages the relay formats use it too. */
export function learnPrefix(host: HubHost, subpath: string): void {
  const prefix = prefixOfSubpath(subpath);
  if (prefix && host.store.loadHubState().learned_prefix !== prefix) update(host, (s) => (s.learned_prefix = prefix));
}

/** Pull mode: takes what waits at the hub, stores it, then confirms it there. Returns when to pull next. */
export async function pullFromHub(host: HubHost, nowMs: number): Promise<number> {
  const config = host.requireConfig();
  const interval = hubLinkOf(config).pull_interval_sec * 1000;
  let count = 0;
  try {
    const token = await hubToken(host, nowMs);
    for (let page = 0; page < MAX_PAGES; page++) {
      const { messages, hasMore } = await pullHubInbox(config.hub_url, token);
      const confirmed: string[] = [];
      for (const record of messages) {
        if (await storePulled(host, record, nowMs)) confirmed.push(record.hub_msg_id);
      }
      if (confirmed.length > 0) await ackHubInbox(config.hub_url, token, confirmed);
      count += confirmed.length;
      if (!hasMore || messages.length === 0) break;
    }
    // A quiet pull writes nothing: 5,760 pulls a day must not cost 5,760 row writes.
    const previous = host.store.loadHubState().last_pull;
    if (count > 0 || !previous?.ok) update(host, (state) => (state.last_pull = { at: nowMs, ok: true, status: 200, detail: "", count }));
  } catch (err) {
    const status = err instanceof HubCallError ? err.status : 0;
    const detail = (err as Error).message.slice(0, 300);
    const previous = host.store.loadHubState().last_pull;
    if (previous?.ok !== false || previous.detail !== detail) update(host, (state) => (state.last_pull = { at: nowMs, ok: false, status, detail, count }));
  }
  return nowMs + interval;
}

/**
 * One pulled record: stored as if posted (verify, dedup, policy). A record that fails the checks is
 * stored dead with the refusal as its reason and confirmed, so it neither vanishes nor comes back every
 * 120 s; a rate-limited one is left at the hub for the next pull. True when it may be confirmed.
 */
async function storePulled(host: HubHost, record: HubRecord, nowMs: number): Promise<boolean> {
  const ctx = host.intake(nowMs);
  try {
    await acceptEnvelope(ctx, parseEnvelope(record.envelope), { via: "hub" });
    return true;
  } catch (err) {
    if (!(err instanceof RelayError) || err.status === 429 || err.status >= 500) return false;
    const body = utf8(JSON.stringify(record.envelope ?? null));
    const envelope = record.envelope as Partial<Envelope> | null;
    host.store.insertDead(
      {
        kind: "envelope", subpath: null, content_type: "application/json", body, received_at: nowMs, expires_at: nowMs,
        sender: typeof envelope?.from === "string" ? envelope.from : null,
        msg_id: typeof envelope?.msg_id === "string" ? envelope.msg_id : null,
        env_type: typeof envelope?.type === "string" ? envelope.type : null,
      },
      { reason: `refused by the relay's checks when pulled from the hub: ${err.code}: ${err.message}`, status: err.status, attempts: 0, nowMs, keepUntil: nowMs + deadTtlSec(ctx.config) * 1000 },
    );
    await host.ensureAlarm(nowMs + deadTtlSec(ctx.config) * 1000);
    return true;
  }
}
