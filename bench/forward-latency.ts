// bench:sources part 3: how long a Stripe-signed event takes from the sender's POST to the relay until a local app
// has it, through the real local agent forwarding to the app (a source with --forward), against a direct POST of
// the same body and headers to the same app in the same run. One event at a time, so each figure is a latency.
import { mkdir } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join } from "node:path";
import Stripe from "stripe";
import { startAgent } from "../local-agent/agent.ts";
import { createLogger } from "../local-agent/logger.ts";
import { journalPath, loadSettings } from "../local-agent/settings.ts";
import { startStandinGateway } from "../scripts/standin-gateway.ts";
import { homeOwner, makeBenchHome } from "./agent-home.ts";
import type { HttpClient } from "./http-client.ts";
import { signedCall } from "./relay-agents.ts";
import { fmt, p50, p99 } from "./report.ts";
import type { GoalRow } from "./report.ts";

export const FORWARD_EVENTS = 200;
const WARMUP = 20;
const SECRET = "whsec_bench_forward_latency_0123456789";

/** A local app that verifies Stripe's signature as the developer's would and resolves whoever waits for that event id. */
async function startApp(): Promise<{ url: string; arrival(id: string): Promise<number>; close(): Promise<void> }> {
  const waiting = new Map<string, (at: number) => void>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c)).on("end", () => {
      const at = performance.now();
      const event = Stripe.webhooks.constructEvent(Buffer.concat(chunks), String(req.headers["stripe-signature"]), SECRET);
      res.writeHead(200).end("ok");
      waiting.get(event.id)?.(at);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = address && typeof address !== "string" ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    arrival: (id) => new Promise((resolve) => waiting.set(id, resolve)),
    close: () => new Promise((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}

function signed(id: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ id, object: "event", type: "payment_intent.succeeded", data: { object: { id: `pi_${id}`, amount: 2000, currency: "eur" } } }, null, 2);
  return { body, headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET }) } };
}

export async function forwardLatency(relay: HttpClient, dir: string): Promise<{ rows: string[][]; summary: GoalRow[] }> {
  const app = await startApp();
  const gateway = await startStandinGateway();
  await mkdir(join(dir, "forward-home"), { recursive: true });
  const home = await makeBenchHome(join(dir, "forward-home"), relay.origin.href.replace(/\/$/, ""), gateway, "Forward bench");
  const settingsPath = join(home.env.CLAWRELAY_HOME, "agent.json");
  const settings = loadSettings(settingsPath);
  // The home's own key signs the owner's call, as the CLI would.
  const identity = await homeOwner(settings);
  const added = await signedCall<{ post_url: string }>(relay, identity, "POST", `/inbox/${settings.agent_id}/sources`, 201, { name: "stripe", kind: "stripe", secret: SECRET, forward: `${app.url}/webhooks/stripe` });
  const sourcePath = new URL(added.post_url).pathname;
  const agent = await startAgent({ settings, env: home.env, logger: createLogger({ json: true, write: () => {} }), apiPort: 0, journalFile: journalPath(home.env.CLAWRELAY_HOME) });
  const direct = new (relay.constructor as typeof HttpClient)(app.url);
  try {
    const viaRelay: number[] = [];
    const straight: number[] = [];
    for (let i = 0; i < WARMUP + FORWARD_EVENTS; i++) {
      // Interleaved, so both see the same machine at the same moment.
      for (const way of ["relay", "direct"] as const) {
        const id = `evt_${way}_${i}`;
        const { body, headers } = signed(id);
        const arrived = app.arrival(id);
        const start = performance.now();
        if (way === "relay") await relay.timed("POST", sourcePath, 200, headers, body);
        else await direct.timed("POST", "/webhooks/stripe", 200, headers, body);
        const ms = (await arrived) - start;
        if (i >= WARMUP) (way === "relay" ? viaRelay : straight).push(ms);
      }
    }
    const ratio = p50(viaRelay) / p50(straight);
    return {
      rows: [
        ["path", "events", "p50 ms", "p99 ms"],
        ["POST to the relay → agent → app (constructEvent at the app)", String(viaRelay.length), fmt(p50(viaRelay)), fmt(p99(viaRelay))],
        ["POST straight to the app, the baseline", String(straight.length), fmt(p50(straight)), fmt(p99(straight))],
      ],
      summary: [{ figure: "POST-to-app p50 ms via relay and agent", value: `${fmt(p50(viaRelay))} (p99 ${fmt(p99(viaRelay))})`, baseline: `${fmt(p50(straight))} (p99 ${fmt(p99(straight))}) direct`, ratio }],
    };
  } finally {
    direct.close();
    await agent.close();
    await gateway.close();
    await app.close();
  }
}
