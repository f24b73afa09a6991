// Part 1's set-up for bench/directory-bench.ts: agents with Node-crypto keys, each inbox claimed and
// its card published on the relay, as a real agent does it.
import { generateKeyPairSync, sign as nodeSign } from "node:crypto";
import type { KeyObject } from "node:crypto";
import type { CardFile } from "../local-agent/card-file.ts";
import { defaultKeyIdFor } from "../protocol/index.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import { benchAgent, claimInbox, signedRequest } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";

/** Claim + publish requests in flight while loading the directory (workerd is CPU-bound past ~8). */
export const LOAD_CONCURRENCY = 16;

const rawPublicKey = (key: KeyObject) => "ed25519:" + Buffer.from(key.export({ format: "jwk" }).x!, "base64url").toString("base64");

/** A directory agent signing with a Node KeyObject: ~20× cheaper than pure JS, so the load stays quick. */
export function loadAgent(): BenchAgent {
  const main = generateKeyPairSync("ed25519");
  const receipt = generateKeyPairSync("ed25519");
  return benchAgent(rawPublicKey(main.publicKey), async (message) => new Uint8Array(nodeSign(null, message, main.privateKey)), {
    key_id: defaultKeyIdFor(rawPublicKey(receipt.publicKey)),
    private_key: Buffer.from(receipt.privateKey.export({ format: "jwk" }).d!, "base64url").toString("base64"),
  });
}

export interface LoadFigures {
  load: LoadResult;
  claimMs: number[];
  publishMs: number[];
}

/** Claims each agent's inbox (PUT /inbox/{id}, 201) and publishes its card (PUT /directory/agents/{name}, 201). */
export async function loadDirectory(relay: HttpClient, agents: BenchAgent[], cards: CardFile[], log: (line: string) => void): Promise<LoadFigures> {
  const claimMs: number[] = [];
  const publishMs: number[] = [];
  let done = 0;
  const progress = setInterval(() => log(`  ${done}/${agents.length} agents claimed and published`), 15_000);
  try {
    const load = await runClosedLoop(agents.length, LOAD_CONCURRENCY, async (i) => {
      const agent = agents[i]!;
      const card = cards[i]!;
      const start = performance.now();
      // The relay's default settings: no rate_per_minute.
      await claimInbox(relay, agent, {});
      const claimed = performance.now();
      const publish = await signedRequest(relay, agent, "PUT", `/directory/agents/${card.name}`, { ...card, agent_id: agent.id });
      if (publish.status !== 201) throw new Error(`publishing ${card.name} -> ${publish.status}: ${publish.body.slice(0, 300)}`);
      const end = performance.now();
      claimMs.push(claimed - start);
      publishMs.push(end - claimed);
      done++;
      return end - start;
    });
    return { load, claimMs, publishMs };
  } finally {
    clearInterval(progress);
  }
}
