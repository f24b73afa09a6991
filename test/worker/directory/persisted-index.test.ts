// The persisted search index (worker/directory/index-store.ts): after a restart it answers exactly as
// an index built afresh from the same cards (hits, scores, best skills, totals), changes made after a
// commit survive a restart, a corrupt or old-format index is rebuilt (never read wrongly), and a
// publish writes a few rows. Each test works in a fresh Directory object's SQLite; "a restart" is a
// new StoredIndex over the same storage, or a real eviction of the object.
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { StoredIndex } from "../../../worker/directory/index-store.ts";
import type { StoreOptions } from "../../../worker/directory/index-store.ts";
import { SearchIndex } from "../../../worker/directory/search-index.ts";
import type { AgentCard } from "../../../worker/directory/card.ts";
import type { SearchResult } from "../../../worker/directory/search-index.ts";

const WORDS = [
  "weather", "forecast", "rain", "storm", "translate", "language", "spanish", "code", "review", "python", "calendar",
  "meeting", "email", "draft", "invoice", "tax", "stock", "price", "travel", "flight", "hotel", "recipe", "meal",
  "legal", "contract", "image", "logo", "video", "summary", "report", "data", "api", "search", "voice", "map",
  "route", "health", "doctor", "quiz", "math", "天气预报", "翻訳", "café", "données",
];

/** Cards drawn from WORDS with a fixed seed: common words match thousands of skills, as in a real directory. */
function syntheticCards(count: number, seed: number, prefix = "agent"): AgentCard[] {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const word = () => WORDS[Math.floor(random() ** 2 * WORDS.length)]!;
  const words = (lo: number, hi: number) => Array.from({ length: lo + Math.floor(random() * (hi - lo + 1)) }, word).join(" ");
  return Array.from({ length: count }, (_, i) => ({
    name: `${prefix}-${i}`,
    agent_id: `ag_${(seed * 100_000 + i).toString(16).padStart(12, "0")}`,
    description: words(3, 12),
    // One card in twenty has no skills: it ranks as one unit of its own.
    skills: random() < 0.05 ? [] : Array.from({ length: 1 + Math.floor(random() * 4) }, (_, j) => ({
      id: `skill-${j}`,
      name: words(1, 3),
      description: words(0, 15),
      tags: Array.from({ length: Math.floor(random() * 3) }, word),
      examples: Array.from({ length: Math.floor(random() * 2) }, () => words(3, 6)),
    })),
  }));
}

const QUERIES = [
  ...Array.from({ length: 60 }, (_, i) => [WORDS[i % WORDS.length]!, WORDS[(i * 7) % WORDS.length]!, WORDS[(i * 13) % WORDS.length]!].slice(0, 1 + (i % 3)).join(" ")),
  "weather forecast zyxqwv", "zyxqwv", "", "the of and", "agent 17", "天气", "cafe données",
  // Typos: found only by the fallback, which must respell alike from the persisted and the recent terms.
  "wether forcast", "calender", "transalte zyxqwv", "invoise", "天", "報",
  // Common words with others that match nothing: set aside by the off-topic guard, kept apart for hybrid search.
  "the price of a good book zyxqwv lorem", "data for my work place zyxqwv", "report the month's count zyxqwv ipsum",
];

/** A directory's cards table and its index, kept as the Directory object keeps them, beside an in-memory reference. */
class Harness {
  readonly reference = new SearchIndex();
  readonly storage: DurableObjectStorage;
  readonly options: StoreOptions;
  store: StoredIndex;

  constructor(storage: DurableObjectStorage, options: StoreOptions = {}) {
    this.storage = storage;
    this.options = options;
    this.store = new StoredIndex(storage, options);
  }

  publish(card: AgentCard): void {
    this.storage.sql.exec(`INSERT OR REPLACE INTO cards (name, agent_id, card, signed_at) VALUES (?, ?, ?, 0)`, card.name, card.agent_id, JSON.stringify(card));
    this.store.upsert(card);
    this.reference.upsert(card);
  }

  release(name: string): void {
    this.storage.sql.exec(`DELETE FROM cards WHERE name = ?`, name);
    this.store.remove(name);
    this.reference.remove(name);
  }

  /** A new StoredIndex over the same storage, as a restarted object opens it. */
  restart(): StoredIndex {
    this.store = new StoredIndex(this.storage, this.options);
    return this.store;
  }

  expectSameAnswers(): void {
    const list = (hits: SearchResult["hits"]) => hits.map((hit) => [hit.card, hit.score, hit.best_skill_id]);
    const view = ({ hits, total, weak }: SearchResult) => ({ total, hits: list(hits), weak: weak && list(weak) });
    for (const query of QUERIES) {
      for (const limit of [1, 10, 50]) expect(view(this.store.find(query, limit)), `"${query}", limit ${limit}`).toEqual(view(this.reference.find(query, limit)));
      // The hits the off-topic guard set aside (hybrid search asks for them) agree too.
      expect(view(this.store.find(query, 10, true)), `"${query}", with the weak hits`).toEqual(view(this.reference.find(query, 10, true)));
    }
  }
}

/** Runs `test` in the SQLite of a fresh Directory object. */
function inFreshDirectory<R>(test: (storage: DurableObjectStorage) => R | Promise<R>): Promise<R> {
  return runInDurableObject(env.DIRECTORY.getByName(crypto.randomUUID()), (_, state) => test(state.storage));
}

/**
 * The reasons the store gave in its "rebuilding from the cards" warnings from here to the end of the test,
 * which they are asserted by (and so not printed).
 */
function rebuildWarnings(): () => string[] {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  onTestFinished(() => warn.mockRestore());
  return () => warn.mock.calls.map((args) => /^Directory search index: rebuilding from the cards \((.*)\)$/.exec(String(args[0]))?.[1] ?? `(another warning) ${String(args[0])}`);
}

describe("the persisted index after a restart", () => {
  it("answers exactly as a full rebuild: committed chunks, a chunk boundary, replayed changes", async () => {
    await inFreshDirectory((storage) => {
      const harness = new Harness(storage, { compactAt: 500 });
      // ~17,500 units: past the first chunk of 16,384 ids, over several commits.
      const cards = syntheticCards(7000, 1);
      for (const card of cards) harness.publish(card);
      for (const card of syntheticCards(300, 2).map((card, i) => ({ ...card, name: `agent-${i * 11}`, agent_id: cards[i * 11]!.agent_id }))) harness.publish(card);
      for (let i = 5; i < 7000; i += 97) harness.release(`agent-${i}`);
      const before = harness.store.stats();
      expect(before.commits).toBeGreaterThan(10);
      expect(before.pending).toBeGreaterThan(0);
      expect(before.units.base).toBeGreaterThan(16_384);
      harness.expectSameAnswers();

      const restarted = harness.restart();
      expect(restarted.stats()).toMatchObject({ opened: "loaded", rebuilds: 0, cards: harness.reference.size, pending: before.pending, units: { live: before.units.live, base: before.units.base } });
      harness.expectSameAnswers();
      // Only the blocks of the query terms (WORDS, and the dozen words of the queries beyond them) and of the typo fallback's few candidates were read.
      expect(restarted.stats().cache.terms).toBeLessThan(WORDS.length + 32);
    });
  });

  it("reflects updates and removals made after a commit, and after the next", async () => {
    await inFreshDirectory((storage) => {
      const harness = new Harness(storage, { compactAt: 10 });
      for (const card of syntheticCards(40, 3)) harness.publish(card);
      const word = (text: string) => ({ name: `agent-${text}`, agent_id: "ag_00000000abcd", description: `${text} ${text}`, skills: [{ id: `${text}-skill`, name: "Origami folding", description: "Paper cranes", tags: [], examples: [] }] });
      harness.publish(word("zebra"));
      harness.restart();
      const update = { ...harness.store.find("zebra", 1).hits[0]!.card, description: "kites and wind", skills: [] };
      harness.publish(update);
      harness.release("agent-3");
      harness.publish({ ...syntheticCards(1, 9)[0]!, name: "agent-7", agent_id: "ag_000000000007" });
      harness.restart();
      // The name still says "zebra"; the skill it had is gone.
      expect(harness.store.find("zebra", 10).hits.map((hit) => [hit.card.name, hit.best_skill_id])).toEqual([["agent-zebra", null]]);
      expect(harness.store.find("kites", 10).hits.map((hit) => [hit.card.name, hit.best_skill_id])).toEqual([["agent-zebra", null]]);
      expect(harness.store.find("origami", 10).hits).toEqual([]);
      expect(harness.store.find("agent 3", 50).hits.map((hit) => hit.card.name)).not.toContain("agent-3");
      harness.expectSameAnswers();
      // Three cards are pending (zebra, 3, 7); seven more make a commit, which takes in what was replayed.
      expect(harness.store.stats().pending).toBe(3);
      for (const card of syntheticCards(10, 4, "later")) harness.publish(card);
      expect(harness.store.stats()).toMatchObject({ commits: 1, pending: 3 });
      harness.restart();
      expect(harness.store.stats()).toMatchObject({ opened: "loaded", pending: 3 });
      harness.expectSameAnswers();
    });
  });

  it("renumbers by a rebuild once replaced cards leave too many dead ids", async () => {
    const warned = rebuildWarnings();
    await inFreshDirectory((storage) => {
      const harness = new Harness(storage, { compactAt: 5, spareIds: 20 });
      const cards = syntheticCards(30, 5);
      for (let round = 0; round < 6; round++) for (const card of cards) harness.publish({ ...card, description: `${card.description} round${round}` });
      const stats = harness.store.stats();
      expect(stats.rebuilds).toBeGreaterThan(0);
      // The first build had no index to distrust; each renumbering says why.
      expect(warned()).toHaveLength(stats.rebuilds - 1);
      for (const reason of warned()) expect(reason).toMatch(/^\d+ dead unit ids$/);
      expect(stats.units.ids).toBeLessThanOrEqual(2 * stats.units.live + 20 + 4 * 5);
      harness.expectSameAnswers();
      harness.restart();
      harness.expectSameAnswers();
    });
  });
});

describe("a persisted index that cannot be trusted is rebuilt", () => {
  const corruptions: [string, string[]][] = [
    ["an older format", [`UPDATE search_meta SET json = '{"format":0,"units":1,"agents":1}'`]],
    ["a directory from before the persisted index", ["DROP TABLE search_meta", "DROP TABLE search_units", "DROP TABLE search_blocks", "DROP TABLE search_agents", "DROP TABLE search_pending"]],
    ["a truncated unit chunk", [`UPDATE search_units SET agent = x'0000' WHERE chunk = 0`]],
    ["unit rows that do not add up", [`UPDATE search_units SET agent = zeroblob(65536) WHERE chunk = 0`]],
    ["a missing name row", [`DELETE FROM search_agents WHERE row = 0`]],
    ["meta that is not JSON", [`UPDATE search_meta SET json = 'garbage'`]],
    ["a card removed behind the index's back", [`DELETE FROM cards WHERE name = 'agent-1'`]],
  ];

  it.each(corruptions)("on start-up: %s", async (what, statements) => {
    const warned = rebuildWarnings();
    await inFreshDirectory((storage) => {
      const harness = new Harness(storage, { compactAt: 50 });
      for (const card of syntheticCards(400, 6)) harness.publish(card);
      for (const statement of statements) storage.sql.exec(statement);
      if (statements.some((s) => s.includes("FROM cards"))) harness.reference.remove("agent-1");
      const restarted = harness.restart();
      expect(restarted.stats().opened).toMatch(/^rebuilt: /);
      // Said once, with why; a directory that never had an index is built without a warning.
      expect(warned()).toEqual(what === "a directory from before the persisted index" ? [] : [restarted.stats().opened.slice("rebuilt: ".length)]);
      harness.expectSameAnswers();
      expect(harness.restart().stats().opened).toBe("loaded");
      harness.expectSameAnswers();
    });
  });

  const lazy: [string, string][] = [
    ["a block whose entries were cut short", `UPDATE search_blocks SET ids = substr(ids, 1, 4)`],
    ["a block header that is not JSON", `UPDATE search_blocks SET terms = '[[' `],
    ["a missing block", `DELETE FROM search_blocks WHERE id = (SELECT MAX(id) FROM search_blocks)`],
    ["a block with zero frequencies", `UPDATE search_blocks SET tfs = zeroblob(length(tfs))`],
  ];

  it.each(lazy)("on the search that reads it: %s", async (_, statement) => {
    const warned = rebuildWarnings();
    await inFreshDirectory((storage) => {
      const harness = new Harness(storage, { compactAt: 50 });
      for (const card of syntheticCards(400, 7)) harness.publish(card);
      storage.sql.exec(statement);
      expect(harness.restart().stats().opened).toBe("loaded");
      harness.expectSameAnswers();
      expect(harness.store.stats().rebuilds).toBe(1);
      expect(warned()).toHaveLength(1);
    });
  });
});

describe("the Directory object with its persisted index", () => {
  it("answers the same after an eviction, re-indexes nothing for an unchanged card, and writes few rows per publish", async () => {
    const stub = env.DIRECTORY.getByName(crypto.randomUUID());
    const cards = syntheticCards(1200, 8);
    const reference = new SearchIndex();
    for (const card of cards) reference.upsert(card);
    const rows = await runInDurableObject(stub, async (directory) => {
      // The lexical index alone: the project's AI binding (the local model) would embed 1,200 cards.
      directory.useEmbedder(null);
      for (const card of cards) expect((await directory.publish(card, 1)).ok).toBe(true);
      return directory.indexStats();
    });
    // One commit at 1,000 changed cards; 200 replayed at the next start.
    expect(rows).toMatchObject({ commits: 1, pending: 200, cards: 1200 });
    const indexRows = rows.rowsWritten / cards.length;
    const cardRows = rows.cardRowsWritten / cards.length;
    expect(indexRows).toBeLessThan(3);

    const view = ({ hits, total }: SearchResult) => ({ total, hits: hits.map((hit) => [hit.card.name, hit.score, hit.best_skill_id]) });
    const answers = await runInDurableObject(stub, async (directory) => Promise.all(QUERIES.map(async (query) => view(await directory.search(query, 10)))));
    expect(answers).toEqual(QUERIES.map((query) => view(reference.find(query, 10))));
    await evictDurableObject(stub);
    const after = await runInDurableObject(stub, async (directory) => ({
      answers: await Promise.all(QUERIES.map(async (query) => view(await directory.search(query, 10)))),
      stats: await directory.indexStats(),
    }));
    expect(after.answers).toEqual(answers);
    expect(after.stats).toMatchObject({ opened: "loaded", rebuilds: 0, pending: 200 });

    const again = await runInDurableObject(stub, async (directory) => {
      directory.useEmbedder(null);
      const before = await directory.indexStats();
      expect(await directory.publish(cards[0]!, 2)).toEqual({ ok: true, value: { created: false } });
      const stats = await directory.indexStats();
      return { index: stats.rowsWritten - before.rowsWritten, cards: stats.cardRowsWritten - before.cardRowsWritten, pending: stats.pending };
    });
    expect(again).toEqual({ index: 0, cards: 1, pending: 200 });
  });
});

describe("the typo fallback over the persisted index", () => {
  it("respells as the in-memory index does: from persisted terms, recent ones, and never into a removed card's", async () => {
    await inFreshDirectory((storage) => {
      const harness = new Harness(storage, { compactAt: 10 });
      for (const card of syntheticCards(40, 4)) harness.publish(card);
      const only = (word: string): AgentCard => ({ name: `agent-${word}`, agent_id: "ag_00000000beef", description: "", skills: [{ id: word, name: word, description: "", tags: [], examples: [] }] });
      harness.publish(only("zeppelin"));
      for (const card of syntheticCards(10, 5, "more")) harness.publish(card);
      expect(harness.store.stats().pending).toBeLessThan(10);
      harness.restart();
      const found = (query: string) => harness.store.find(query, 5).hits.map((hit) => hit.card.name);
      expect(found("zepelin")).toEqual(["agent-zeppelin"]);
      // Dead in the persisted blocks: its term is still listed there, with no live unit.
      harness.release("agent-zeppelin");
      expect(found("zepelin")).toEqual([]);
      // Recent, then persisted by the next commit, after the persisted terms were read.
      harness.publish(only("quokka"));
      expect(found("qokka")).toEqual(["agent-quokka"]);
      for (const card of syntheticCards(10, 6, "last")) harness.publish(card);
      expect(harness.store.stats().commits).toBeGreaterThan(0);
      expect(found("qokka")).toEqual(["agent-quokka"]);
      harness.expectSameAnswers();
      expect(harness.reference.search("zepelin", 5)).toEqual([]);
    });
  });
});
