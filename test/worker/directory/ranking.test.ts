// The directory's ranking (worker/directory/search-index.ts): which agent and which skill a query
// finds among overlapping cards, what the score means, and that updates take effect.
import { describe, expect, it } from "vitest";
import { SearchIndex, coverageScore } from "../../../worker/directory/search-index.ts";
import type { AgentCard } from "../../../worker/directory/card.ts";
import { agent, skill } from "../../support/workerd/directory-cards.ts";


// Overlap is the point: several weather agents, two translators, review vs generation, booking vs
// status, stocks vs budgets, "generate" in code and images, "meeting" in calendar, email and summaries.
const FIXTURE: AgentCard[] = [
  agent("weather-bot", "Real-time weather forecasts and severe weather alerts for any city.", [
    skill("forecast", "Weather Forecast", "Current conditions and a 7-day forecast for a location.", ["weather", "forecast"], ["What's the weather in Paris tomorrow?", "Will it rain in Seattle this weekend?"]),
    skill("alerts", "Severe Weather Alerts", "Warnings for storms, floods and heat waves.", ["weather", "alerts", "storms"], ["Any storm warnings for Miami?"]),
  ]),
  agent("climate-archive", "Historical climate records.", [
    skill("climate-history", "Historical Climate Data", "Past weather observations, monthly averages and climate trends since 1900.", ["climate", "history", "statistics"], ["Average July temperature in Rome in 1950?"]),
  ]),
  agent("marine-weather", "Conditions at sea for sailors.", [
    skill("marine-forecast", "Marine Conditions", "Wind, wave height and tide tables for coastal waters.", ["maritime", "sailing", "tides"], ["Wave height off Cape Cod tomorrow?"]),
  ]),
  agent("tianqi-bot", "中文天气服务", [
    skill("tianqi-forecast", "天气预报", "提供中国城市的天气预报和空气质量。", ["天气", "空气质量"], ["北京明天天气怎么样？"]),
  ]),
  agent("polyglot", "Translation between 40 languages.", [
    skill("translate-text", "Text Translation", "Translate short text between English, Spanish, French, German and more.", ["translation", "languages"], ["Translate 'good morning' into Spanish"]),
    skill("translate-documents", "Document Translation", "Translate whole documents (PDF, Word) preserving the layout.", ["translation", "documents", "pdf"], ["Translate this PDF manual into German"]),
  ]),
  agent("dongxi-translate", "中日英翻译服务。日本語と中国語の翻訳。", [
    skill("zh-en", "中英翻译", "中文和英文之间的专业翻译。", ["翻译", "中文"], ["把这段话翻译成英文"]),
    skill("ja-zh", "日本語翻訳", "日本語と中国語の翻訳を行います。", ["翻訳", "日本語"], ["この文章を中国語に翻訳して"]),
  ]),
  agent("code-reviewer", "Reviews pull requests for bugs and style.", [
    skill("review-pr", "Pull Request Review", "Review a diff or pull request and point out bugs, security issues and style problems.", ["code review", "github", "security"], ["Review my PR #42"]),
    skill("lint-explain", "Explain Lint Errors", "Explain compiler and linter errors and how to fix them.", ["linting", "errors"]),
  ]),
  agent("code-gen", "Writes code from a description.", [
    skill("generate-code", "Code Generation", "Generate Python, TypeScript or Go functions from a plain-English specification.", ["code", "generation", "python"], ["Write a Python function that parses CSV"]),
    skill("write-tests", "Unit Test Writing", "Write unit tests for existing code.", ["testing", "code"]),
  ]),
  agent("travel-booker", "Books trips: flights, hotels and rental cars.", [
    skill("book-flight", "Flight Booking", "Search and book flights at the best price.", ["travel", "flights", "booking"], ["Book a flight from Boston to Lisbon in May"]),
    skill("book-hotel", "Hotel Booking", "Find and reserve hotels and guesthouses.", ["travel", "hotels", "booking"], ["Book a ryokan in Kyoto for two nights"]),
  ]),
  agent("flight-status", "Live flight tracking.", [
    skill("track-flight", "Flight Status", "Departure and arrival times, gate changes and delays for any flight number.", ["flights", "delays", "airports"], ["Is UA 900 delayed?"]),
  ]),
  agent("stock-watch", "Stock market data and price alerts.", [
    skill("quote", "Stock Quote", "Latest price, volume and market cap of a listed company.", ["stocks", "finance", "market"], ["What's AAPL trading at?"]),
    skill("price-alerts", "Price Alerts", "Notify me when a stock crosses a price threshold.", ["stocks", "alerts"], ["Alert me if TSLA drops below 200"]),
  ]),
  agent("budget-coach", "Personal finance and budgeting.", [
    skill("budget-plan", "Monthly Budget Planning", "Build a monthly budget from income and expenses.", ["finance", "budgeting", "savings"], ["Help me save for a house"]),
    skill("expense-categorize", "Expense Categorization", "Sort bank transactions into spending categories.", ["finance", "expenses"]),
  ]),
  agent("chef-assistant", "Recipes and meal plans.", [
    skill("find-recipe", "Recipe Finder", "Find recipes by ingredients, cuisine or diet.", ["cooking", "recipes", "vegetarian"], ["Vegetarian dinner with chickpeas"]),
    skill("meal-plan", "Weekly Meal Plan", "Plan a week of meals with a shopping list.", ["cooking", "nutrition", "planning"]),
  ]),
  agent("legal-helper", "Plain-language legal information (not legal advice).", [
    skill("contract-review", "Contract Review", "Read a contract and flag risky clauses, termination terms and liabilities.", ["legal", "contracts"], ["Is this NDA one-sided?"]),
    skill("tenancy", "Tenant Rights", "Explain tenant and landlord rights for rentals.", ["legal", "housing"]),
  ]),
  agent("symptom-guide", "General health information; not a doctor.", [
    skill("symptom-check", "Symptom Checker", "Describe symptoms and get possible causes and when to see a doctor.", ["health", "medical", "symptoms"], ["I have a headache and a fever"]),
    skill("medication-info", "Medication Information", "Dosage, side effects and interactions of common medicines.", ["health", "pharmacy"]),
  ]),
  agent("math-tutor", "Step-by-step math tutoring.", [
    skill("algebra", "Algebra Help", "Solve equations and explain each step.", ["math", "algebra", "equations"]),
    skill("calculus", "Calculus Tutoring", "Derivatives, integrals and limits explained step by step.", ["math", "calculus"], ["Differentiate x^2 sin x"]),
  ]),
  agent("pixel-forge", "Image generation from text prompts.", [
    skill("text-to-image", "Image Generation", "Generate images, illustrations and logos from a text prompt.", ["images", "art", "design"], ["A watercolor fox in a forest"]),
    skill("upscale", "Image Upscaling", "Increase image resolution without blur.", ["images", "upscaling"]),
  ]),
  agent("tldr", "Summaries of long texts.", [
    skill("summarize-article", "Article Summarization", "Summarize news articles, web pages and papers into key points.", ["summarization", "news"]),
    skill("summarize-meeting", "Meeting Notes Summary", "Turn a meeting transcript into notes and action items.", ["summarization", "meetings"]),
  ]),
  agent("calendar-pal", "Calendar scheduling assistant.", [
    skill("schedule-meeting", "Schedule a Meeting", "Find a time that works for all attendees and send invites.", ["calendar", "scheduling", "meetings"], ["Set up a 30 minute call with Ana next week"]),
    skill("reminders", "Reminders", "Set reminders for tasks and events.", ["calendar", "reminders"]),
  ]),
  agent("mail-scribe", "Drafts and polishes emails.", [
    skill("draft-email", "Email Drafting", "Write a professional email or reply from a few bullet points.", ["email", "writing"], ["Draft a polite email declining a meeting"]),
    skill("proofread", "Proofreading", "Fix grammar and tone in any text.", ["writing", "grammar"]),
  ]),
  agent("sql-sage", "SQL help for Postgres, MySQL and SQLite.", [
    skill("write-query", "Write SQL Query", "Turn a question into a SQL query for your schema.", ["sql", "databases"], ["Top 10 customers by revenue"]),
    skill("optimize-query", "Query Optimization", "Explain slow SQL queries and suggest indexes.", ["sql", "performance", "indexes"]),
  ]),
  agent("quiz-master", "Trivia quizzes on history, science and pop culture.", []),
];

function fixtureIndex(): SearchIndex {
  const index = new SearchIndex();
  for (const card of FIXTURE) index.upsert(card);
  return index;
}

// [query, expected top agent, expected best_skill_id, what the case proves]
const CASES: [string, string, string | null, string][] = [
  ["weather forecast", "weather-bot", "forecast", "the plain case among three weather agents"],
  ["forecasts", "weather-bot", "forecast", "plural query meets singular text"],
  ["translating documents", "polyglot", "translate-documents", "inflected query picks the right one of two skills"],
  ["booked hotels", "travel-booker", "book-hotel", "past tense and plural"],
  ["optimize slow queries", "sql-sage", "optimize-query", "-ize vs -ization, query vs queries"],
  ["maritime", "marine-weather", "marine-forecast", "tag-only match"],
  ["ryokan", "travel-booker", "book-hotel", "example-only match"],
  ["headache", "symptom-guide", "symptom-check", "example-only match"],
  ["天气", "tianqi-bot", "tianqi-forecast", "CJK bigram inside 天气预报"],
  ["翻译", "dongxi-translate", "zh-en", "simplified Chinese query"],
  ["日本語 翻訳", "dongxi-translate", "ja-zh", "Japanese query, not the Chinese skill"],
  ["stock price alert", "stock-watch", "price-alerts", "only one skill has all three terms"],
  ["review contract", "legal-helper", "contract-review", "legal review beats code review"],
  ["review pull request", "code-reviewer", "review-pr", "code review beats legal review"],
  ["generate python code", "code-gen", "generate-code", "code generation beats image generation"],
  ["generate logo image", "pixel-forge", "text-to-image", "image generation beats code generation"],
  ["flight delay", "flight-status", "track-flight", "status beats booking"],
  ["schedule meeting", "calendar-pal", "schedule-meeting", "calendar beats meeting summaries and email"],
  ["summarize article", "tldr", "summarize-article", "summarize vs summarization"],
  ["draft email reply", "mail-scribe", "draft-email", "email drafting"],
  ["vegetarian recipes", "chef-assistant", "find-recipe", "recipes"],
  ["calculus integrals", "math-tutor", "calculus", "math tutoring skill choice"],
  ["personal budget", "budget-coach", "budget-plan", "finance: budgets, not stocks"],
  ["trivia quiz", "quiz-master", null, "a skill-less agent is found, with no best skill"],
];

describe("ranking the fixture directory", () => {
  const index = fixtureIndex();

  it.each(CASES)("%s → %s / %s (%s)", (query, name, skillId) => {
    const [top] = index.search(query, 10);
    expect(top?.card.name).toBe(name);
    expect(top?.best_skill_id).toBe(skillId);
  });

  it("scores lie in (0, 1] and come sorted descending, ties by name", () => {
    for (const [query] of CASES) {
      const hits = index.search(query, 50);
      expect(hits.length).toBeGreaterThan(0);
      hits.forEach((hit, i) => {
        expect(hit.score).toBeGreaterThan(0);
        expect(hit.score).toBeLessThanOrEqual(1);
        const prev = hits[i - 1];
        if (prev) expect(prev.score > hit.score || (prev.score === hit.score && prev.card.name < hit.card.name)).toBe(true);
      });
    }
  });

  it("returns [] for a query matching nothing, an empty one and a stopword-only one", () => {
    expect(index.search("xylophone zebra", 10)).toEqual([]);
    expect(index.search("", 10)).toEqual([]);
    expect(index.search("  the of and  ", 10)).toEqual([]);
    expect(index.search("!!! ???", 10)).toEqual([]);
  });

  it("respects the limit, clamping it to 1..50", () => {
    expect(index.search("weather", 2)).toHaveLength(2);
    expect(index.search("weather", 0)).toHaveLength(1);
    expect(index.search("weather", Number.NaN)).toHaveLength(1);
    const all = FIXTURE.map((card) => card.name).join(" ");
    expect(index.search(all, 1000)).toHaveLength(FIXTURE.length);
    expect(index.search(all, 10)).toEqual(index.search(all, 1000).slice(0, 10));
  });
});

describe("what a score means", () => {
  const index = fixtureIndex();

  it("a perfect multi-field match scores at least 0.5", () => {
    expect(index.search("weather forecast", 1)[0]!.score).toBeGreaterThanOrEqual(0.5);
  });

  it("the skill matching every term outranks skills matching a subset", () => {
    const hits = index.search("stock price alert", 50);
    const [top, ...rest] = hits;
    for (const hit of rest) expect(hit.score).toBeLessThan(top!.score);
    const weatherAlerts = hits.find((hit) => hit.card.name === "weather-bot");
    expect(weatherAlerts?.best_skill_id).toBe("alerts");
    expect(weatherAlerts!.score).toBeLessThan(top!.score / 2);
  });

  it("a unit covering about half the query (by idf, and one of its two terms) scores about half, times the coverage factor 0.75", () => {
    const small = new SearchIndex();
    for (const card of FIXTURE) small.upsert(card);
    small.upsert(agent("harbour-a", "", [skill("s", "ocean tide", "")]));
    small.upsert(agent("harbour-b", "", [skill("s", "ocean swell", "")]));
    const hits = small.search("ocean tide", 10);
    const a = hits.find((hit) => hit.card.name === "harbour-a")!;
    const b = hits.find((hit) => hit.card.name === "harbour-b")!;
    const share = (b.score / coverageScore(1, 1, 2)) / (a.score / coverageScore(1, 2, 2));
    expect(share).toBeGreaterThan(0.35);
    expect(share).toBeLessThan(0.6);
    expect(b.score / a.score).toBeCloseTo(share * 0.75);
  });

  it("a query word no card contains still counts: the score drops, the winner stays", () => {
    const plain = index.search("weather forecast", 1)[0]!;
    const withUnknown = index.search("weather forecast xyzzy", 1)[0]!;
    expect(withUnknown.card.name).toBe("weather-bot");
    expect(withUnknown.score).toBeLessThan(plain.score * 0.75);
  });

  it("coverage counts: two common words of the query beat one rare one; a far more specific word still wins", () => {
    // The reported case: "nap" is in one card (rare, high idf), "weather" and "forecast" in six.
    const sleepy = new SearchIndex();
    for (let i = 0; i < 10; i++) sleepy.upsert(agent(`other-${i}`, `Unrelated helper number ${i}.`, [skill("x", `Helper ${i}`, "Does other things entirely.")]));
    for (let i = 0; i < 5; i++) sleepy.upsert(agent(`wx-${i}`, "Weather forecast service.", [skill("data", "Weather Forecast Feed", "Weather forecast data.", ["weather", "forecast"])]));
    sleepy.upsert(agent("sky-cast", "Local forecasts.", [skill("forecast", "Weather Forecast", "Today's weather forecast for your town.", ["weather", "forecast"])]));
    sleepy.upsert(agent("siesta-coach", "Rest and recovery coaching for busy people.", [skill("power-nap", "Power Nap Planner", "Plan a short afternoon nap between meetings and calls.", ["sleep", "rest"])]));
    const hits = sleepy.search("weather forecast nap", 20);
    expect(hits[0]).toMatchObject({ best_skill_id: "forecast" });
    expect(hits[0]!.card.name).toBe("sky-cast");
    const nap = hits.find((hit) => hit.card.name === "siesta-coach")!;
    expect(nap.score).toBeLessThan(hits[0]!.score);
    // By the idf-weighted share alone the rare word would rank first (0.386 against 0.375): coverage flips it.
    expect(nap.score / coverageScore(1, 1, 3)).toBeGreaterThan(hits[0]!.score / coverageScore(1, 2, 3));
    // A far more specific word still wins: with many weather agents "weather forecast" means little.
    for (let i = 5; i < 40; i++) sleepy.upsert(agent(`wx-${i}`, "Weather forecast service.", [skill("data", "Weather Forecast Feed", "Weather forecast data.", ["weather", "forecast"])]));
    expect(sleepy.search("weather forecast nap", 1)[0]!.card.name).toBe("siesta-coach");
    // The rule itself: one term of three needs a share ×1.25 that of two terms of three to rank first.
    expect(coverageScore(0.5, 1, 3)).toBeCloseTo(coverageScore(0.4, 2, 3));
    expect(coverageScore(0.51, 1, 3)).toBeGreaterThan(coverageScore(0.4, 2, 3));
    expect(coverageScore(0.49, 1, 3)).toBeLessThan(coverageScore(0.4, 2, 3));
    expect(coverageScore(0.8, 3, 3)).toBe(0.8);
  });

  it("find() counts every matching agent before the limit", () => {
    const all = index.find("weather", 50);
    expect(all.total).toBe(all.hits.length);
    expect(all.total).toBeGreaterThanOrEqual(3);
    const one = index.find("weather", 1);
    expect(one.hits).toHaveLength(1);
    expect(one.total).toBe(all.total);
    expect(index.find("xylophone zebra", 5)).toEqual({ hits: [], total: 0 });
  });

  it("orders identical cards by name, whatever the insertion order", () => {
    const twins = fixtureIndex();
    const twin = (name: string) => agent(name, "Folds paper.", [skill("fold", "Origami Folding", "Paper cranes and boxes.", ["origami"])]);
    twins.upsert(twin("fold-2"));
    twins.upsert(twin("fold-1"));
    const hits = twins.search("origami", 10);
    expect(hits.map((hit) => hit.card.name)).toEqual(["fold-1", "fold-2"]);
    expect(hits[0]!.score).toBe(hits[1]!.score);
  });
});

describe("updating the index", () => {
  it("upsert replaces a card: its old skills stop matching, the new ones match", () => {
    const index = fixtureIndex();
    index.upsert(agent("weather-bot", "Puzzles.", [skill("crossword", "Crossword Solver", "Solve crossword clues.", ["puzzles"])]));
    expect(index.size).toBe(FIXTURE.length);
    // The name still says "weather"; the old skills' words must be gone.
    expect(index.search("forecast storms", 50).map((hit) => hit.card.name)).not.toContain("weather-bot");
    expect(index.search("weather", 50).find((hit) => hit.card.name === "weather-bot")?.best_skill_id).toBe("crossword");
    expect(index.search("crossword", 10).map((hit) => [hit.card.name, hit.best_skill_id])).toEqual([["weather-bot", "crossword"]]);
  });

  it("remove deletes a card and reports whether there was one", () => {
    const index = fixtureIndex();
    expect(index.remove("tianqi-bot")).toBe(true);
    expect(index.remove("tianqi-bot")).toBe(false);
    expect(index.size).toBe(FIXTURE.length - 1);
    expect(index.search("天气预报", 10)).toEqual([]);
    // Freed slots are reused without leaking the old postings.
    index.upsert(agent("kite-shop", "Kites.", [skill("kites", "Kite Advice", "Choosing a kite for the wind.")]));
    expect(index.search("天气", 10)).toEqual([]);
    expect(index.search("kite", 10)[0]?.card.name).toBe("kite-shop");
  });

  it("an index updated in place ranks exactly like one built afresh", () => {
    const updated = fixtureIndex();
    // Churn: replace some cards, remove and re-add others in another order (ids get reused).
    for (const card of FIXTURE.slice(0, 8)) updated.upsert({ ...card, skills: [skill("tmp", "Temporary", "Placeholder skill.")] });
    for (const card of FIXTURE.slice(5, 15)) updated.remove(card.name);
    for (const card of [...FIXTURE.slice(0, 15)].reverse()) updated.upsert(card);
    const fresh = fixtureIndex();
    const view = (index: SearchIndex, query: string) => index.search(query, 50).map((hit) => [hit.card.name, hit.best_skill_id, hit.score]);
    for (const [query] of CASES) expect(view(updated, query)).toEqual(view(fresh, query));
    expect(updated.search("temporary placeholder", 10)).toEqual([]);
  });

  it("after heavy churn (replaced cards leave dead ids until the index renumbers) ranks like one built afresh", () => {
    const churned = fixtureIndex();
    for (let round = 0; round < 400; round++) {
      for (const card of FIXTURE.slice(0, 10)) churned.upsert({ ...card, description: `${card.description} round ${round}` });
    }
    for (const card of FIXTURE.slice(0, 10)) churned.upsert(card);
    const fresh = fixtureIndex();
    const view = (index: SearchIndex, query: string) => index.find(query, 50);
    for (const [query] of CASES) expect(view(churned, query)).toEqual(view(fresh, query));
    expect(churned.search("round", 10)).toEqual([]);
  });

  it("an emptied index answers [] and fills again", () => {
    const index = fixtureIndex();
    for (const card of FIXTURE) index.remove(card.name);
    expect(index.size).toBe(0);
    expect(index.search("weather", 10)).toEqual([]);
    index.upsert(FIXTURE[0]!);
    expect(index.search("weather", 10)[0]?.best_skill_id).toBe("forecast");
  });
});
