// Webhook era: a hub that POSTs each message to the inbox as a flat body, "Alice (ag_x) says: hi", with
// no msg_id and no signature (Agentline 2.x; today's hub pushes nothing and the inbox pulls:
// ../hub-pull.ts). It posts *before* it commits the record (seen against its code at 9d900985): while
// the webhook is in flight the record is not in GET /hub/history. So the body is stored at once, as it
// came, with a claim (sender, a hash of its text, its session key); the alarm then reads the history,
// matches each claim to the record with the same sender, text and room (bridge-match.ts), verifies that
// original under the usual rules, records its msg_id (so the hub sending it again is a duplicate) and
// acknowledges it at /hub/receipt. Owned by the hub link (../hub-link.ts); covered by
// test/node/hub-link.e2e.test.ts (stand-in hub playing the real one's order) and
// test/worker/hub-bridge.test.ts.
import { HubCallError, REFUSED, RelayError, fetchHubHistory, hubClient, parseFlatHubBody, prefixOfSubpath, sha256Hex, utf8 } from "../../../protocol/index.ts";
import type { Envelope, HubRecord } from "../../../protocol/index.ts";
import { hubLinkOf, policyRefusal } from "../../inbox-config.ts";
import type { InboxConfig } from "../../inbox-config.ts";
import { planAck, sendAck } from "../../intake/ack-step.ts";
import { admitStep } from "../../intake/admit-step.ts";
import { isRepeat } from "../../intake/intake-context.ts";
import type { Answer, IntakeContext } from "../../intake/intake-context.ts";
import { acceptOpaqueHook, lifetimeOf } from "../../intake/intake.ts";
import type { HookArrival } from "../../intake/intake.ts";
import { keepStep } from "../../intake/keep-step.ts";
import { verifyStep } from "../../intake/verify-step.ts";
import type { InboxStore } from "../../storage/inbox-store.ts";
import type { BridgeClaim } from "../hub-settings.ts";
import type { HubTokenKeeper } from "../hub-token.ts";
import { claimFor, claimKey, envelopeOf, isOurs, nextLook, roomOf, textHash } from "./bridge-match.ts";

export interface BridgeTimings {
  /** The hub commits right after our 2xx: the first look is this much later. */
  firstLookMs: number;
  /** A record younger than this may still get its body (the hub retries failed pushes 1, 2, 4 … s). */
  graceMs: number;
}

export const BRIDGE_TIMINGS: BridgeTimings = { firstLookMs: 1500, graceMs: 30_000 };

/** What the bridge is built with (by the hub link). */
export interface BridgeParts {
  store: InboxStore;
  config: () => InboxConfig;
  token: HubTokenKeeper;
  intake: (nowMs: number) => IntakeContext;
  ensureAlarm: (atMs: number) => Promise<void>;
  timings: BridgeTimings;
}

/** A claim no record matched for this long is let go (its message was delivered, but never acked). */
const GIVE_UP_MS = 10 * 60_000;
const MAX_CLAIMS = 500;
const MAX_PAGES = 5;
/** How long a stored body is remembered, to notice the hub sending it again (it retries up to a TTL, 1 h by default). */
const RECENT_BODY_MS = 3600_000;
const MAX_RECENT_BODIES = 100;
/** A held copy is kept in the link's state: larger ones are stored (the hub's texts are chat messages). */
const MAX_HELD_BYTES = 64 * 1024;

/**
 * A history record whose flat body is stored already, through the intake steps: verified, held to the
 * hub's clock and the inbox's policy, recorded (not stored again, not counted against the sender's
 * rate: that would refuse nothing) and acknowledged at the hub.
 */
async function recordBridged(ctx: IntakeContext, envelope: Envelope, room: string | null): Promise<Answer> {
  const checked = await verifyStep(ctx, envelope, { room, clock: "hub", vouched: false });
  if (isRepeat(checked)) return checked.repeat;
  const admitted = admitStep(ctx, checked, { policy: !checked.hubMade, rate: false, bytes: null });
  if (isRepeat(admitted)) return admitted.repeat;
  const { ttlSec, expiresAtMs } = lifetimeOf(ctx, envelope);
  const plan = await planAck(ctx, checked, false);
  const kept = await keepStep(ctx, checked, admitted, null, ttlSec, plan);
  if (isRepeat(kept)) return kept.repeat;
  await sendAck(ctx, plan, { expiresAtMs, afterMs: 0 });
  return kept;
}

/** What one pass over the history settled. */
interface Pass {
  claims: BridgeClaim[];
  settledUpTo: string | null;
  open: boolean;
  acked: number;
  problems: string[];
}

export class HubBridge {
  private readonly parts: BridgeParts;

  constructor(parts: BridgeParts) {
    this.parts = parts;
  }

  /**
   * A flat message body from the linked hub: stored as it came (the gateway's mappings expect it) under
   * the sender it names, with a claim the alarm settles. Null when it is not one (not webhook mode, not a
   * hub sub-path, not a flat message body): the caller stores it as any other hook body.
   */
  async acceptFlatBody(hook: HookArrival, nowMs: number): Promise<Answer | null> {
    const { store } = this.parts;
    const config = this.parts.config();
    if (hubLinkOf(config).mode !== "webhook" || !prefixOfSubpath(hook.subpath)) return null;
    const flat = parseFlatHubBody(hook.body);
    if (!flat) return null;
    // The inbox's block- and allow-lists hold for the sender the hub names, before anything is stored.
    const refusal = policyRefusal(config.policy, flat.sender);
    if (refusal) throw refusal;
    const bodyHash = await sha256Hex(hook.body);
    const recent = store.loadHubState().recent_bodies.filter((b) => nowMs - b.at < RECENT_BODY_MS);
    // The same bytes again: the hub's resend after a lost 2xx, or a second identical message. Held until
    // the history tells them apart, so a resend does not run twice at the gateway.
    const hold = recent.some((b) => b.hash === bodyHash) && hook.body.byteLength <= MAX_HELD_BYTES;
    const answer: Answer = hold ? { queued: true, id: 0, held: true } : await acceptOpaqueHook(this.parts.intake(nowMs), hook, flat.sender);
    const claim: BridgeClaim = { seq: answer.id, sender: flat.sender, text_hash: await textHash(flat.text), session_key: flat.sessionKey, at: nowMs };
    if (hold) claim.held = { text: new TextDecoder().decode(hook.body), subpath: hook.subpath, content_type: hook.contentType };
    const due = nowMs + this.parts.timings.firstLookMs;
    store.updateHubState((state) => {
      state.claims = [...state.claims, claim].slice(-MAX_CLAIMS);
      state.recent_bodies = hold ? recent : [...recent, { hash: bodyHash, at: nowMs }].slice(-MAX_RECENT_BODIES);
      state.bridge_due_at = state.bridge_due_at === null ? due : Math.min(state.bridge_due_at, due);
    });
    await this.parts.ensureAlarm(due);
    return answer;
  }

  /** The hub probed one of its sub-paths: remember its prefix, so messages the relay formats use it too. */
  learnPrefix(subpath: string): void {
    const { store } = this.parts;
    const prefix = prefixOfSubpath(subpath);
    if (prefix && store.loadHubState().learned_prefix !== prefix) store.updateHubState((s) => (s.learned_prefix = prefix));
  }

  /** From the alarm: looks at the history when due; returns when it looks next (null: nothing waits). */
  async bridgeIfDue(nowMs: number): Promise<number | null> {
    const due = this.parts.store.loadHubState().bridge_due_at;
    if (due === null) return null;
    if (due <= nowMs) await this.run(nowMs);
    return this.parts.store.loadHubState().bridge_due_at;
  }

  /** A held copy turned out to be a message of its own: stored now, under the sender it names. */
  private async release(claim: BridgeClaim, nowMs: number): Promise<BridgeClaim> {
    const held = claim.held!;
    const answer = await acceptOpaqueHook(this.parts.intake(nowMs), { body: utf8(held.text), subpath: held.subpath, contentType: held.content_type }, claim.sender);
    return { ...claim, seq: answer.id };
  }

  /** Records the original (verified) and queues its ack; the stored body is named by its msg_id. */
  private async settle(envelope: Envelope, record: HubRecord, claim: BridgeClaim | undefined, nowMs: number): Promise<string | null> {
    try {
      await recordBridged(this.parts.intake(nowMs), envelope, roomOf(record));
      if (claim) this.parts.store.nameOrigin(claim.seq, envelope.from, envelope.msg_id);
      return null;
    } catch (err) {
      if (err instanceof RelayError) return `${envelope.msg_id}: ${err.code}: ${err.message}`;
      throw err;
    }
  }

  private readHistory(nowMs: number, cursor: string | null): Promise<HubRecord[]> {
    const hubUrl = this.parts.config().hub_url;
    return this.parts.token.withToken(nowMs, async (token) => {
      const all: HubRecord[] = [];
      let after = cursor;
      for (let page = 0; page < MAX_PAGES; page++) {
        const { messages, hasMore } = await fetchHubHistory(hubClient(hubUrl, { token }), after);
        all.push(...messages);
        if (!after || !hasMore || messages.length === 0) break;
        after = messages[messages.length - 1]!.hub_msg_id;
      }
      return all;
    });
  }

  /** Settles what it can of `records`, oldest first, into `pass`; the cursor stops at the first record still open. */
  private async settleRecords(records: HubRecord[], pass: Pass, nowMs: number): Promise<void> {
    const agentId = this.parts.config().agent_id;
    const { graceMs } = this.parts.timings;
    for (const record of records) {
      // A record the strict read refused (protocol/hub-page.ts) has no envelope to match: passed over, said.
      const refused = record[REFUSED];
      if (refused) pass.problems.push(`${record.hub_msg_id}: passed over, the hub's record is not JSON the relay accepts: ${refused.reason}`);
      const envelope = envelopeOf(record);
      if (envelope !== null && isOurs(envelope, record, agentId) && !this.parts.store.findDuplicate(envelope.from, envelope.msg_id)) {
        const age = nowMs - Date.parse(String(record.created_at ?? ""));
        const young = Number.isFinite(age) && age < graceMs;
        // Exact first (sender, text, room); once the grace is over, sender and room alone.
        const found = (await claimFor(pass.claims, envelope, record, true)) ?? (young ? undefined : await claimFor(pass.claims, envelope, record, false));
        const claim = found?.held ? await this.release(found, nowMs) : found;
        if (claim || (!young && record.state === "delivered")) {
          const problem = await this.settle(envelope, record, claim, nowMs);
          if (problem) pass.problems.push(problem);
          else pass.acked++;
          if (found) pass.claims = pass.claims.filter((c) => c !== found);
        } else if (young || record.state === "queued") {
          // Its body may still come (the hub retries), or has not been claimed yet.
          pass.open = true;
          continue;
        }
      }
      if (!pass.open) pass.settledUpTo = record.hub_msg_id;
    }
  }

  /**
   * Matches claims to history records, acknowledges records whose body the hub delivered but no claim
   * matched (stored as another body), moves the cursor past settled records.
   */
  async run(nowMs: number): Promise<void> {
    const { store, timings } = this.parts;
    const start = store.loadHubState();
    const pass: Pass = { claims: [...start.claims], settledUpTo: start.history_cursor, open: false, acked: 0, problems: [] };
    try {
      const records = await this.readHistory(nowMs, start.history_cursor);
      await this.settleRecords(records, pass, nowMs);
      // A held copy no record claimed within the grace was the hub sending a body again: dropped, said.
      const resent = pass.claims.filter((c) => c.held && nowMs - c.at >= timings.graceMs);
      if (resent.length > 0) pass.problems.push(`${resent.length} webhook bodies the hub sent again (byte-identical to ones already stored, and its history holds no second message) were not stored twice`);
      const expired = pass.claims.filter((c) => !c.held && nowMs - c.at >= GIVE_UP_MS);
      const claims = pass.claims.filter((c) => !resent.includes(c) && !expired.includes(c));
      if (expired.length > 0) pass.problems.push(`${expired.length} webhook bodies (ids ${expired.map((c) => c.seq).join(", ")}) matched no unacknowledged record in the hub's history within ${GIVE_UP_MS / 60_000} minutes (a body the hub sent twice, or a record it never listed): delivered here, not acknowledged at the hub`);
      const due = nextLook(claims, pass.open, nowMs);
      store.updateHubState((state) => {
        // Claims made while this ran stay; the ones settled or expired here go.
        const gone = new Set(start.claims.filter((c) => !claims.includes(c)).map(claimKey));
        state.claims = state.claims.filter((c) => !gone.has(claimKey(c)));
        state.history_cursor = pass.settledUpTo;
        state.bridge_due_at = state.claims.length > claims.length ? nowMs + timings.firstLookMs : due;
        state.last_bridge = { at: nowMs, ok: pass.problems.length === 0, status: 200, detail: pass.problems.join("; ").slice(0, 600), acked: pass.acked };
      });
    } catch (err) {
      const status = err instanceof HubCallError ? err.hubStatus : 0;
      store.updateHubState((state) => {
        // A cursor the hub no longer knows ("Invalid cursor"): start again from its newest records.
        if (status === 400 && state.history_cursor !== null) state.history_cursor = null;
        state.bridge_due_at = nowMs + 60_000;
        state.last_bridge = { at: nowMs, ok: false, status, detail: (err as Error).message.slice(0, 300), acked: pass.acked };
      });
    }
  }
}
