// The agent scenario's part 3: a backlog queued while no agent is connected, drained into a gateway healthy or
// answering 503 to a seeded share of posts, timed from the agent's "relay connected" line to the last arrival.
import path from "node:path";
import { idempotencyKeyFor } from "../local-agent/delivery/delivery.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import type { NodeChild } from "./agent-child.ts";
import { makeBenchHome } from "./agent-home.ts";
import type { BenchRun } from "./bench-run.ts";
import type { HttpClient } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import { rng } from "./seeded-random.ts";

export async function runDrain(run: BenchRun, relay: HttpClient, dir: string, drain: { label: string; failureRate: number; messages: number; conversations: number }, spawnAgent: (label: string, env: Record<string, string>) => NodeChild) {
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const random = rng(7);
  gateway.refuse = () => (random() < drain.failureRate ? 503 : null);
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
  const [arrivals, seen] = [[] as { sender: string; n: number }[], new Set<string>()];
  let [lastAt, duplicates] = [0, 0];
  gateway.onReceive = (hook) => {
    const key = hook.idempotencyKey ?? "";
    if (seen.size === seen.add(key).size) duplicates++;
    const message = sent.get(key);
    if (message) arrivals.push(message);
    lastAt = performance.now();
  };
  const agent = spawnAgent(`agent (${drain.label})`, home.env);
  await agent.waitForEvent("relay connected");
  const start = performance.now();
  await agent.until(`all ${drain.messages} messages at the gateway`, () => arrivals.length >= drain.messages, 120_000);
  const wallMs = lastAt - start;
  await agent.stop();
  await gateway.close();
  const [next, violated] = [new Map<string, number>(), new Set<string>()];
  for (const { sender, n } of arrivals) {
    if (n !== (next.get(sender) ?? 1)) violated.add(sender);
    next.set(sender, n + 1);
  }
  const refused = gateway.requests.filter((r) => r.status === 503).length;
  return { ...drain, wallMs, rate: (drain.messages * 1000) / wallMs, posts: gateway.requests.length, refused, duplicates, orderViolations: violated.size };
}
