// What bench/directory-bench.ts prints for part 2: the delegation round trip against a direct chat
// completion, its segments and pieces, and the checks.
import { RATE_PER_MINUTE, SKILL, TARGET_CARD } from "./delegation-agents.ts";
import { DELEGATION_CONCURRENCY, DELEGATION_WARMUP } from "./delegation-bench.ts";
import type { DelegationReport } from "./delegation-bench.ts";
import { fmt, p50, p99, rate, table } from "./stats.ts";

export function printDelegation(d: DelegationReport, agents: number, delegations: number): void {
  console.log(`\n2. Delegation round trip, excluding the target's thinking time (its stand-in gateway answers at once)`);
  console.log(`   Two local agents in this process (local-agent/agent.ts startAgent, silent but timed loggers), each with its own`);
  console.log(`   stand-in gateway (scripts/standin-gateway.ts), on the relay of part 1 (restarted, ${agents} cards in its directory).`);
  console.log(`   The target publishes card.json "${TARGET_CARD.name}" (skill "${SKILL}"). Each delegation is a fresh task:`);
  console.log(`   POST /api/delegate-task {agent_id, skill_id, message} to the requester's local API -> GET /directory/agents/{name}`);
  console.log(`   -> signed message envelope POSTed to the target's inbox -> relay socket -> target's task runner -> POST`);
  console.log(`   /v1/chat/completions on its gateway -> signed result envelope -> requester's socket -> the API's 200.`);
  console.log(`   Baseline: that chat completion POSTed straight to the target's gateway (same model/messages shape, a fresh user).`);
  console.log(`   Both inboxes re-claimed with rate_per_minute ${RATE_PER_MINUTE}: at the default 20 a minute per sender, the 21st task`);
  console.log(`   (or result) in a minute between the same two agents is refused with 429.`);
  console.log(`   Concurrency 1: ${DELEGATION_WARMUP} warm-up pairs, then ${delegations} delegation/direct pairs one after the other. Concurrency 8: closed loops,`);
  console.log(`   ${DELEGATION_WARMUP} warm-up each, ${delegations} direct calls then ${delegations} delegations (the target runs at most 4 tasks at once; the`);
  console.log(`   rest wait in its task queue). Keep-alive node:http clients; the agents use fetch as they do in production.`);
  const rows = [["measure", "conc", "count", "wall s", "per s", "p50 ms", "p99 ms"]];
  for (const c of DELEGATION_CONCURRENCY) {
    const r = d.rows.get(c)!;
    rows.push(["direct POST /v1/chat/completions (baseline)", String(c), String(r.chat.latenciesMs.filter(Number.isFinite).length), c === 1 ? "" : fmt(r.chat.wallMs / 1000), c === 1 ? "" : fmt(rate(r.chat)), fmt(p50(r.chat.latenciesMs)), fmt(p99(r.chat.latenciesMs))]);
    rows.push(["POST /api/delegate-task -> 200 completed", String(c), String(r.delegate.latenciesMs.filter(Number.isFinite).length), fmt(r.delegate.wallMs / 1000), fmt(rate(r.delegate)), fmt(p50(r.delegate.latenciesMs)), fmt(p99(r.delegate.latenciesMs))]);
    rows.push(["  API in -> requester logged \"task sent\"", String(c), String(r.sentMs.length), "", "", fmt(p50(r.sentMs)), fmt(p99(r.sentMs))]);
    rows.push(["  \"task sent\" -> API answer read", String(c), String(r.restMs.length), "", "", fmt(p50(r.restMs)), fmt(p99(r.restMs))]);
    rows.push(["  (\"task sent\" -> target logged \"task answered\")", String(c), String(r.answeredMs.length), "", "", fmt(p50(r.answeredMs)), fmt(p99(r.answeredMs))]);
  }
  rows.push(["pieces alone, concurrency 1:", "", "", "", "", "", ""]);
  rows.push(["  GET /directory/agents/{name} (the card look-up)", "1", String(d.pieces.cardMs.length), "", "", fmt(p50(d.pieces.cardMs)), fmt(p99(d.pieces.cardMs))]);
  rows.push(["  signEnvelope with the agent's key (pure JS)", "1", String(d.pieces.signMs.length), "", "", fmt(p50(d.pieces.signMs)), fmt(p99(d.pieces.signMs))]);
  rows.push(["  POST /inbox/{id}/envelopes -> 202, no agent there", "1", String(d.pieces.postMs.length), "", "", fmt(p50(d.pieces.postMs)), fmt(p99(d.pieces.postMs))]);
  console.log(table(rows));
  console.log(`   (concurrency 1: wall s is the whole interleaved run, both rows; per s = delegations per second of it.)`);
  console.log(`   Segments (this process's performance.now(), split by task_id): the requester logs "task sent" after the relay's 202`);
  console.log(`   for the task (card look-up, signing with the agent's pure-JS key, POST /inbox/{target}/envelopes, which answers once`);
  console.log(`   the relay's signed ack is stored in the requester's inbox); the target logs "task answered" after the relay's 202 for`);
  console.log(`   its result, which the relay may already have pushed to the requester: it can come after the API's answer. Pieces`);
  console.log(`   alone, each ${delegations}× after ${DELEGATION_WARMUP} warm-up, in turn: the card look-up on a keep-alive node:http client (the agent uses`);
  console.log(`   fetch); signing a task envelope with the requester's identity (local-agent/identity.ts: noble, pure JS); a signed`);
  console.log(`   message from the requester POSTed with the agent's own postEnvelope (fetch) to one of part 1's inboxes, which no agent`);
  console.log(`   is connected to (rate raised likewise): the relay's intake and its ack to the requester, without a delivery.`);
  for (const c of DELEGATION_CONCURRENCY) {
    const r = d.rows.get(c)!;
    const overhead50 = p50(r.delegate.latenciesMs) - p50(r.chat.latenciesMs);
    const overhead99 = p99(r.delegate.latenciesMs) - p99(r.chat.latenciesMs);
    console.log(
      `   concurrency ${c}: clawrelay's overhead (delegation − direct) p50 ${fmt(overhead50)} ms, p99 ${fmt(overhead99)} ms;` +
        ` delegation / direct p50 ${fmt(p50(r.delegate.latenciesMs) / p50(r.chat.latenciesMs))}×, p99 ${fmt(p99(r.delegate.latenciesMs) / p99(r.chat.latenciesMs))}×;` +
        ` failures ${r.failures.length}${r.failures.length ? ` (first: ${r.failures[0]})` : ""}`,
    );
  }
  console.log(`   checks: agents' warnings/errors: requester ${d.requesterProblems.length ? d.requesterProblems.slice(0, 3).join("; ") : "none"}, target ${d.targetProblems.length ? d.targetProblems.slice(0, 3).join("; ") : "none"};`);
  console.log(`           late results dropped ${d.lateDropped}; non-200 answers from the target's gateway ${d.gatewayRefused}`);
  const all = DELEGATION_CONCURRENCY.length * (DELEGATION_WARMUP + delegations);
  console.log(`   hooks (POST {hooks.path}/agentgram_inbox/…) the gateways received during the ${all} delegations (warm-ups included):`);
  console.log(`   requester's ${d.requesterHooks.total}, of which ${d.requesterHooks.acks} the relay's ack of a task ("… received your message …"); target's ${d.targetHooks.total}.`);
}
