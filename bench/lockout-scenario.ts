// `npm run bench:lockout`: the owner's agent connecting while anonymous clients hold its inbox's sockets
// (issue 32, item 7). A real relay client (local-agent/relay/relay-client.ts, its upgrade signed) is started
// and timed from start() to `ready`, one connection at a time `pause-ms` apart (so the flood's sockets reach
// their auth deadline and reopen meanwhile), first with no other client, then while `clients` anonymous ones (test/support/node/anonymous-flood.ts) keep the cap on unauthenticated sockets
// full and reopen at once; then plain (unsigned) upgrades, as an older agent makes them, counted refused or
// taken under the same flood. Nothing asserted; the goal (≤ 2 s added at p95) is printed met or not.
import WebSocket from "ws";
import { defaultKeyIdFor, formatPublicKey, generateSeed, publicKeyFromSeed, toBase64 } from "../protocol/index.ts";
import { newIdentity } from "../local-agent/identity.ts";
import type { Identity } from "../local-agent/identity.ts";
import { silentLogger } from "../local-agent/logger.ts";
import { RelayClient } from "../local-agent/relay/relay-client.ts";
import { startRelayMiniflare } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import { anonymousFlood } from "../test/support/node/anonymous-flood.ts";
import type { BenchRun } from "./bench-run.ts";
import { LOOPBACK_HUB_URL, benchAgent, claimInbox } from "./relay-agents.ts";
import { fmt, p50, percentile, printGoalSummary, table } from "./report.ts";

const GOAL_ADDED_MS = 2000;
const p95 = (values: readonly number[]) => percentile(values, 95);

/** One connection of the owner's agent: start() → `ready` (reconnects after a refusal included), then closed. */
async function connectOnce(relayUrl: string, identity: Identity): Promise<number> {
  const client = new RelayClient({ relayUrl, identity, logger: silentLogger });
  const started = performance.now();
  const ready = new Promise<void>((resolve) => client.onState((state) => state === "connected" && resolve()));
  client.start();
  await ready;
  const ms = performance.now() - started;
  await client.close();
  return ms;
}

/** An unsigned upgrade, as an agent from before the proof makes it: taken (closed at once) or refused. */
function plainUpgrade(url: string): Promise<"taken" | "refused"> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.on("upgrade", () => resolve("taken"));
    ws.on("unexpected-response", (_req, res) => {
      res.resume();
      resolve("refused");
      ws.terminate();
    });
    // The refusal was counted above; the error that follows a terminate says nothing more.
    ws.on("error", () => resolve("refused"));
    ws.on("open", () => ws.terminate());
  });
}

export async function lockoutScenario(run: BenchRun, args: Record<string, number>): Promise<void> {
  const rounds = args.rounds!;
  const clients = args.clients!;
  const pause = () => new Promise((resolve) => setTimeout(resolve, args["pause-ms"]!));
  const [bundle] = (await run.bundle("wrangler.toml")) as [WorkerBundle];
  const http = await run.startMiniflare(() => startRelayMiniflare(bundle, LOOPBACK_HUB_URL));
  const relayUrl = http.origin.origin;
  const identity = await newIdentity();
  const receiptSeed = generateSeed();
  const receiptKey = { key_id: await defaultKeyIdFor(formatPublicKey(publicKeyFromSeed(receiptSeed))), private_key: toBase64(receiptSeed) };
  await claimInbox(http, await benchAgent(identity.publicKey, async (m) => identity.sign(m), receiptKey));

  run.log(`part 1: ${rounds} connections of the owner's agent, no other client…`);
  const quiet: number[] = [];
  for (let i = 0; i < rounds; i++) {
    quiet.push(await connectOnce(relayUrl, identity));
    await pause();
  }
  run.log(`part 2: ${rounds} connections while ${clients} anonymous clients hold the cap and reopen at once…`);
  const flood = anonymousFlood(relayUrl, identity.agentId, clients);
  run.own(() => flood.stop());
  while (flood.refused === 0) await new Promise((resolve) => setTimeout(resolve, 25));
  const flooded: number[] = [];
  for (let i = 0; i < rounds; i++) {
    flooded.push(await connectOnce(relayUrl, identity));
    await pause();
  }
  run.log(`part 3: ${rounds} unsigned upgrades under the same flood…`);
  const plain: string[] = [];
  for (let i = 0; i < rounds; i++) plain.push(await plainUpgrade(`${relayUrl.replace(/^http/, "ws")}/inbox/${identity.agentId}/connect`));
  const { opened, refused } = flood;
  await flood.stop();
  await run.stopMiniflare();

  console.log(`\nThe owner's agent connecting (start → ready), one connection at a time ${args["pause-ms"]} ms apart, ${rounds} each way`);
  console.log(table([
    ["while", "connections", "p50 ms", "p95 ms"],
    ["no other client, the baseline", String(quiet.length), fmt(p50(quiet)), fmt(p95(quiet))],
    [`${clients} anonymous clients reopening`, String(flooded.length), fmt(p50(flooded)), fmt(p95(flooded))],
  ]));
  console.log(`anonymous upgrades during the flood: ${opened} taken, ${refused} refused 429`);
  console.log(`unsigned upgrades (an older agent's) under the flood: ${plain.filter((p) => p === "refused").length} of ${plain.length} refused`);
  const added = { p50: p50(flooded) - p50(quiet), p95: p95(flooded) - p95(quiet) };
  printGoalSummary("Summary", [
    { figure: `connect with ${clients} anonymous clients (adds ${fmt(added.p50)} ms at p50)`, value: `${fmt(p95(flooded))} ms p95`, baseline: `${fmt(p95(quiet))} ms p95 alone`, ratio: p95(flooded) / p95(quiet), goal: `≤ ${GOAL_ADDED_MS / 1000} s added at p95 (adds ${fmt(added.p95)} ms)`, met: added.p95 <= GOAL_ADDED_MS },
  ]);
}
