// The typo fallback of the directory's search (worker/directory/typo-fallback.ts, term-index.ts): a query
// that finds nothing is tried again with its unknown words respelled into index terms, but common words
// are never respelled, nor respelled into, and an off-topic query stays empty.
import { describe, expect, it } from "vitest";
import { SearchIndex } from "../../../worker/directory/search-index.ts";
import type { AgentCard } from "../../../worker/directory/card.ts";
import { agent, skill } from "../../support/workerd/directory-cards.ts";
import { stem } from "../../../worker/directory/tokenize.ts";
import { MAX_RESPELLED, editDistance, respelling, typoBudget } from "../../../worker/directory/typo-fallback.ts";

const CARDS: AgentCard[] = [
  agent("sky-report", "Weather for any city", [
    skill("forecast", "Weather Forecast", "Forecast of rain, wind and temperature", ["weather", "forecast"], ["Weather in Lyon tomorrow"]),
  ]),
  agent("flat-finder", "Rental leases and tenancy", [
    skill("leases", "Lease Review", "Read rental leases and flag unfair clauses", ["leases", "rental"]),
  ]),
  agent("quake-watch", "Earthquake alerts", [
    skill("quakes", "Earthquake Alerts", "Recent earthquakes near a place", ["earthquake", "seismic"]),
  ]),
  agent("home-loans", "Mortgage calculations", [
    skill("payment", "Mortgage Payment", "Monthly repayment of a mortgage", ["mortgage", "loan"]),
  ]),
];

function index(): SearchIndex {
  const built = new SearchIndex();
  for (const card of CARDS) built.upsert(card);
  return built;
}

describe("typos are respelled when the query finds nothing", () => {
  const search = index();
  it.each([
    ["forcast", "sky-report", "a missing letter"],
    ["wether forcast for Lyon", "sky-report", "two typos beside a word no card holds"],
    ["earthqauke near Lima", "quake-watch", "a swap of neighbours, beside a common word"],
    ["mortage calculator", "home-loans", "a missing letter in a longer word"],
  ])("%s → %s (%s)", (query, name) => {
    expect(search.search(query, 3)[0]?.card.name).toBe(name);
  });

  it("ranks a query with a correct word first as it is, without respelling the rest", () => {
    // "lyon" is on the weather card; "forcast" is then not respelled, and the hit's score is lower than with it.
    const [plain] = search.search("forcast lyon", 3);
    const [fixed] = search.search("forecast lyon", 3);
    expect(plain?.card.name).toBe("sky-report");
    expect(plain!.score).toBeLessThan(fixed!.score);
  });
});

describe("the fallback does not make off-topic queries match", () => {
  const search = index();
  it.each([
    ["my roof is leaking", "leaking is a common word: never respelled into leases"],
    ["the pipe keeps leaking", "the same with a common word beside it"],
    ["world record for the longest jump", "record is two edits from report, past a seven-letter word's one"],
    ["knit a warm scarf", "knit is one edit from unit, which no card holds here; scarf from nothing"],
  ])("%s (%s)", (query) => {
    expect(search.find(query, 3)).toEqual({ hits: [], total: 0 });
  });
});

describe("the fallback's cost is bounded", () => {
  // Each word respelled is a pass over every index term (~80 ms at 200,000 terms): a 500-character query
  // of unknown words took seconds of the one Directory object's time, every search and publish waiting.
  it(`respells at most MAX_RESPELLED (${MAX_RESPELLED}) words of a query, the first ones`, () => {
    const search = index();
    const unknown = ["zorblat", "quimzet", "fradnok", "plivsun", "wobmerk", "snarfle", "grumvix", "teplork"].slice(0, MAX_RESPELLED);
    expect(unknown).toHaveLength(MAX_RESPELLED);
    const within = search.find([...unknown.slice(1), "forcast"].join(" "), 3, true);
    expect(within.weak?.map((hit) => hit.card.name)).toEqual(["sky-report"]);
    const past = search.find([...unknown, "forcast"].join(" "), 3, true);
    expect(past).toEqual({ hits: [], total: 0, weak: [] });
  });
});

describe("typo fallback rules", () => {
  it("measures edits, a swap of neighbours being one, and stops above the limit", () => {
    expect(editDistance("forcast", "forecast", 2)).toBe(1);
    expect(editDistance("wether", "weather", 1)).toBe(1);
    expect(editDistance("earthqauk", "earthquak", 1)).toBe(1);
    expect(editDistance("record", "report", 1)).toBe(2);
    expect(editDistance("cat", "elephant", 2)).toBe(3);
    expect(editDistance("same", "same", 1)).toBe(0);
  });

  it("respells only Latin words of four letters or more that are not common, by one edit up to seven letters", () => {
    expect(typoBudget("cat")).toBe(0);
    expect(typoBudget("leak")).toBe(0);
    // Terms are stems, as the index holds them.
    expect(typoBudget(stem("table"))).toBe(0);
    expect(typoBudget(stem("month"))).toBe(0);
    expect(typoBudget("天气")).toBe(0);
    expect(typoBudget("polen")).toBe(1);
    expect(typoBudget("forcast")).toBe(1);
    expect(typoBudget("earthqak")).toBe(2);
  });

  it("picks the fewest edits, then the most frequent term, then the first alphabetically; never a common word", () => {
    const df = (term: string) => ({ parse: 3, parsa: 3, paste: 9, pars: 1 })[term] ?? 0;
    expect(respelling("parsr", ["paste", "parse", "parsa", "pars"], df)).toBe("parsa");
    expect(respelling("parsr", ["paste", "parse"], df)).toBe("parse");
    expect(respelling("tabel", [stem("table")], () => 5)).toBeNull();
    // A term in the vocabulary that no live unit holds any more is no respelling.
    expect(respelling("parsr", ["parse"], () => 0)).toBeNull();
  });
});
