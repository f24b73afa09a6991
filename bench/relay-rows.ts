// The relay scenario's timed rows: POST /inbox/{id}/envelopes on the relay until every ack is in its sender's inbox;
// the same envelopes to the baseline objects behind the same edge (worker/bench-baselines.ts: a bare insert, an
// insert + one Ed25519 verify + one sign); and the delivery frame at a local agent's authenticated WebSocket.
import WebSocket from "ws";
import { connectSigningInput, toBase64 } from "../protocol/index.ts";
import type { DeliveryFrame, ServerFrame } from "../protocol/index.ts";
import { Arrivals } from "./arrivals.ts";
import type { HttpClient, Measured } from "./http-client.ts";
import { runClosedLoop, warmedLoop, withCpu } from "./http-client.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { claimInbox, emptyInbox, inboxBacklog, newAgent, presignEnvelopes } from "./relay-agents.ts";

export const WARMUP = 100;
const ACK_DEADLINE_MS = 30_000;
const JSON_TYPE = { "content-type": "application/json" };

async function target(client: HttpClient, kind: "bare" | "verify-sign" | "relay", senders: readonly BenchAgent[], count: number) {
  const receiver = await newAgent();
  if (kind === "relay") await claimInbox(client, receiver);
  if (kind === "verify-sign") await client.timed("PUT", `/baseline/verify-sign/${receiver.id}/keys`, 204, JSON_TYPE, JSON.stringify(Object.fromEntries(senders.map((s) => [s.id, s.publicKey]))));
  const envelopes = await presignEnvelopes(senders, receiver.id, WARMUP + count);
  const path = kind === "relay" ? `/inbox/${receiver.id}/envelopes` : `/baseline/${kind}/${receiver.id}/envelopes`;
  return { receiver, envelopes, post: (i: number) => client.timed("POST", path, 202, JSON_TYPE, envelopes[i]!.body) };
}

export async function runBaseline(client: HttpClient, kind: "bare" | "verify-sign", senders: readonly BenchAgent[], count: number, concurrency: number): Promise<Measured> {
  const { post } = await target(client, kind, senders, count);
  await runClosedLoop(WARMUP, concurrency, post);
  return withCpu(() => runClosedLoop(count, concurrency, (i) => post(WARMUP + i)));
}

export async function awaitAcks(client: HttpClient, senders: readonly BenchAgent[], expected: readonly number[]): Promise<void> {
  const deadline = performance.now() + ACK_DEADLINE_MS;
  // Each poll is work for the relay too: one sender is watched until its acks are in (one call hands
  // over a sender's acks, and every sender's go out together), then the others are asked.
  let waiting = senders.map((_, i) => i);
  for (let watched = waiting.slice(0, 1); ; ) {
    const now = await Promise.all(watched.map((i) => inboxBacklog(client, senders[i]!)));
    const done = new Set(watched.filter((i, k) => now[k]! >= expected[i]!));
    waiting = waiting.filter((i) => !done.has(i));
    if (waiting.length === 0) return;
    if (performance.now() > deadline) throw new Error(`acks missing ${ACK_DEADLINE_MS} ms after the last 202 for senders ${waiting.join(", ")} (expected ${expected.join(", ")})`);
    // A sender whose acks came in: ask the others at once. None yet: wait 10 ms, and ask the first one again.
    watched = done.size > 0 ? waiting : waiting.slice(0, 1);
    if (done.size === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Each envelope must be answered 202 (stored, with the relay's signed ack); the row ends when every ack is in its
 * sender's inbox, so ack work the relay defers is inside the figure. `answeredMs`: until the last 202 alone.
 */
export async function runIntake(client: HttpClient, senders: readonly BenchAgent[], count: number, concurrency: number): Promise<Measured & { answeredMs: number }> {
  const { post } = await target(client, "relay", senders, count);
  // presignEnvelopes takes senders round-robin: sender j signed envelopes j, j + S, j + 2S, …
  const acksAfter = (n: number) => before.map((b, j) => b + Math.max(0, Math.ceil((n - j) / senders.length)));
  // Senders start each row empty: every poll for their acks reads their whole queue's summary.
  for (const sender of senders) await emptyInbox(client, sender);
  const before = await Promise.all(senders.map((s) => inboxBacklog(client, s)));
  await runClosedLoop(WARMUP, concurrency, post);
  await awaitAcks(client, senders, acksAfter(WARMUP));
  let [answeredMs, start] = [0, performance.now()];
  const measured = await withCpu(async () => {
    const answered = await runClosedLoop(count, concurrency, (i) => post(WARMUP + i));
    answeredMs = answered.wallMs;
    await awaitAcks(client, senders, acksAfter(WARMUP + count));
    return { ...answered, wallMs: performance.now() - start };
  });
  return { ...measured, answeredMs };
}

export async function runDelivery(client: HttpClient, senders: readonly BenchAgent[], count: number, concurrency: number) {
  const [{ receiver, envelopes, post }, arrivals, postMs] = [await target(client, "relay", senders, count), new Arrivals(), [] as number[]];
  const ws = new WebSocket(`${client.origin.origin.replace(/^http/, "ws")}/inbox/${receiver.id}/connect`);
  await new Promise<void>((resolve, reject) => {
    ws.on("error", reject).on("close", (code, reason) => reject(new Error(`socket closed before ready: ${code} ${reason.toString()}`)));
    ws.on("message", (data) => {
      const [at, frame] = [performance.now(), JSON.parse(data.toString()) as ServerFrame];
      if (frame.type === "challenge") {
        const auth = (signature: Uint8Array) => ws.send(JSON.stringify({ type: "auth", key: receiver.publicKey, signature: toBase64(signature), window: 64 }));
        receiver.sign(connectSigningInput(frame.agent_id, frame.nonce)).then(auth, reject);
      } else if (frame.type === "ready") resolve();
      // Any other frame (an error, say) leaves the awaited arrival to time out.
      else if (frame.type === "message") ws.send(JSON.stringify({ type: "ack", id: frame.id })), arrivals.arrived((JSON.parse((frame as DeliveryFrame).body) as { msg_id: string }).msg_id, at);
    });
  });
  try {
    const delivery = await warmedLoop(WARMUP, count, concurrency, async (i, measured) => {
      const [arrival, start] = [arrivals.arrival(envelopes[i]!.msgId, 10_000), performance.now()];
      const [posted, arrivedAt] = await Promise.all([post(i), arrival]);
      if (measured) postMs.push(posted);
      return arrivedAt - start;
    });
    return { delivery, postMs };
  } finally {
    if (ws.readyState !== WebSocket.CLOSED) await new Promise((resolve) => (ws.once("close", resolve), ws.close(1000, "bench done")));
  }
}
