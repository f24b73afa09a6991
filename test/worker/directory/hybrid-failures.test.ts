// The Directory's semantic half when Workers AI fails: a call that never answers counts as a failure after
// its deadline (search lexical, card pending).
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { EmbedDeadlines } from "../../../worker/directory/embed-calls.ts";
import type { Embedder, EmbeddingSource } from "../../../worker/directory/semantic-index.ts";
import { CARDS, standIn, statsWhen } from "./hybrid-embedders.ts";
import type { DirectoryStub } from "./hybrid-embedders.ts";

const hangs: Embedder = () => new Promise<Float32Array[]>(() => {});
const SHORT: EmbedDeadlines = { search: 20, card: 20 };

async function directoryHolding(cards: typeof CARDS, source: EmbeddingSource, deadlines?: EmbedDeadlines): Promise<DirectoryStub> {
  const stub = env.DIRECTORY.getByName(crypto.randomUUID());
  await runInDurableObject(stub, (directory) => directory.useEmbedder(null));
  for (const c of cards) expect((await stub.publish(c, 1)).ok).toBe(true);
  await runInDurableObject(stub, (directory) => directory.useEmbedder(source, deadlines));
  // A look at the figures sets the alarm for the cards now pending.
  await stub.indexStats();
  return stub;
}

const names = async (stub: DirectoryStub, query: string) => (await stub.search(query, 10)).hits.map((hit) => hit.card.name);
const quietly = () => vi.spyOn(console, "error").mockImplementation(() => {});

describe("a call that never answers", () => {
  it("leaves a publish's card pending after the deadline, and the alarm keeps it pending (an outage)", async () => {
    const logged = quietly();
    try {
      const stub = await directoryHolding([], standIn("test/concepts", 0.5, hangs).source, SHORT);
      expect((await stub.publish(CARDS[0]!, 1)).ok).toBe(true);
      expect((await stub.indexStats()).embeddings).toMatchObject({ state: "embedding", embedded: 0, pending: 1 });
      expect((await stub.indexStats()).embeddings.lastError).toMatch(/did not answer/);
      const embeddings = await statsWhen(stub, (stats) => stats.lastError?.startsWith("alarm: ") === true);
      expect(embeddings).toMatchObject({ pending: 1 });
      expect(await names(stub, "weather forecast")).toEqual(["skycast"]);
    } finally {
      logged.mockRestore();
    }
  });

  it("ranks a search lexically after the deadline, without an error", async () => {
    const stub = await directoryHolding(CARDS, standIn("test/concepts", 0.5).source);
    await statsWhen(stub, (stats) => stats.pending === 0);
    await runInDurableObject(stub, (directory) => directory.useEmbedder(standIn("test/concepts", 0.5, hangs).source, SHORT));
    const logged = quietly();
    try {
      expect(await names(stub, "umbrella needed tomorrow?")).toEqual([]);
      expect(await names(stub, "weather forecast")).toEqual(["skycast"]);
      expect((await stub.indexStats()).embeddings).toMatchObject({ state: "ready", lastError: expect.stringMatching(/^search: .*did not answer/) });
    } finally {
      logged.mockRestore();
    }
  });
});
