// The off-topic guard of the directory's search (worker/directory/search-scratch.ts, common-words.ts): a
// query that shares only common words with a card, and fewer than half of its words, finds nothing;
// plain queries that name what an agent does are still found, first.
import { describe, expect, it } from "vitest";
import { COMMON_TERMS, isCommonTerm } from "../../../worker/directory/common-words.ts";
import { SearchIndex } from "../../../worker/directory/search-index.ts";
import type { AgentCard } from "../../../worker/directory/card.ts";
import { agent, skill } from "../../support/workerd/directory-cards.ts";
import { stem } from "../../../worker/directory/tokenize.ts";


// Each card carries common words ("table", "file", "pattern", "world", "place", "count") beside the words that say what it does.
const CARDS: AgentCard[] = [
  agent("harbour-tides", "Tide tables for harbours", [
    skill("tides", "Tide Table", "High and low water times for a harbour", ["tide", "harbour"], ["When is high tide at Dover?"]),
  ]),
  agent("sky-report", "Weather for any place in the world", [
    skill("forecast", "Weather Forecast", "Forecast for a city: rain, wind and temperature", ["weather", "forecast"], ["Weather in Lyon tomorrow"]),
  ]),
  agent("grep-buddy", "Searches log files for a pattern", [
    skill("search-logs", "Log Search", "Find lines matching a pattern in server log files", ["logs", "grep"], ["Find errors in nginx logs"]),
  ]),
  agent("stitch-counter", "Row counter for crochet", [
    skill("rows", "Crochet Rows", "Count rows and stitches of a crochet project", ["crochet", "stitches"]),
  ]),
  agent("receipt-keeper", "Keeps track of expenses", [
    skill("expenses", "Expense Tracking", "Log receipts and expenses every month", ["receipts", "expenses"], ["Log this taxi receipt"]),
  ]),
];

function index(): SearchIndex {
  const built = new SearchIndex();
  for (const card of CARDS) built.upsert(card);
  return built;
}

describe("a query sharing only common words with a card finds nothing", () => {
  const search = index();
  it.each([
    ["book a table for two at an italian place", "table, 1 of 5 words (harbour-tides)"],
    ["a knitting pattern for a winter hat", "pattern, 1 of 4 (grep-buddy)"],
    ["file my divorce papers quickly", "file, 1 of 4 (grep-buddy)"],
    ["world record for the longest jump", "world, 1 of 4 (sky-report)"],
    ["count the calories in my breakfast", "count, 1 of 3 (stitch-counter)"],
  ])("%s (%s)", (query) => {
    expect(search.find(query, 3)).toEqual({ hits: [], total: 0 });
  });
});

describe("plain queries are still found", () => {
  const search = index();
  it.each([
    ["weather in Paris", "sky-report", "forecast"],
    ["weather", "sky-report", "forecast"],
    ["tide table", "harbour-tides", "tides"],
    ["when is high tide", "harbour-tides", "tides"],
    ["search server logs for a pattern", "grep-buddy", "search-logs"],
    ["crochet rows", "stitch-counter", "rows"],
    ["keep track of my expenses each month", "receipt-keeper", "expenses"],
    // Only common words, but half the query or more: a user asking for a "table" may mean the tide table.
    ["table", "harbour-tides", "tides"],
    ["count rows", "stitch-counter", "rows"],
  ])("%s → %s / %s", (query, name, skillId) => {
    const [top] = search.search(query, 5);
    expect(top?.card.name).toBe(name);
    expect(top?.best_skill_id).toBe(skillId);
  });

  it("a specific word matched is enough, however long the query", () => {
    const [top] = search.search("could you tell me what the weather will be like this afternoon near my home", 5);
    expect(top?.card.name).toBe("sky-report");
  });
});

describe("the common-word list", () => {
  it("holds general words, stemmed as queries are, and not words that name what agents do", () => {
    for (const word of ["table", "file", "pattern", "book", "world", "place", "keep", "month", "work", "near", "count", "leaking"]) {
      expect(isCommonTerm(stem(word)), word).toBe(true);
    }
    for (const word of ["weather", "forecast", "translate", "invoice", "meeting", "tide", "crochet", "expenses"]) {
      expect(isCommonTerm(stem(word)), word).toBe(false);
    }
    expect(COMMON_TERMS.size).toBeGreaterThan(300);
  });
});

describe("what the guard set aside, kept for hybrid search to weigh", () => {
  it("is returned apart from the hits when asked for, and only then", () => {
    const search = index();
    const plain = search.find("book a table for two at a sushi place", 10);
    expect(plain.hits).toEqual([]);
    expect(plain.weak).toBeUndefined();
    const kept = search.find("book a table for two at a sushi place", 10, true);
    expect(kept.hits).toEqual([]);
    // "table" names the tide agent's skill, "place" the weather agent's description: both set aside, best first.
    expect(kept.weak?.map((hit) => [hit.card.name, hit.best_skill_id])).toContainEqual(["harbour-tides", "tides"]);
    const scores = kept.weak!.map((hit) => hit.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("never lists an agent that is also a hit", () => {
    const kept = index().find("weather for the place where I work", 10, true);
    expect(kept.hits.map((hit) => hit.card.name)).toContain("sky-report");
    expect(kept.weak?.map((hit) => hit.card.name) ?? []).not.toContain("sky-report");
  });
});
