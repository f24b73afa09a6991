// A webhook-era hub's flat bodies, matched to their signed originals after the fact. The hub posts
// "Alice (ag_x) says: hi" with no msg_id and no signature, and posts it *before* it commits the record
// (seen against its code at 9d900985): while the webhook is in flight the record is not in
// GET /hub/history. So the body is stored at once, as it came, with a claim (sender, a hash of its
// text, its session key); the alarm then reads the history, matches each claim to the record with the
// same sender, text and room (the session key names the room, in any namespace), verifies that
// original under the usual rules, records its msg_id (so the hub sending it again is a duplicate) and
// acknowledges it at /hub/receipt. Covered by test/node/hub-link.e2e.test.ts (stand-in hub playing the
// real one's order) and test/worker/hub-bridge.test.ts.
import { RelayError, messageBody, parseEnvelope, parseFlatHubBody, prefixOfSubpath, sessionKeyNamesRoom, sha256Hex, utf8 } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { hubLinkOf, policyRefusal } from "../inbox-config.ts";
import { acceptEnvelope, acceptOpaqueHook } from "../intake/intake.ts";
import type { Answer, Arrival, IntakeContext } from "../intake/intake.ts";
import type { BridgeClaim } from "./hub-link.ts";
import { HubCallError, fetchHubHistory } from "./hub-client.ts";
import type { HubRecord } from "./hub-client.ts";
import { REFUSED } from "./hub-page.ts";
import { withHubToken } from "./hub-token.ts";
import type { TokenHost } from "./hub-token.ts";

export interface HubHost extends TokenHost {
  intake(nowMs?: number): IntakeContext;
  ensureAlarm(at: number): Promise<void>;
}

/** The hub commits right after our 2xx: the first look is this much later. */
const FIRST_LOOK_MS = 1500;
/** A record younger than this may still get its body (the hub retries failed pushes 1, 2, 4 … s). */
const GRACE_MS = 30_000;
/** A claim no record matched for this long is let go (its message was delivered, but never acked). */
const GIVE_UP_MS = 10 * 60_000;
const MAX_CLAIMS = 500;
const MAX_PAGES = 5;
/** How long a stored body is remembered, to notice the hub sending it again (it retries up to a TTL, 1 h by default). */
const RECENT_BODY_MS = 3600_000;
const MAX_RECENT_BODIES = 100;
/** A held copy is kept in the link's state: larger ones are stored (the hub's texts are chat messages). */
const MAX_HELD_BYTES = 64 * 1024;

const textHash = (text: string) => sha256Hex(text);
/** Held claims share seq 0: a claim is told apart by when it came and what it says as well. */
const claimKey = (c: BridgeClaim) => `${c.seq}/${c.at}/${c.sender}/${c.text_hash}`;

/**
 * A flat message body from the linked hub: stored as it came (the gateway's mappings expect it) under
 * the sender it names, with a claim the alarm settles. Null when it is not one (not webhook mode, not a
 * hub sub-path, not a flat message body): the caller stores it as any other hook body.
 */
export async function acceptFlatHubHook(host: HubHost, arrival: Extract<Arrival, { via: "hook" }>, nowMs: number): Promise<Answer | null> {
  const config = host.requireConfig();
  if (hubLinkOf(config).mode !== "webhook" || !prefixOfSubpath(arrival.subpath)) return null;
  const flat = parseFlatHubBody(arrival.body);
  if (!flat) return null;
  // The inbox's block- and allow-lists hold for the sender the hub names, before anything is stored.
  const refusal = policyRefusal(config.policy, flat.sender);
  if (refusal) throw refusal;
  const bodyHash = await sha256Hex(arrival.body);
  const recent = host.store.loadHubState().recent_bodies.filter((b) => nowMs - b.at < RECENT_BODY_MS);
  // The same bytes again: the hub's resend after a lost 2xx, or a second identical message. Held until
  // the history tells them apart, so a resend does not run twice at the gateway.
  const hold = recent.some((b) => b.hash === bodyHash) && arrival.body.byteLength <= MAX_HELD_BYTES;
  const answer: Answer = hold ? { queued: true, id: 0, held: true } : await acceptOpaqueHook(host.intake(nowMs), arrival, flat.sender);
  const claim: BridgeClaim = { seq: answer.id, sender: flat.sender, text_hash: await textHash(flat.text), session_key: flat.sessionKey, at: nowMs };
  if (hold) claim.held = { text: new TextDecoder().decode(arrival.body), subpath: arrival.subpath, content_type: arrival.contentType };
  const due = nowMs + FIRST_LOOK_MS;
  host.store.updateHubState((state) => {
    state.claims = [...state.claims, claim].slice(-MAX_CLAIMS);
    state.recent_bodies = hold ? recent : [...recent, { hash: bodyHash, at: nowMs }].slice(-MAX_RECENT_BODIES);
    state.bridge_due_at = state.bridge_due_at === null ? due : Math.min(state.bridge_due_at, due);
  });
  await host.ensureAlarm(due);
  return answer;
}

/** A held copy turned out to be a message of its own: stored now, under the sender it names. */
async function release(host: HubHost, claim: BridgeClaim, nowMs: number): Promise<BridgeClaim> {
  const held = claim.held!;
  const answer = await acceptOpaqueHook(host.intake(nowMs), { via: "hook", body: utf8(held.text), subpath: held.subpath, contentType: held.content_type }, claim.sender);
  return { ...claim, seq: answer.id };
}

function envelopeOf(record: HubRecord): Envelope | null {
  try {
    return parseEnvelope(record.envelope);
  } catch {
    return null;
  }
}

/** A signed message some other agent sent this inbox (directly, or in a room it is in). */
function isOurs(envelope: Envelope, record: HubRecord, agentId: string): boolean {
  if (envelope.type !== "message" || envelope.from === agentId || envelope.sig.value === "") return false;
  return envelope.to === agentId || (typeof record.room_id === "string" && envelope.to === record.room_id);
}

async function claimFor(claims: BridgeClaim[], envelope: Envelope, record: HubRecord, exact: boolean): Promise<BridgeClaim | undefined> {
  const hash = exact ? await textHash(messageBody(envelope.payload)) : null;
  const room = typeof record.room_id === "string" ? record.room_id : null;
  const topic = typeof record.topic === "string" ? record.topic : null;
  for (const claim of claims) {
    if (claim.sender !== envelope.from || (hash !== null && claim.text_hash !== hash)) continue;
    // A held copy is released only by a record with its very text: sender and room are not enough.
    if (claim.held && !exact) continue;
    // A key that names a room must name this one; one that names none (another namespace) is no help.
    const names = sessionKeyNamesRoom(claim.session_key, room, topic);
    if (names === true || (names === null && exact)) return claim;
  }
  return undefined;
}

/** Records the original (verified) and queues its ack; the stored body is named by its msg_id. */
async function settle(host: HubHost, envelope: Envelope, record: HubRecord, claim: BridgeClaim | undefined, nowMs: number): Promise<string | null> {
  try {
    await acceptEnvelope(host.intake(nowMs), envelope, { via: "hub", alreadyDelivered: true, room: typeof record.room_id === "string" ? record.room_id : null });
    if (claim) host.store.nameOrigin(claim.seq, envelope.from, envelope.msg_id);
    return null;
  } catch (err) {
    if (err instanceof RelayError) return `${envelope.msg_id}: ${err.code}: ${err.message}`;
    throw err;
  }
}

async function readHistory(host: HubHost, nowMs: number, cursor: string | null): Promise<HubRecord[]> {
  const hubUrl = host.requireConfig().hub_url;
  return withHubToken(host, nowMs, async (token) => {
    const all: HubRecord[] = [];
    let after = cursor;
    for (let page = 0; page < MAX_PAGES; page++) {
      const { messages, hasMore } = await fetchHubHistory(hubUrl, token, after);
      all.push(...messages);
      if (!after || !hasMore || messages.length === 0) break;
      after = messages[messages.length - 1]!.hub_msg_id;
    }
    return all;
  });
}

/** When to look again: soon while a claim is young, then less often. */
function nextLook(claims: BridgeClaim[], open: boolean, nowMs: number): number | null {
  if (claims.length === 0) return open ? nowMs + 60_000 : null;
  const youngest = Math.max(...claims.map((c) => c.at));
  const age = nowMs - youngest;
  return nowMs + (age < 10_000 ? 2000 : age < 60_000 ? 10_000 : 60_000);
}

/**
 * From the alarm: matches claims to history records, acknowledges records whose body the hub delivered
 * but no claim matched (stored as another body), moves the cursor past settled records.
 */
export async function bridgeHistory(host: HubHost, nowMs: number): Promise<void> {
  const config = host.requireConfig();
  const start = host.store.loadHubState();
  let acked = 0;
  const problems: string[] = [];
  try {
    const records = await readHistory(host, nowMs, start.history_cursor);
    let claims = [...start.claims];
    let settledUpTo = start.history_cursor;
    let open = false;
    for (const record of records) {
      // A record the strict read refused (hub-page.ts) has no envelope to match: passed over, said.
      const refused = record[REFUSED];
      if (refused) problems.push(`${record.hub_msg_id}: passed over, the hub's record is not JSON the relay accepts: ${refused.reason}`);
      const envelope = envelopeOf(record);
      const ours = envelope !== null && isOurs(envelope, record, config.agent_id) && !host.store.findDuplicate(envelope.from, envelope.msg_id);
      if (ours) {
        const age = nowMs - Date.parse(String(record.created_at ?? ""));
        const young = Number.isFinite(age) && age < GRACE_MS;
        // Exact first (sender, text, room); once the grace is over, sender and room alone.
        const found = (await claimFor(claims, envelope, record, true)) ?? (young ? undefined : await claimFor(claims, envelope, record, false));
        const claim = found?.held ? await release(host, found, nowMs) : found;
        if (claim || (!young && record.state === "delivered")) {
          const problem = await settle(host, envelope, record, claim, nowMs);
          if (problem) problems.push(problem);
          else acked++;
          if (found) claims = claims.filter((c) => c !== found);
        } else if (young || record.state === "queued") {
          // Its body may still come (the hub retries), or has not been claimed yet.
          open = true;
          continue;
        }
      }
      if (!open) settledUpTo = record.hub_msg_id;
    }
    // A held copy no record claimed within the grace was the hub sending a body again: dropped, said.
    const resent = claims.filter((c) => c.held && nowMs - c.at >= GRACE_MS);
    if (resent.length > 0) problems.push(`${resent.length} webhook bodies the hub sent again (byte-identical to ones already stored, and its history holds no second message) were not stored twice`);
    const expired = claims.filter((c) => !c.held && nowMs - c.at >= GIVE_UP_MS);
    claims = claims.filter((c) => !resent.includes(c) && !expired.includes(c));
    if (expired.length > 0) problems.push(`${expired.length} webhook bodies (ids ${expired.map((c) => c.seq).join(", ")}) matched no unacknowledged record in the hub's history within ${GIVE_UP_MS / 60_000} minutes (a body the hub sent twice, or a record it never listed): delivered here, not acknowledged at the hub`);
    const due = nextLook(claims, open, nowMs);
    host.store.updateHubState((state) => {
      // Claims made while this ran stay; the ones settled or expired here go.
      const gone = new Set(start.claims.filter((c) => !claims.includes(c)).map(claimKey));
      state.claims = state.claims.filter((c) => !gone.has(claimKey(c)));
      state.history_cursor = settledUpTo;
      state.bridge_due_at = state.claims.length > claims.length ? nowMs + FIRST_LOOK_MS : due;
      state.last_bridge = { at: nowMs, ok: problems.length === 0, status: 200, detail: problems.join("; ").slice(0, 600), acked };
    });
  } catch (err) {
    const status = err instanceof HubCallError ? err.status : 0;
    host.store.updateHubState((state) => {
      // A cursor the hub no longer knows ("Invalid cursor"): start again from its newest records.
      if (status === 400 && state.history_cursor !== null) state.history_cursor = null;
      state.bridge_due_at = nowMs + 60_000;
      state.last_bridge = { at: nowMs, ok: false, status, detail: (err as Error).message.slice(0, 300), acked };
    });
  }
}

/** The hub probed one of its sub-paths: remember its prefix, so messages the relay formats use it too. */
export function learnPrefix(host: Pick<HubHost, "store">, subpath: string): void {
  const prefix = prefixOfSubpath(subpath);
  if (prefix && host.store.loadHubState().learned_prefix !== prefix) host.store.updateHubState((s) => (s.learned_prefix = prefix));
}
