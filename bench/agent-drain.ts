// The agent scenario's parts 3 and 4: a backlog queued while no agent is connected, drained into a gateway healthy or
// failing a seeded share of posts (503s, and resets with no answer), timed from the agent's "relay connected" line to
// the last arrival; optionally the gateway goes down for `outageMs` once a third arrived, and comes back on its port.
import path from "node:path";
import { DEFAULT_CONCURRENCY, idempotencyKeyFor } from "../local-agent/delivery/delivery.ts";
import { outageAttemptBound } from "../local-agent/delivery/retry-wait.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import type { StandinGateway } from "../scripts/standin-gateway.ts";
import type { NodeChild } from "./agent-child.ts";
import { makeBenchHome } from "./agent-home.ts";
import type { BenchRun } from "./bench-run.ts";
import type { HttpClient } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import { rng } from "./seeded-random.ts";

export type Drain = { label: string; failureRate: number; resetRate?: number; messages: number; conversations: number; outageMs?: number };
type Arrival = { sender: string; n: number; at: number };

export async function runDrain(run: BenchRun, relay: HttpClient, dir: string, drain: Drain, spawnAgent: (label: string, env: Record<string, string>) => NodeChild) {
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const random = rng(7);
  gateway.refuse = () => ((r) => (r < drain.failureRate ? 503 : r < drain.failureRate + (drain.resetRate ?? 0) ? 0 : null))(random());
  const home = await makeBenchHome(path.join(dir, `drain-${drain.label.replace(/\W+/g, "-")}`), relay.origin.origin, gateway, `Drain ${drain.label}`);
  const senders = Array.from({ length: drain.conversations }, (_, i) => `ag_${String(i + 1).padStart(12, "0")}`);
  const sent = new Map<string, { sender: string; n: number }>();
  const route = `/inbox/${home.agentId}/hooks/agentgram_inbox/agent`;
  // Round-robin over the senders, one poster: ids follow the order within each conversation.
  await runClosedLoop(drain.messages, 1, async (i) => {
    const [sender, n] = [senders[i % senders.length]!, Math.floor(i / senders.length) + 1];
    const body = JSON.stringify({ message: `${sender} says: message #${n} of this conversation`, name: sender, channel: "last", sessionKey: `agentline:${sender}` });
    const answer = await relay.request("POST", route, { authorization: `Bearer ${home.webhookToken}`, "content-type": "application/json" }, body);
    if (answer.status !== 202) throw new Error(`POST ${route} -> ${answer.status}: ${answer.body.slice(0, 200)}`);
    sent.set(idempotencyKeyFor(home.agentId, (JSON.parse(answer.body) as { id: number }).id), { sender, n });
    return 0;
  });
  const [arrivals, seen] = [[] as Arrival[], new Set<string>()];
  let [lastAt, duplicates] = [0, 0];
  gateway.onReceive = (hook) => {
    const key = hook.idempotencyKey ?? "";
    if (seen.size === seen.add(key).size) duplicates++;
    const message = sent.get(key);
    lastAt = performance.now();
    if (message) arrivals.push({ ...message, at: lastAt });
  };
  const agent = spawnAgent(`agent (${drain.label})`, home.env);
  await agent.waitForEvent("relay connected");
  const start = performance.now();
  const outage = drain.outageMs ? await outageDuring(gateway, agent, arrivals, drain, drain.outageMs) : null;
  await agent.until(`all ${drain.messages} messages at the gateway`, () => arrivals.length >= drain.messages, 120_000);
  const wallMs = lastAt - start;
  await agent.stop();
  await gateway.close();
  const [next, violated] = [new Map<string, number>(), new Set<string>()];
  for (const { sender, n } of arrivals) {
    if (n !== (next.get(sender) ?? 1)) violated.add(sender);
    next.set(sender, n + 1);
  }
  const count = (status: number) => gateway.requests.filter((r) => r.status === status).length;
  const outagesSeen = agent.events.filter((e) => e.event === "gateway down").length;
  return { ...drain, wallMs, rate: (drain.messages * 1000) / wallMs, posts: gateway.requests.length, refused: count(503), resets: count(0), duplicates, orderViolations: violated.size, outagesSeen, outage };
}

/** Down once a third arrived; counts the connections tried meanwhile; then how long each conversation took to go on. */
async function outageDuring(gateway: StandinGateway, agent: NodeChild, arrivals: Arrival[], drain: Drain, outageMs: number) {
  await agent.until("a third of the messages before the outage", () => arrivals.length >= drain.messages / 3, 120_000);
  await gateway.goDown();
  const downAt = performance.now();
  await new Promise((resolve) => setTimeout(resolve, outageMs));
  const [attempts, downMs] = [gateway.connectionsWhileDown, performance.now() - downAt];
  await gateway.comeBack();
  const backAt = performance.now();
  const firstAfter = () => new Map(arrivals.filter((a) => a.at >= backAt).reverse().map((a) => [a.sender, a.at - backAt]));
  await agent.until("every conversation's first message after the outage", () => firstAfter().size === drain.conversations, 60_000);
  return { downMs, attempts, bound: outageAttemptBound(downMs, DEFAULT_CONCURRENCY), resumedMs: [...firstAfter().values()].sort((a, b) => a - b) };
}
