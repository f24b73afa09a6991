// Pull mode: today's hub pushes nothing, so the inbox takes what waits there. GET /hub/inbox?ack=false
// leases each record to us for 120 s; each is stored as the flat body a webhook-era hub would have
// posted (hub-flat.ts) — signed ones verified like any posted envelope (a2a/0.2 included), unsigned ones
// (a dashboard user's message, the hub's own) marked as vouched for by the hub — and only then confirmed
// with POST /hub/inbox/ack. Leases are renewed for what is not stored yet when storing runs long.
// Pulls come from the alarm (backing off while nothing arrives, hub-schedule.ts) and at once when the
// connected agent, which holds the hub's WebSocket, says there is mail. The schedule lives in memory:
// after an eviction the next alarm pulls at once. Owned by the hub link (hub-link.ts); covered by
// test/node/hub-link.e2e.test.ts and test/worker/hub-pull.test.ts.
import { HUB_SENDER, HubCallError, REFUSED, RelayError, ackHubInbox, hubClient, hubSubpaths, parseEnvelope, payloadHash, pulledRecordBody, pullHubInbox, readPulledRecord, renewHubLeases, utf8 } from "../../protocol/index.ts";
import type { Envelope, HubPrefix, HubRecord } from "../../protocol/index.ts";
import { deadTtlSec, hubLinkOf } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import { planAck, sendAck } from "../intake/ack-step.ts";
import { admitStep } from "../intake/admit-step.ts";
import { isRepeat } from "../intake/intake-context.ts";
import type { Answer, IntakeContext } from "../intake/intake-context.ts";
import { envelopeRow, lifetimeOf } from "../intake/intake.ts";
import { keepStep } from "../intake/keep-step.ts";
import { verifyStep } from "../intake/verify-step.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import { nextPullDelay } from "./hub-schedule.ts";
import type { HubTokenKeeper } from "./hub-token.ts";

/** What the puller is built with (by the hub link). */
export interface PullParts {
  store: InboxStore;
  config: () => InboxConfig;
  token: HubTokenKeeper;
  intake: (nowMs: number) => IntakeContext;
  ensureAlarm: (atMs: number) => Promise<void>;
  /** The sub-path prefix records are stored under (hub-settings.ts, effectivePrefix). */
  prefix: () => HubPrefix;
}

const MAX_PAGES = 5;
/** Renew the leases of what is not stored yet once storing has taken this long (they last 120 s). */
const RENEW_AFTER_MS = 60_000;
const RECENT_PULLED = 50;
/**
 * The signed ack follows the inbox ack: both set the record's state, and the hub takes whichever
 * transaction commits last, so a receipt racing the ack could leave the record "delivered", not "acked"
 * (seen against the hub's code). The ack is sent right after storing; this is ample for it.
 */
const RECEIPT_AFTER_ACK_MS = 3000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The record's envelope; unsigned ones (the hub's own, its dashboard users') are read for their shape only. */
async function pulledEnvelope(value: unknown): Promise<{ envelope: Envelope; unsigned: boolean }> {
  const raw = isObject(value) ? value : null;
  const sig = raw && isObject(raw.sig) ? raw.sig : null;
  if (!raw || (sig && typeof sig.value === "string" && sig.value !== "")) return { envelope: parseEnvelope(value), unsigned: false };
  // The hub leaves an unsigned record's payload_hash empty: computed here, so the record has its shape.
  const hash = typeof raw.payload_hash === "string" && raw.payload_hash.startsWith("sha256:") ? raw.payload_hash : isObject(raw.payload) ? await payloadHash(raw.payload) : "";
  const keyId = sig && typeof sig.key_id === "string" && sig.key_id !== "" ? sig.key_id : HUB_SENDER;
  return { envelope: parseEnvelope({ ...raw, payload_hash: hash, sig: { alg: "ed25519", key_id: keyId, value: "" } }), unsigned: true };
}

function mentionsOf(value: unknown): string[] | null {
  const mentions = isObject(value) ? value.mentions : null;
  return Array.isArray(mentions) ? mentions.filter((m): m is string => typeof m === "string") : null;
}

/** A record pulled from the hub, through the intake steps: held to the hub's clock, in the room it names. */
async function acceptPulledRecord(ctx: IntakeContext, envelope: Envelope, pulled: { room: string | null; vouched: boolean; flat: { body: Uint8Array; subpath: string } }): Promise<Answer> {
  const checked = await verifyStep(ctx, envelope, { room: pulled.room, clock: "hub", vouched: pulled.vouched });
  if (isRepeat(checked)) return checked.repeat;
  const { body, subpath } = pulled.flat;
  const admitted = admitStep(ctx, checked, { policy: !checked.hubMade, rate: !checked.hubMade, bytes: body.byteLength });
  if (isRepeat(admitted)) return admitted.repeat;
  const { ttlSec, expiresAtMs } = lifetimeOf(ctx, envelope);
  const plan = await planAck(ctx, checked, true);
  const row = envelopeRow(ctx.nowMs, envelope, body, { subpath, contentType: "application/json" }, expiresAtMs);
  const kept = await keepStep(ctx, checked, admitted, row, ttlSec, plan);
  if (isRepeat(kept)) return kept.repeat;
  await sendAck(ctx, plan, { expiresAtMs, afterMs: RECEIPT_AFTER_ACK_MS });
  return kept;
}

/**
 * One record: stored (true: confirm it), or left leased to come back (false: a passing failure — the
 * hub's key look-up, a full inbox, the rate limit). A record that fails the checks is stored dead with
 * the refusal as its reason and confirmed, so it neither vanishes nor returns every 132 s.
 */
async function storePulled(parts: PullParts, raw: HubRecord, nowMs: number): Promise<boolean> {
  const ctx = parts.intake(nowMs);
  const prefix = parts.prefix();
  let flat: { body: Uint8Array; subpath: string } | null = null;
  let envelope: Partial<Envelope> | null = isObject(raw.envelope) ? (raw.envelope as Partial<Envelope>) : null;
  // Refused by the strict read (protocol/hub-page.ts): its own text is what a person gets to read.
  const refused = raw[REFUSED];
  try {
    if (refused) throw new RelayError(400, "invalid_json", refused.reason);
    const record = readPulledRecord(raw)!;
    const pulled = await pulledEnvelope(raw.envelope);
    envelope = pulled.envelope;
    const { leaf, body } = pulledRecordBody(record, pulled.envelope, pulled.unsigned ? "hub" : "signature", mentionsOf(raw.envelope));
    flat = { body: utf8(JSON.stringify(body)), subpath: hubSubpaths(prefix)[leaf] };
    await acceptPulledRecord(ctx, pulled.envelope, { room: record.room_id, vouched: pulled.unsigned, flat });
    return true;
  } catch (err) {
    if (!(err instanceof RelayError) || err.status === 429 || err.status >= 500) return false;
    const keepUntil = nowMs + deadTtlSec(ctx.config) * 1000;
    parts.store.insertDead(
      {
        kind: "hook",
        subpath: flat?.subpath ?? hubSubpaths(prefix).agent,
        content_type: "application/json",
        // What would have been delivered, else the record itself: either way a person can read it.
        body: flat?.body ?? utf8(refused ? refused.text : JSON.stringify(raw)),
        received_at: nowMs,
        expires_at: keepUntil,
        sender: typeof envelope?.from === "string" ? envelope.from : null,
        msg_id: typeof envelope?.msg_id === "string" ? envelope.msg_id : null,
        env_type: typeof envelope?.type === "string" ? envelope.type : null,
      },
      { reason: `refused by the relay's checks when pulled from the hub (${raw.hub_msg_id}): ${err.code}: ${err.message}`, status: err.status, attempts: 0, nowMs, keepUntil },
    );
    await parts.ensureAlarm(keepUntil);
    return true;
  }
}

/** Pages of leased records, each stored then confirmed; the ids confirmed go into `confirmedIds` (some, when it fails midway). */
async function pullPages(parts: PullParts, nowMs: number, confirmedIds: string[]): Promise<void> {
  const hubUrl = parts.config().hub_url;
  await parts.token.withToken(nowMs, async (token) => {
    const hub = hubClient(hubUrl, { token });
    for (let page = 0; page < MAX_PAGES; page++) {
      const { messages, hasMore } = await pullHubInbox(hub);
      let leasedAt = Date.now();
      const confirmed: string[] = [];
      for (const [i, record] of messages.entries()) {
        if (Date.now() - leasedAt > RENEW_AFTER_MS) {
          await renewHubLeases(hub, messages.slice(i).map((m) => m.hub_msg_id));
          leasedAt = Date.now();
        }
        if (await storePulled(parts, record, nowMs)) confirmed.push(record.hub_msg_id);
      }
      // Stored first, confirmed after: if this dies in between, the leases run out and they come back.
      if (confirmed.length > 0) await ackHubInbox(hub, confirmed);
      confirmedIds.push(...confirmed);
      if (!hasMore || messages.length === 0 || confirmed.length === 0) break;
    }
  });
}

async function pullOnce(parts: PullParts, nowMs: number): Promise<number> {
  const { store } = parts;
  const confirmedIds: string[] = [];
  try {
    await pullPages(parts, nowMs, confirmedIds);
    // A quiet pull writes nothing: a row per pull would be the whole cost of an idle inbox.
    const previous = store.loadHubState().last_pull;
    if (confirmedIds.length > 0 || !previous?.ok) {
      store.updateHubState((state) => {
        state.last_pull = { at: nowMs, ok: true, status: 200, detail: "", count: confirmedIds.length };
        state.recent_pulled = [...state.recent_pulled, ...confirmedIds].slice(-RECENT_PULLED);
      });
    }
  } catch (err) {
    const status = err instanceof HubCallError ? err.hubStatus : 0;
    const detail = (err as Error).message.slice(0, 300);
    const previous = store.loadHubState().last_pull;
    // The same failure again is not written again (a hub down for a night would cost a row a pull).
    if (previous?.ok !== false || previous.detail !== detail || confirmedIds.length > 0) {
      store.updateHubState((state) => {
        state.last_pull = { at: nowMs, ok: false, status, detail, count: confirmedIds.length };
        state.recent_pulled = [...state.recent_pulled, ...confirmedIds].slice(-RECENT_PULLED);
      });
    }
  }
  return confirmedIds.length;
}

/** The inbox's pulling: one pull at a time, and when the alarm pulls next. */
export class HubPuller {
  private readonly parts: PullParts;
  private running: Promise<void> | null = null;
  /** Asked for again while running: one more pull follows. */
  private again = false;
  private nextAtMs: number | null = null;
  private delayMs: number | null = null;

  constructor(parts: PullParts) {
    this.parts = parts;
  }

  /** When the alarm pulls next (null: not known, e.g. after an eviction), and whether a pull runs now. */
  status(): { nextAtMs: number | null; pulling: boolean } {
    return { nextAtMs: this.nextAtMs, pulling: this.running !== null };
  }

  /**
   * Pulls now (a request while a pull runs makes one more follow it), then sets when the alarm pulls
   * next — and schedules it, unless the caller is the alarm, which sets itself once (each setAlarm is a
   * row written). Returns when done.
   */
  pullNow(options: { schedule: boolean }): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        let found = 0;
        do {
          this.again = false;
          found += await pullOnce(this.parts, Date.now());
        } while (this.again);
        const ceiling = hubLinkOf(this.parts.config()).pull_interval_sec * 1000;
        this.delayMs = nextPullDelay(this.delayMs, found, ceiling);
        this.nextAtMs = Date.now() + this.delayMs;
        if (options.schedule) await this.parts.ensureAlarm(this.nextAtMs);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** From the alarm: pulls when due (or when nothing is scheduled, as after an eviction); returns when next. */
  async pullIfDue(nowMs: number): Promise<number | null> {
    if (this.nextAtMs === null || this.nextAtMs <= nowMs) await this.pullNow({ schedule: false });
    return this.nextAtMs;
  }

  /** The next alarm pulls, whatever it runs for (as after an eviction); the wait it backs off from is kept. */
  pullAtNextAlarm(): void {
    this.nextAtMs = null;
  }

  /** The agent is back: the alarm looks at the hub at once. */
  async pullSoon(nowMs: number): Promise<void> {
    this.nextAtMs = nowMs;
    await this.parts.ensureAlarm(nowMs);
  }
}
