// Intake's first step: is this envelope for this inbox, and is it what its sender signed? Checks 2–7
// of docs/protocol.md "The checks, in order" (recipient, timestamp window, payload hash, key, owner,
// signature) through protocol/verify-envelope.ts. The very same signed envelope again is answered as
// the first time even when a check now fails (its timestamp left the window): the dedup record is
// read only then, so a new message costs no look-up. Used by the intake flows (intake.ts,
// hub/hub-pull.ts, hub/webhook-era/hub-bridge.ts); covered by test/worker/envelopes.test.ts.
import { HUB_SENDER, RelayError, TIMESTAMP_WINDOW_SEC, payloadHash, sha256Hex, signingInput, utf8, verifyEnvelope } from "../../protocol/index.ts";
import type { Envelope, KeyRecord } from "../../protocol/index.ts";
import type { IntakeContext, Repeat } from "./intake-context.ts";
import type { ResolvedKey } from "./key-resolver.ts";
import { repeatOf } from "./answers.ts";

/** What the verify step established about an envelope; the later steps work from it. */
export interface Checked {
  envelope: Envelope;
  /** The nine signed fields and the signature, hashed: one exact signed envelope. */
  fingerprint: string;
  /** Says it is from the hub (`from: "hub"`): unsigned, exempt from the sender's policy and rate. */
  hubMade: boolean;
  /** A signature was verified (false: hub-made, or vouched for by the hub): only then is an ack signed. */
  signed: boolean;
  /** Where the sender's key was found: "relay" (an inbox here) means the ack can go to its inbox. */
  keySource: ResolvedKey["source"];
}

export interface VerifyRules {
  /** The room the hub delivered it in: a room message is addressed to the room, not to the inbox. */
  room: string | null;
  /**
   * Whose clock the timestamp is held to: the relay's for what arrives now; the hub's for a record it
   * kept (pulled or read from its history), which may have waited there for hours — the hub checked
   * its window when it was sent.
   */
  clock: "relay" | "hub";
  /** Unsigned, and taken on the inbox's own hub's word (a dashboard user's message): nothing to verify. */
  vouched: boolean;
  /** The payload's hash when intake has it already: a posted payload in JCS form, hashed from its bytes (request-body.ts). */
  payloadHash?: string | null;
}

/** Identifies one exact signed envelope: its nine signed fields (`input`, if already built) and its signature. */
export function envelopeFingerprint(envelope: Envelope, input = signingInput(envelope)): Promise<string> {
  const sig = utf8(envelope.sig.value);
  const joined = new Uint8Array(input.length + 1 + sig.length);
  joined.set(input);
  joined.set(sig, input.length + 1);
  return sha256Hex(joined);
}

/**
 * Only an envelope that says it is from the hub may be unsigned, and only through the token-authenticated
 * webhook or from the inbox's own hub: an empty signature from anyone else is verified like any other
 * (and fails), so it passes the block-list, the timestamp window and dedup like any other.
 */
export function isHubMade(envelope: Envelope): boolean {
  return envelope.from === HUB_SENDER;
}

export async function verifyStep(ctx: IntakeContext, envelope: Envelope, rules: VerifyRules): Promise<Checked | Repeat> {
  const { config } = ctx;
  const hubMade = isHubMade(envelope);
  const { room } = rules;
  if (envelope.to !== config.agent_id && !(room && envelope.to === room)) {
    throw new RelayError(400, "wrong_recipient", `envelope is addressed to ${envelope.to}, but this is the inbox of ${config.agent_id}`);
  }
  const nowSec = Math.floor(ctx.nowMs / 1000);
  const windowSec = rules.clock === "hub" ? envelope.ts : nowSec;
  if (hubMade && Math.abs(windowSec - envelope.ts) > TIMESTAMP_WINDOW_SEC) {
    throw new RelayError(400, "timestamp_out_of_range", `hub envelope ts ${envelope.ts} is more than ${TIMESTAMP_WINDOW_SEC}s from the relay's clock (${nowSec})`);
  }
  // Built once: the fingerprint and the signature check both need the nine-field signing input.
  const input = signingInput(envelope);
  const fingerprint = await envelopeFingerprint(envelope, input);
  if (hubMade || rules.vouched) return { envelope, fingerprint, hubMade, signed: false, keySource: null };
  let keySource: ResolvedKey["source"] = null;
  try {
    await verifyEnvelope(envelope, {
      inbox: config.agent_id,
      room,
      nowSec: windowSec,
      input,
      payloadHash: rules.payloadHash ?? null,
      resolveKey: async (agentId, keyId): Promise<KeyRecord | null> => {
        const resolved = await ctx.resolveKey(agentId, keyId);
        keySource = resolved.source;
        return resolved.record;
      },
    });
  } catch (err) {
    // The very same signed envelope (its payload intact) is answered as the first time; anything else
    // reusing the id must pass every check first.
    const previous = ctx.store.findDuplicate(envelope.from, envelope.msg_id);
    if (previous && previous.fingerprint === fingerprint && (rules.payloadHash ?? (await payloadHash(envelope.payload))) === envelope.payload_hash) return repeatOf(previous, ctx.config.agent_id, envelope);
    throw err;
  }
  return { envelope, fingerprint, hubMade, signed: true, keySource };
}
