// bench:agent, section 3: how fast the local agent drains a backlog into the gateway, with a healthy
// gateway and with one that answers 503 to a share of posts (seeded, so runs compare). A fresh inbox
// per run gets `messages` hub bodies spread over `conversations` senders while no agent is connected;
// then the agent starts, and the drain is timed from its "relay connected" line to the last arrival.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { idempotencyKeyFor } from "../local-agent/delivery/delivery.ts";
import { REPO_ROOT } from "../scripts/local-workerd.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import { NodeChild } from "./agent-child.ts";
import { makeBenchHome } from "./agent-home.ts";
import type { BenchRun } from "./bench-run.ts";
import type { HttpClient } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import { LOOPBACK_HUB_URL } from "./relay-agents.ts";
import { rng } from "./seeded-random.ts";

export interface DrainOptions {
  label: string;
  messages: number;
  conversations: number;
  /** Share of posts the gateway answers 503 (each post drawn independently). */
  failureRate: number;
  concurrency?: number;
  /** Messages the relay may push ahead (the agent's `window`; its default when absent). */
  window?: number;
}

export interface DrainResult extends DrainOptions {
  wallMs: number;
  rate: number;
  posts: number;
  refused: number;
  duplicates: number;
  /** Conversations whose messages did not arrive in the order they were sent. */
  orderViolations: number;
}

function hubBody(sender: string, n: number): string {
  return JSON.stringify({ message: `${sender} says: message #${n} of this conversation`, name: sender, channel: "last", sessionKey: `agentline:${sender}` });
}

export async function runDrain(run: BenchRun, relay: HttpClient, relayUrl: string, tmpDir: string, cli: string, options: DrainOptions): Promise<DrainResult> {
  const gateway = await startStandinGateway();
  run.own(() => gateway.close());
  const random = rng(7);
  gateway.refuse = () => (random() < options.failureRate ? 503 : null);
  const dir = path.join(tmpDir, `drain-${options.label.replace(/\W+/g, "-")}`);
  await mkdir(dir);
  const home = await makeBenchHome(dir, relayUrl, LOOPBACK_HUB_URL, gateway, `Drain ${options.label}`, {
    ...(options.concurrency ? { delivery_concurrency: options.concurrency } : {}),
    ...(options.window ? { window: options.window } : {}),
  });
  const senders = Array.from({ length: options.conversations }, (_, i) => `ag_${String(i + 1).padStart(12, "0")}`);
  const sent = new Map<string, { sender: string; n: number }>();
  const route = `/inbox/${home.agentId}/hooks/agentgram_inbox/agent`;
  const headers = { authorization: `Bearer ${home.webhookToken}`, "content-type": "application/json" };
  // Round-robin over the senders, one poster: ids follow the order within each conversation.
  await runClosedLoop(options.messages, 1, async (i) => {
    const sender = senders[i % senders.length]!;
    const n = Math.floor(i / senders.length) + 1;
    const answer = await relay.request("POST", route, headers, hubBody(sender, n));
    if (answer.status !== 202) throw new Error(`POST ${route} -> ${answer.status}: ${answer.body.slice(0, 200)}`);
    sent.set(idempotencyKeyFor(home.agentId, (JSON.parse(answer.body) as { id: number }).id), { sender, n });
    return 0;
  });
  const arrivals: { sender: string; n: number }[] = [];
  let lastAt = 0;
  let duplicates = 0;
  const seen = new Set<string>();
  gateway.onReceive = (hook) => {
    const key = hook.idempotencyKey ?? "";
    if (seen.has(key)) duplicates++;
    seen.add(key);
    const message = sent.get(key);
    if (message) arrivals.push(message);
    lastAt = performance.now();
  };
  // Through the bin's shebang, as users run it (its Node flags apply), on this process's Node.
  const agent = new NodeChild(`agent (${options.label})`, ["start", "--json"], { ...home.env, PATH: `${path.dirname(process.execPath)}:${home.env.PATH ?? ""}` }, REPO_ROOT, cli);
  run.own(() => agent.stop(), () => agent.killNow());
  await agent.waitForEvent("relay connected", 20_000);
  const start = performance.now();
  await agent.until(`all ${options.messages} messages at the gateway`, () => arrivals.length >= options.messages, 120_000);
  const wallMs = lastAt - start;
  await agent.stop();
  await gateway.close();
  const next = new Map<string, number>();
  const violated = new Set<string>();
  for (const { sender, n } of arrivals) {
    if (n !== (next.get(sender) ?? 1)) violated.add(sender);
    next.set(sender, n + 1);
  }
  return {
    ...options,
    wallMs,
    rate: (options.messages * 1000) / wallMs,
    posts: gateway.requests.length,
    refused: gateway.requests.filter((r) => r.status === 503).length,
    duplicates,
    orderViolations: violated.size,
  };
}
