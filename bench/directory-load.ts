// Part 1's set-up for bench/directory-bench.ts: agents with Node-crypto keys, each inbox claimed and
// its card published on the relay, as a real agent does it; and, for the large directory, publishes
// straight to the Directory object's RPC (no inbox, no signature) with its index figures.
import { generateKeyPairSync, sign as nodeSign } from "node:crypto";
import type { KeyObject } from "node:crypto";
import type { Miniflare } from "miniflare";
import type { CardFile } from "../local-agent/society/card-file.ts";
import { defaultKeyIdFor } from "../protocol/index.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import { DIRECTORY_NAME } from "./directory-cold-start.ts";
import { benchAgent, claimInbox, signedRequest } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";
import type { DirectoryStats } from "../worker/directory/index-stats.ts";

export type { DirectoryStats };

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

interface DirectoryRpc {
  publish(card: unknown, signedAt: number): Promise<{ ok: boolean; code?: string; message?: string }>;
  indexStats(): Promise<DirectoryStats>;
}

/**
 * Runs `use` with a stub of the Directory object through Miniflare's RPC proxy, then lets the stub go:
 * while one is held, the object cannot be evicted.
 */
/**
 * Runs `use` with a stub of the Directory object through Miniflare's RPC proxy. Miniflare lets go of the
 * object only when the proxy is garbage-collected, and till then the object cannot be evicted: callers
 * restart Miniflare before the next eviction.
 */
async function withDirectory<T>(mf: Miniflare, use: (stub: DirectoryRpc) => Promise<T>): Promise<T> {
  const namespace = await mf.getDurableObjectNamespace("DIRECTORY");
  return use(namespace.get(namespace.idFromName(DIRECTORY_NAME)) as unknown as DirectoryRpc);
}

/** The Directory object's index figures, as plain data (Miniflare answers RPC with proxies). */
export function directoryStats(mf: Miniflare): Promise<DirectoryStats> {
  return withDirectory(mf, async (stub) => JSON.parse(JSON.stringify(await stub.indexStats())) as DirectoryStats);
}

/** Publishes `cards` by Directory.publish over Miniflare's RPC proxy, `concurrency` in flight. */
export function publishThroughRpc(mf: Miniflare, cards: readonly unknown[], signedAt: number, concurrency: number): Promise<LoadResult> {
  return withDirectory(mf, (stub) =>
    runClosedLoop(cards.length, concurrency, async (i) => {
      const start = performance.now();
      const answer = await stub.publish(cards[i], signedAt);
      if (answer.ok !== true) throw new Error(`publishing card ${i} over RPC -> ${String(answer.code)}: ${String(answer.message)}`);
      return performance.now() - start;
    }),
  );
}
