// The Directory's semantic half when Workers AI fails: a card the model refuses alone is set aside (the
// rest embedded, search hybrid) and tried again later; an outage sets nothing aside and waits longer each
// time; a call that never answers counts as a failure after its deadline (search lexical, card pending).
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { EMBED_RETRY, PROBE_TEXT } from "../../../worker/directory/embeddings/embed-calls.ts";
import type { EmbedDeadlines } from "../../../worker/directory/embeddings/embed-calls.ts";
import type { Embedder, EmbeddingSource } from "../../../worker/directory/embeddings/semantic-index.ts";
import { CARDS, card, conceptVectors, standIn, statsWhen } from "./hybrid-embedders.ts";
import type { DirectoryStub } from "./hybrid-embedders.ts";

const POISON = card("toolong", "essay", "An essay the model refuses POISON");
/** Refuses any call holding the poison card's text, as Workers AI refuses a text too long for the model. */
const refusesPoison: Embedder = async (texts) => {
  if (texts.some((text) => text.includes("POISON"))) throw new Error("3010: Invalid or incomplete input for the model");
  return conceptVectors(texts);
};
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

describe("a card the model refuses", () => {
  it("regression: one refused card no longer holds up its batch and every search: it is set aside, the rest embedded, search hybrid", async () => {
    const logged = quietly();
    try {
      const { source, calls } = standIn("test/concepts", 0.5, refusesPoison);
      const stub = await directoryHolding([...CARDS, POISON], source);
      const embeddings = await statsWhen(stub, (stats) => stats.pending === 0);
      expect(embeddings).toMatchObject({ state: "ready", embedded: 3, failed: 1, pending: 0 });
      expect(embeddings.lastFailure).toMatch(/^toolong: 3010: Invalid or incomplete input/);
      // The batch, then each card alone; after the refused one, a probe that answered.
      expect(calls[0]).toHaveLength(4);
      expect(calls).toContainEqual([PROBE_TEXT]);
      expect(await names(stub, "umbrella needed tomorrow?")).toEqual(["skycast"]);
      // The card set aside is found by its words.
      expect(await names(stub, "essay")).toEqual(["toolong"]);
    } finally {
      logged.mockRestore();
    }
  });

  it("tries a set-aside card again when republished with changes, after a day, and under another model", async () => {
    const logged = quietly();
    try {
      let refusing = true;
      const model = standIn("test/concepts", 0.5, async (texts) => (refusing ? refusesPoison(texts) : conceptVectors(texts)));
      const stub = await directoryHolding([CARDS[0]!, POISON], model.source);
      await statsWhen(stub, (stats) => stats.failed === 1);
      // Republished unchanged (every agent start): not tried again.
      const calls = model.calls.length;
      expect((await stub.publish(POISON, 2)).ok).toBe(true);
      expect(model.calls).toHaveLength(calls);
      expect((await stub.indexStats()).embeddings).toMatchObject({ failed: 1, pending: 0 });
      // Republished with changes (still refused): pending again, then set aside again.
      expect((await stub.publish({ ...POISON, description: `${POISON.description}, longer` }, 3)).ok).toBe(true);
      expect((await stub.indexStats()).embeddings).toMatchObject({ failed: 0, pending: 1 });
      await statsWhen(stub, (stats) => stats.failed === 1 && stats.pending === 0);
      // Under another model it is pending again.
      await runInDurableObject(stub, (directory) => directory.useEmbedder(standIn("test/other", 0.5, refusesPoison).source));
      expect((await stub.indexStats()).embeddings).toMatchObject({ failed: 0, pending: 2 });
      await runInDurableObject(stub, (directory) => directory.useEmbedder(model.source));
      // A day after it was set aside, the alarm tries it again; the model now takes it.
      refusing = false;
      await runInDurableObject(stub, (_d, state) => state.storage.sql.exec(`UPDATE set_aside_cards SET failed_at = failed_at - ?`, EMBED_RETRY.setAsideMs));
      const alarm = await runInDurableObject(stub, (_d, state) => state.storage.getAlarm());
      expect(alarm).not.toBeNull();
      const embeddings = await statsWhen(stub, (stats) => stats.failed === 0);
      expect(embeddings).toMatchObject({ embedded: 2, pending: 0, lastFailure: null });
    } finally {
      logged.mockRestore();
    }
  });
});

describe("an outage", () => {
  it("sets nothing aside when every call fails, the one-by-one tries' first included, and waits longer each time until a call works", async () => {
    const logged = quietly();
    try {
      let down = true;
      const model = standIn("test/concepts", 0.5, async (texts) => {
        if (down) throw new Error("3040: capacity temporarily exceeded, rate limited");
        return conceptVectors(texts);
      });
      const stub = await directoryHolding(CARDS, model.source);
      model.calls.length = 0;
      const before = Date.now();
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      // The batch, the first card alone, the probe: then the run stops.
      expect(model.calls.map((texts) => texts.length)).toEqual([3, 1, 1]);
      expect((await stub.indexStats()).embeddings).toMatchObject({ state: "embedding", failed: 0, pending: 3 });
      expect(await runInDurableObject(stub, (_d, state) => state.storage.getAlarm())).toBeGreaterThanOrEqual(before + EMBED_RETRY.firstMs);
      const second = Date.now();
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      expect(await runInDurableObject(stub, (_d, state) => state.storage.getAlarm())).toBeGreaterThanOrEqual(second + 2 * EMBED_RETRY.firstMs);
      down = false;
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      expect((await stub.indexStats()).embeddings).toMatchObject({ state: "ready", failed: 0, pending: 0 });
      const delay = await runInDurableObject(stub, (directory) => (directory as unknown as { semantic: { retryDelayMs: number } }).semantic.retryDelayMs);
      expect(delay).toBe(EMBED_RETRY.firstMs);
      expect(await names(stub, "umbrella needed tomorrow?")).toEqual(["skycast"]);
    } finally {
      logged.mockRestore();
    }
  });
});

describe("a call that never answers", () => {
  it("leaves a publish's card pending after the deadline, and the alarm keeps it pending (an outage)", async () => {
    const logged = quietly();
    try {
      const stub = await directoryHolding([], standIn("test/concepts", 0.5, hangs).source, SHORT);
      expect((await stub.publish(CARDS[0]!, 1)).ok).toBe(true);
      expect((await stub.indexStats()).embeddings).toMatchObject({ state: "embedding", embedded: 0, pending: 1 });
      expect((await stub.indexStats()).embeddings.lastError).toMatch(/did not answer/);
      const embeddings = await statsWhen(stub, (stats) => stats.lastError?.startsWith("alarm: ") === true);
      expect(embeddings).toMatchObject({ failed: 0, pending: 1 });
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
