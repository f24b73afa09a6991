// Hybrid search in the Directory object with stand-in embeddings sources (hybrid-embedders.ts): found by
// meaning with no shared word, off-topic empty, lexical when the model is uncalibrated, fails or is rate
// limited (never an error to the caller), and a repeated query embedded once.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { SEARCH_RETRY_MS } from "../../../worker/directory/embeddings/card-embeddings.ts";
import type { EmbeddingSource } from "../../../worker/directory/embeddings/semantic-index.ts";
import { tokenize } from "../../../worker/directory/tokenize.ts";
import { claimInbox, relayFetch, signedFetch } from "../../support/workerd/agents.ts";
import { CARDS, failing, rateLimited, standIn } from "./hybrid-embedders.ts";

/** A fresh Directory object embedding with `source`, holding CARDS. */
async function directoryWith(source: EmbeddingSource | null) {
  const stub = env.DIRECTORY.getByName(crypto.randomUUID());
  await runInDurableObject(stub, (directory) => directory.useEmbedder(source));
  for (const card of CARDS) expect((await stub.publish(card, 1)).ok).toBe(true);
  const names = async (query: string) => (await stub.search(query, 10)).hits.map((hit) => hit.card.name);
  return { stub, names };
}

describe("directory with an embeddings model", () => {
  // Through the route, so on the relay's one Directory, which other test files publish to at the same time:
  // this test leaves its embeddings source as the project binds it (the local model behind env.AI) and
  // asserts only about its own card.
  it("finds an agent by meaning when no word matches, with the model the project binds (through the route)", async () => {
    const name = `skycast-${crypto.randomUUID().slice(0, 8)}`;
    const skills = [{ id: "forecast", name: "Weather Forecast", description: "Current conditions and a 7-day forecast for a city or coordinates", tags: ["weather", "forecast", "temperature"], examples: ["What's the weather in San Francisco?", "Will it rain in Paris tomorrow?"] }];
    const { agent } = await claimInbox();
    const res = await signedFetch(agent, "PUT", `/directory/agents/${name}`, { name, agent_id: agent.id, description: "Real-time weather forecasts for any city", skills });
    expect(res.status).toBe(201);
    const search = async (query: string) =>
      ((await (await relayFetch("/directory/search", { method: "POST", body: JSON.stringify({ query, limit: 50 }) })).json()) as { agents: { name: string; score: number; best_skill_id: string }[]; total: number });

    // No word in common with the card (the index's own terms), found by meaning: the local model's cosine ~0.6.
    const query = "will it be sunny or cloudy in Lisbon";
    const cardTerms = new Set(tokenize(JSON.stringify({ name, skills, description: "Real-time weather forecasts for any city" })));
    expect(tokenize(query).filter((term) => cardTerms.has(term))).toEqual([]);
    const byMeaning = await search(query);
    expect(byMeaning.agents.find((found) => found.name === name)).toMatchObject({ best_skill_id: "forecast" });
    const ours = byMeaning.agents.find((found) => found.name === name)!;
    expect(ours.score).toBeGreaterThan(0);
    expect(ours.score).toBeLessThanOrEqual(1);
  });

  it("answers nothing to a query no agent serves, though every agent has vectors", async () => {
    const { stub, names } = await directoryWith(standIn("test/concepts", 0.5).source);
    expect((await stub.indexStats()).embeddings).toMatchObject({ state: "ready", embedded: 3, pending: 0 });
    expect(await names("quarterly tax filing deadline")).toEqual([]);
  });

  it("ranks lexically while the model has no floor (uncalibrated), yet stores every card's vectors", async () => {
    const { source, calls } = standIn("test/uncalibrated", null);
    const { stub, names } = await directoryWith(source);
    expect(await names("umbrella needed tomorrow?")).toEqual([]);
    expect(await names("weather forecast")).toEqual(["skycast"]);
    expect((await stub.indexStats()).embeddings).toMatchObject({ model: "test/uncalibrated", floor: null, state: "uncalibrated", embedded: 3, pending: 0 });
    // Only the three cards were embedded: no query is sent to a model that cannot rank.
    expect(calls).toHaveLength(3);
  });

  for (const [kind, embed] of [["fails", failing], ["is rate limited", rateLimited]] as const) {
    it(`ranks lexically, without an error to the caller, when the model ${kind} at search time`, async () => {
      const working = standIn("test/concepts", 0.5);
      const { stub, names } = await directoryWith(working.source);
      await runInDurableObject(stub, (directory) => directory.useEmbedder(standIn("test/concepts", 0.5, embed).source));
      const logged = vi.spyOn(console, "error").mockImplementation(() => {});
      try {
        expect(await names("umbrella needed tomorrow?")).toEqual([]);
        expect(await names("weather forecast")).toEqual(["skycast"]);
        // An outage logs once, where it was, not once per search.
        expect(logged.mock.calls).toHaveLength(1);
        expect(String(logged.mock.calls[0]![0])).toMatch(/^Directory search: /);
      } finally {
        logged.mockRestore();
      }
      const { embeddings } = await stub.indexStats();
      expect(embeddings.state).toBe("ready");
      expect(embeddings.lastError).toMatch(/^search: /);
      // The same model working again: hybrid again.
      await runInDurableObject(stub, (directory) => directory.useEmbedder(working.source));
      expect(await names("umbrella needed tomorrow?")).toEqual(["skycast"]);
    });
  }

  it("asks a model that failed at search time again only after SEARCH_RETRY_MS: the searches meanwhile do not wait on it", async () => {
    const { stub, names } = await directoryWith(standIn("test/concepts", 0.5).source);
    const broken = standIn("test/concepts", 0.5, rateLimited);
    await runInDurableObject(stub, (directory) => directory.useEmbedder(broken.source));
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      expect(await names("umbrella needed tomorrow?")).toEqual([]);
      expect(await names("is a storm coming?")).toEqual([]);
      expect(await names("weather forecast")).toEqual(["skycast"]);
      expect(broken.calls).toEqual([["umbrella needed tomorrow?"]]);
      // The pause over (as SEARCH_RETRY_MS later), the next search asks again.
      await runInDurableObject(stub, (directory) => void ((directory as unknown as { semantic: { searchPausedUntil: number } }).semantic.searchPausedUntil = Date.now() - 1));
      expect(await names("is a storm coming?")).toEqual([]);
      expect(broken.calls).toHaveLength(2);
    } finally {
      logged.mockRestore();
    }
    expect(SEARCH_RETRY_MS).toBeGreaterThan(0);
  });

  it("embeds a repeated query once (query vectors cached by model and text)", async () => {
    const { source, calls } = standIn("test/concepts", 0.5);
    const { names } = await directoryWith(source);
    const before = calls.length;
    expect(await names("umbrella needed tomorrow?")).toEqual(["skycast"]);
    expect(await names("umbrella needed tomorrow?")).toEqual(["skycast"]);
    expect(await names("dinner ideas")).toEqual(["chefbot"]);
    expect(calls.slice(before)).toEqual([["umbrella needed tomorrow?"], ["dinner ideas"]]);
  });

  it("sends a query without a letter or digit to no model (a Workers AI request for no meaning) and answers it nothing", async () => {
    const { source, calls } = standIn("test/concepts", 0.5);
    const { names } = await directoryWith(source);
    const before = calls.length;
    for (const query of ["", "   ", "?!", "…"]) expect(await names(query)).toEqual([]);
    expect(calls.slice(before)).toEqual([]);
  });

  it("ranks lexically with no embeddings source at all (state off, nothing pending)", async () => {
    const { stub, names } = await directoryWith(null);
    expect(await names("umbrella needed tomorrow?")).toEqual([]);
    expect((await stub.indexStats()).embeddings).toEqual({ model: null, floor: null, state: "off", cards: 3, embedded: 0, pending: 0, failed: 0, lastFailure: null, vectorBytes: 0, lastError: null });
  });
});
