// A raw agent socket for part 6 (relay-history-rows.ts): authenticates naming the "live" feature and answers
// every live request frame at once with 200 "ok", as an agent whose app answered would. Nothing else is sent
// on it (the measured inbox has no queued mail). Covered by running `npm run bench` (its part 6 posts to a
// live source and checks each answer is 200).
import WebSocket from "ws";
import { connectSigningInput, toBase64 } from "../protocol/index.ts";
import type { LiveAnswerFrame, ServerFrame } from "../protocol/index.ts";
import type { HttpClient } from "./http-client.ts";
import type { BenchAgent } from "./relay-agents.ts";

export async function liveAnswerer(client: HttpClient, agent: BenchAgent): Promise<{ close(): Promise<void> }> {
  const ws = new WebSocket(`${client.origin.origin.replace(/^http/, "ws")}/inbox/${agent.id}/connect`);
  await new Promise<void>((resolve, reject) => {
    ws.on("error", reject).on("close", (code, reason) => reject(new Error(`socket closed before ready: ${code} ${reason.toString()}`)));
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as ServerFrame;
      if (frame.type === "challenge") {
        const auth = (signature: Uint8Array) => ws.send(JSON.stringify({ type: "auth", key: agent.publicKey, signature: toBase64(signature), features: ["live"] }));
        agent.sign(connectSigningInput(frame.agent_id, frame.nonce)).then(auth, reject);
      } else if (frame.type === "ready") {
        if (!(frame.features ?? []).includes("live")) reject(new Error(`the relay's ready frame does not name live: ${JSON.stringify(frame.features)}`));
        resolve();
      } else if (frame.type === "request") {
        ws.send(JSON.stringify({ type: "answer", rid: frame.rid, status: 200, headers: [["content-type", "text/plain"]], body: "ok", encoding: "utf8" } satisfies LiveAnswerFrame));
      }
    });
  });
  return { close: () => new Promise<void>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : (ws.once("close", () => resolve()), ws.close(1000, "bench done")))) };
}
