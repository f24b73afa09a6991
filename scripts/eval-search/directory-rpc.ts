// The relay's Directory object reached from Node through Miniflare's RPC proxy: publish a card as the
// route does after verifying it, and read its stats. Used by relay-run.ts and the directory bench
// (bench/directory-storage.ts); covered by test/node/eval-search.e2e.test.ts.
//
// Miniflare lets go of the object only when the proxy is garbage-collected, and till then it cannot be
// evicted: an eviction must follow a restart.
import type { Miniflare } from "miniflare";
import type { AgentCard } from "../../worker/directory/card.ts";
import type { DirectoryStats } from "../../worker/directory/index-stats.ts";

/** The one Directory object's name (worker/directory/routes.ts DIRECTORY_NAME; that module needs the Workers runtime). */
export const DIRECTORY_NAME = "directory";

export interface DirectoryStub {
  publish(card: AgentCard | unknown, signedAt: number): Promise<{ ok: boolean; code?: string; message?: string }>;
  indexStats(): Promise<DirectoryStats>;
}

export async function directoryStub(mf: Miniflare): Promise<DirectoryStub> {
  const namespace = await mf.getDurableObjectNamespace("DIRECTORY");
  return namespace.get(namespace.idFromName(DIRECTORY_NAME)) as unknown as DirectoryStub;
}

/** Publishes the cards one after another, in the set's order; a refusal names the card. */
export async function publishCards(mf: Miniflare, cards: readonly AgentCard[], signedAt: number): Promise<void> {
  const stub = await directoryStub(mf);
  for (const card of cards) {
    const answer = await stub.publish(card, signedAt);
    if (answer.ok !== true) throw new Error(`the directory refused "${card.name}": ${String(answer.code)}: ${String(answer.message)}`);
  }
}

/** indexStats() as plain JSON (the proxy's answer holds RPC stubs until copied). */
export async function directoryStats(mf: Miniflare): Promise<DirectoryStats> {
  return JSON.parse(JSON.stringify(await (await directoryStub(mf)).indexStats())) as DirectoryStats;
}
