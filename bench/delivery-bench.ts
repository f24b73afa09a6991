// Part 3 of bench/relay-bench.ts: time from just before POST /inbox/{id}/envelopes to the delivery
// frame's arrival at a local agent's WebSocket (authenticated as test/support/workerd/socket-client.ts
// does), acknowledging every frame as a local agent would.
import WebSocket from "ws";
import { connectSigningInput, toBase64 } from "../protocol/index.ts";
import type { DeliveryFrame, ServerFrame } from "../protocol/index.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import type { BenchAgent } from "./relay-agents.ts";
import { claimInbox, newAgent, presignEnvelopes } from "./relay-agents.ts";
import { WARMUP_REQUESTS } from "./intake-bench.ts";

/** Above the bench's concurrency, so the delivery window never holds a frame back. */
const SOCKET_WINDOW = 64;
const FRAME_TIMEOUT_MS = 10_000;

/** An authenticated local-agent socket that resolves a waiter per msg_id and acks every delivery. */
class AgentSocket {
  private readonly waiters = new Map<string, (arrivedAt: number) => void>();
  private readonly ws: WebSocket;
  private failure: Error | null = null;

  private constructor(ws: WebSocket) {
    this.ws = ws;
  }

  static async open(wsOrigin: string, agent: BenchAgent): Promise<AgentSocket> {
    const ws = new WebSocket(`${wsOrigin}/inbox/${agent.id}/connect`);
    const socket = new AgentSocket(ws);
    const ready = new Promise<void>((resolve, reject) => {
      ws.on("error", reject);
      ws.on("close", (code, reason) => reject(new Error(`socket closed before ready: ${code} ${reason.toString()}`)));
      ws.on("message", (data) => {
        const frame = JSON.parse(data.toString()) as ServerFrame;
        if (frame.type === "challenge") {
          void agent.sign(connectSigningInput(frame.agent_id, frame.nonce)).then((signature) =>
            ws.send(JSON.stringify({ type: "auth", key: agent.publicKey, signature: toBase64(signature), window: SOCKET_WINDOW })),
          ).catch(reject);
        } else if (frame.type === "ready") resolve();
        else socket.onFrame(frame);
      });
    });
    await ready;
    return socket;
  }

  private onFrame(frame: ServerFrame): void {
    const arrivedAt = performance.now();
    if (frame.type !== "message") {
      this.failure ??= new Error(`unexpected frame ${JSON.stringify(frame)}`);
      return;
    }
    this.ws.send(JSON.stringify({ type: "ack", id: frame.id }));
    const msgId = (JSON.parse((frame as DeliveryFrame).body) as { msg_id: string }).msg_id;
    this.waiters.get(msgId)?.(arrivedAt);
    this.waiters.delete(msgId);
  }

  /** Resolves with the arrival time of the frame carrying `msgId`; register before posting it. */
  frameFor(msgId: string): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      const timer = setTimeout(() => {
        this.waiters.delete(msgId);
        reject(new Error(`no frame for ${msgId} within ${FRAME_TIMEOUT_MS} ms: stored but not pushed (window full? socket closed?)`));
      }, FRAME_TIMEOUT_MS);
      this.waiters.set(msgId, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ws.readyState === WebSocket.CLOSED) return resolve();
      this.ws.once("close", () => resolve());
      this.ws.close(1000, "bench done");
    });
  }
}

export interface DeliveryResult {
  /** Latency per message: just before its POST to its frame's arrival at the socket. */
  delivery: LoadResult;
  /** POST -> 202 latencies of the same messages, the socket attached. */
  postMs: number[];
}

export async function runDelivery(client: HttpClient, senders: readonly BenchAgent[], count: number, concurrency: number): Promise<DeliveryResult> {
  const receiver = await newAgent();
  await claimInbox(client, receiver);
  const socket = await AgentSocket.open(client.origin.origin.replace(/^http/, "ws"), receiver);
  const postMs: number[] = [];
  try {
    const envelopes = await presignEnvelopes(senders, receiver.id, WARMUP_REQUESTS + count);
    const path = `/inbox/${receiver.id}/envelopes`;
    const deliver = async (i: number, record: boolean): Promise<number> => {
      const envelope = envelopes[i]!;
      const arrival = socket.frameFor(envelope.msgId);
      const start = performance.now();
      const [posted, arrivedAt] = await Promise.all([
        client.timed("POST", path, 202, { "content-type": "application/json" }, envelope.body),
        arrival,
      ]);
      if (record) postMs.push(posted);
      return arrivedAt - start;
    };
    await runClosedLoop(WARMUP_REQUESTS, concurrency, (i) => deliver(i, false));
    const delivery = await runClosedLoop(count, concurrency, (i) => deliver(WARMUP_REQUESTS + i, true));
    return { delivery, postMs };
  } finally {
    await socket.close();
  }
}
