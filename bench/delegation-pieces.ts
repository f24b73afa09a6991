// Part 2 of bench/directory-bench.ts, piece by piece: the requester's side of a delegation (card
// look-up, signing, the relay's intake of a task) each timed alone, for delegation-bench.ts.
import { identityFromPrivateKey } from "../local-agent/identity.ts";
import { postEnvelope, relayErrorText } from "../local-agent/relay/relay-api.ts";
import { draftEnvelope, signEnvelope } from "../protocol/index.ts";
import { DELEGATE_TIMEOUT_MS, RATE_PER_MINUTE, SKILL, TARGET_CARD } from "./delegation-agents.ts";
import type { DelegationHome } from "./delegation-agents.ts";
import type { HttpClient } from "./http-client.ts";
import { signedRequest } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";

export interface Pieces {
  cardMs: number[];
  signMs: number[];
  postMs: number[];
}

/** `count` rounds after `warmup`, each piece in turn; `idle` is an inbox no agent is connected to. */
export async function measurePieces(relay: HttpClient, requester: DelegationHome, targetId: string, idle: BenchAgent, count: number, warmup: number): Promise<Pieces> {
  const pieces: Pieces = { cardMs: [], signMs: [], postMs: [] };
  const raised = await signedRequest(relay, idle, "PUT", `/inbox/${idle.id}`, { rate_per_minute: RATE_PER_MINUTE });
  if (raised.status !== 200) throw new Error(`raising the rate of ${idle.id} -> ${raised.status}: ${raised.body.slice(0, 300)}`);
  const identity = identityFromPrivateKey(requester.settings.key.private_key, requester.settings.key.key_id);
  for (let i = 0; i < warmup + count; i++) {
    const cardMs = await relay.timed("GET", `/directory/agents/${TARGET_CARD.name}`, 200);
    const draft = draftEnvelope({
      from: requester.settings.agent_id,
      to: targetId,
      type: "message",
      payload: { text: `Will it rain in Paris tomorrow morning? (piece ${i})`, skill_id: SKILL, task_id: crypto.randomUUID() },
      ttl_sec: Math.ceil(DELEGATE_TIMEOUT_MS / 1000) + 60,
    });
    const start = performance.now();
    await signEnvelope(draft, identity.keyId, identity.sign);
    const signMs = performance.now() - start;
    // The same kind of envelope to an inbox no agent is connected to: the relay's intake (key look-up in
    // the requester's inbox, storage, its signed ack stored in the requester's inbox) without a delivery.
    const plain = await signEnvelope(
      draftEnvelope({ from: requester.settings.agent_id, to: idle.id, type: "message", payload: { text: `Will it rain in Paris tomorrow morning? (piece ${i})` } }),
      identity.keyId,
      identity.sign,
    );
    const postStart = performance.now();
    const posted = await postEnvelope(requester.settings.relay_url, plain);
    const postMs = performance.now() - postStart;
    if (posted.status !== 202) throw new Error(`POST /inbox/${idle.id}/envelopes -> ${relayErrorText(posted)}`);
    if (i < warmup) continue;
    pieces.cardMs.push(cardMs);
    pieces.signMs.push(signMs);
    pieces.postMs.push(postMs);
  }
  return pieces;
}
