// The Directory's cards still to embed: a publish the model failed leaves its card pending, the alarm
// embeds pending cards in bounded batches (and waits after a failure), a model change makes every card
// pending, vectors from before this format are embedded again, and past the memory cap search is lexical.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CardEmbeddings } from "../../../worker/directory/embeddings/card-embeddings.ts";
import { CARD_OVERHEAD_BYTES } from "../../../worker/directory/embeddings/semantic-index.ts";
import { EMBED_RETRY } from "../../../worker/directory/embeddings/embed-calls.ts";
import { EMBED_BATCH, takeBatch } from "../../../worker/directory/embeddings/embed-queue.ts";
import type { EmbeddingSource } from "../../../worker/directory/embeddings/semantic-index.ts";
import { CARDS, card, failing, gated, standIn, statsWhen } from "./hybrid-embedders.ts";
import type { DirectoryStub } from "./hybrid-embedders.ts";

async function freshDirectory(source: EmbeddingSource | null): Promise<DirectoryStub> {
  const stub = env.DIRECTORY.getByName(crypto.randomUUID());
  await runInDurableObject(stub, (directory) => directory.useEmbedder(source));
  return stub;
}

const names = async (stub: DirectoryStub, query: string) => (await stub.search(query, 10)).hits.map((hit) => hit.card.name);

const embedPending = (stub: DirectoryStub) => statsWhen(stub, (stats) => stats.pending === 0);

describe("cards still to embed", () => {
  it("leaves a card whose publish the model failed pending (search lexical), and the alarm embeds it: hybrid again", async () => {
    const working = standIn("test/concepts", 0.5);
    const stub = await freshDirectory(standIn("test/concepts", 0.5, failing).source);
    for (const c of CARDS) expect((await stub.publish(c, 1)).ok).toBe(true);
    expect((await stub.indexStats()).embeddings).toMatchObject({ state: "embedding", embedded: 0, pending: 3 });
    // The publish failed, and perhaps already the alarm the runtime ran by itself.
    expect((await stub.indexStats()).embeddings.lastError).toMatch(/^(publish|alarm): /);
    expect(await names(stub, "umbrella needed tomorrow?")).toEqual([]);
    await runInDurableObject(stub, (directory) => directory.useEmbedder(working.source));
    await embedPending(stub);
    // One call for the three cards.
    expect(working.calls).toHaveLength(1);
    expect((await stub.indexStats()).embeddings).toMatchObject({ state: "ready", embedded: 3, pending: 0 });
    expect(await names(stub, "umbrella needed tomorrow?")).toEqual(["skycast"]);
  });

  it("after a model change re-embeds every card in the background, ranking lexically meanwhile", async () => {
    const stub = await freshDirectory(standIn("test/model-a", 0.5).source);
    for (const c of CARDS) expect((await stub.publish(c, 1)).ok).toBe(true);
    expect(await names(stub, "umbrella needed tomorrow?")).toEqual(["skycast"]);
    const gate = gated();
    const modelB = standIn("test/model-b", 0.5, gate.embed);
    await runInDurableObject(stub, (directory) => directory.useEmbedder(modelB.source));
    expect((await stub.indexStats()).embeddings).toMatchObject({ model: "test/model-b", state: "embedding", embedded: 0, pending: 3 });
    expect(await names(stub, "umbrella needed tomorrow?")).toEqual([]);
    expect(await names(stub, "weather forecast")).toEqual(["skycast"]);
    gate.open();
    await embedPending(stub);
    expect(modelB.calls.flat()).toHaveLength(3);
    expect(await names(stub, "umbrella needed tomorrow?")).toEqual(["skycast"]);
  });

  it("waits EMBED_RETRY.firstMs after the model failed in the alarm, keeping the cards pending", async () => {
    const stub = await freshDirectory(standIn("test/concepts", 0.5, failing).source);
    const before = Date.now();
    expect((await stub.publish(CARDS[0]!, 1)).ok).toBe(true);
    const embeddings = await statsWhen(stub, (stats) => stats.lastError?.startsWith("alarm: ") === true);
    expect(embeddings).toMatchObject({ state: "embedding", pending: 1 });
    const alarm = await runInDurableObject(stub, (_directory, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(before + EMBED_RETRY.firstMs);
  });

  it(`embeds at most ${EMBED_BATCH.cards} cards per alarm run, and a card republished unchanged is not embedded again`, async () => {
    const many = Array.from({ length: 40 }, (_, i) => card(`agent-${i}`, "forecast", `Weather forecast number ${i}`));
    const stub = await freshDirectory(null);
    for (const c of many) expect((await stub.publish(c, 1)).ok).toBe(true);
    const { source, calls } = standIn("test/concepts", 0.5);
    await runInDurableObject(stub, (directory) => directory.useEmbedder(source));
    await embedPending(stub);
    expect(calls.map((texts) => texts.length)).toEqual([32, 8]);
    expect((await stub.publish(many[0]!, 2)).ok).toBe(true);
    expect(calls).toHaveLength(2);
  });

  it("takes cards into a batch up to the text limit, always at least one", () => {
    const skills = (n: number) => ({ ...card(`s${n}`, "x", "y"), skills: Array.from({ length: n }, (_, i) => ({ id: `k${i}`, name: `k${i}`, description: "", tags: [], examples: [] })) });
    expect(takeBatch([skills(32), skills(32), skills(32), skills(1)]).cards).toHaveLength(3);
    expect(takeBatch([skills(32), skills(32), skills(33)]).texts).toHaveLength(64);
    expect(takeBatch([skills(40)], 32, 10).cards).toHaveLength(1);
  });

  it("treats vectors stored as JSON before vectors carried their model as pending, and embeds those cards again", async () => {
    const stub = await freshDirectory(null);
    expect((await stub.publish(CARDS[0]!, 1)).ok).toBe(true);
    await runInDurableObject(stub, (directory, state) => {
      state.storage.sql.exec(`DROP TABLE IF EXISTS skill_vectors`);
      state.storage.sql.exec(`DROP TABLE IF EXISTS vector_meta`);
      state.storage.sql.exec(`CREATE TABLE vectors (name TEXT PRIMARY KEY, json TEXT NOT NULL)`);
      state.storage.sql.exec(`INSERT INTO vectors (name, json) VALUES (?, ?)`, CARDS[0]!.name, JSON.stringify([[0.1, 0.2]]));
      // The object as a new deploy starts it: the semantic half opens on first use.
      (directory as unknown as { semantic: null }).semantic = null;
      directory.useEmbedder(standIn("test/concepts", 0.5).source);
    });
    expect((await stub.indexStats()).embeddings).toMatchObject({ state: "embedding", pending: 1 });
    await embedPending(stub);
    expect(await names(stub, "umbrella needed tomorrow?")).toEqual(["skycast"]);
    const tables = await runInDurableObject(stub, (_d, state) => state.storage.sql.exec(`SELECT name FROM sqlite_master WHERE name = 'vectors'`).toArray());
    expect(tables).toEqual([]);
  });

  it("regression: a card released on an object whose semantic half was not open yet is counted out once (nothing left pending)", async () => {
    const stub = await freshDirectory(standIn("test/concepts", 0.5).source);
    for (const c of CARDS) expect((await stub.publish(c, 1)).ok).toBe(true);
    await runInDurableObject(stub, (directory) => void ((directory as unknown as { semantic: null }).semantic = null));
    expect((await stub.release(CARDS[0]!.name, CARDS[0]!.agent_id)).ok).toBe(true);
    expect((await stub.indexStats()).embeddings).toMatchObject({ state: "ready", cards: 2, embedded: 2, pending: 0 });
    expect(await names(stub, "dinner ideas")).toEqual(["chefbot"]);
  });

  it("ranks lexically past the memory cap (over_capacity) and keeps the vectors stored", async () => {
    const stub = await freshDirectory(null);
    for (const c of CARDS) expect((await stub.publish(c, 1)).ok).toBe(true);
    const { source } = standIn("test/concepts", 0.5);
    await runInDurableObject(stub, async (_directory, state) => {
      // Three cards of one 4-dimension vector: 4 bytes, a 4-byte norm and the per-card overhead each.
      const perCard = 8 + CARD_OVERHEAD_BYTES;
      const embeddings = new CardEmbeddings(state.storage, source, 3 * perCard - 1);
      expect(await embeddings.embedPendingBatch()).toBe("done");
      expect(embeddings.stats()).toMatchObject({ state: "over_capacity", embedded: 3, pending: 0, vectorBytes: 3 * perCard });
      expect(await embeddings.closest("umbrella needed tomorrow?")).toBeNull();
      expect((await new CardEmbeddings(state.storage, source, 3 * perCard).closest("umbrella needed tomorrow?"))?.closest.has("skycast")).toBe(true);
    });
  });

  it("embeds again a card whose stored bytes are not whole vectors, never misreading them", async () => {
    const stub = await freshDirectory(standIn("test/concepts", 0.5).source);
    for (const c of CARDS) expect((await stub.publish(c, 1)).ok).toBe(true);
    await runInDurableObject(stub, (directory, state) => {
      state.storage.sql.exec(`UPDATE skill_vectors SET data = ? WHERE name = ?`, new Uint8Array([1, 2, 3]).buffer, "skycast");
      (directory as unknown as { semantic: null }).semantic = null;
    });
    // The broken row is found as the vectors load for a search; its card becomes pending.
    expect(await names(stub, "umbrella needed tomorrow?")).toEqual([]);
    expect((await stub.indexStats()).embeddings).toMatchObject({ state: "embedding", pending: 1 });
    await embedPending(stub);
    expect(await names(stub, "umbrella needed tomorrow?")).toEqual(["skycast"]);
  });
});
