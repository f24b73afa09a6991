// The search evaluator's pure parts: the figures from answers, the set's refusals naming the field, the
// command line's mistakes (exit 2 in the CLI), the calibration from vectors, and the JSON last line.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EvalSearchUsage, evalSearchArgs } from "../../scripts/eval-search.ts";
import { calibrationFrom } from "../../scripts/eval-search/calibrate.ts";
import { figuresOf, rankOf } from "../../scripts/eval-search/metrics.ts";
import type { QueryOutcome, SearchHit } from "../../scripts/eval-search/metrics.ts";
import { jsonLine, verboseLines } from "../../scripts/eval-search/report.ts";
import { SearchSetError, parseSearchSet } from "../../scripts/eval-search/search-set.ts";

const SMALL_SET = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/search/small-set.json"), "utf8")) as Record<string, unknown>;
const hit = (name: string, skill: string | null = null, score = 0.5): SearchHit => ({ name, best_skill_id: skill, score });
const outcome = (agent: string, skill: string | null, hits: SearchHit[]): QueryOutcome => ({ query: { q: `find ${agent}`, agent, skill }, hits });

describe("figuresOf", () => {
  it("counts top-1 by agent, skill top-1 by agent and best skill, MRR@10 and empty negatives", () => {
    const queries = [
      outcome("a", "x", [hit("a", "x"), hit("b")]), // agent and skill right
      outcome("a", "y", [hit("a", "x")]), // agent right, skill wrong
      outcome("b", "z", [hit("c"), hit("d"), hit("b", "z")]), // third
      outcome("d", "w", []), // nothing
    ];
    const figures = figuresOf(queries, [{ q: "off", hits: [] }, { q: "topic", hits: [hit("a")] }, { q: "x", hits: [] }]);
    expect(figures).toEqual({ top1: 0.5, skill: 0.25, mrr: (1 + 1 + 1 / 3 + 0) / 4, negatives_empty: 2, negatives: 3 });
  });

  it("counts a rank only within the first 10 hits", () => {
    const hits = Array.from({ length: 12 }, (_, i) => hit(`n${i}`));
    expect(rankOf(hits, "n9")).toBe(10);
    expect(rankOf(hits, "n10")).toBeNull();
    expect(figuresOf([outcome("n10", null, hits)], []).mrr).toBe(0);
  });

  it("prints the JSON last line with exactly the issue's keys, in order, lexical nested", () => {
    const model = { top1: 0.9, skill: 0.8, mrr: 0.85, negatives_empty: 4, negatives: 4 };
    const lexical = { top1: 0.6, skill: 0.6, mrr: 0.6, negatives_empty: 4, negatives: 4 };
    expect(jsonLine(model, lexical)).toBe(
      '{"top1":0.9,"skill":0.8,"mrr":0.85,"negatives_empty":4,"negatives":4,"lexical":{"top1":0.6,"skill":0.6,"mrr":0.6,"negatives_empty":4,"negatives":4}}',
    );
  });

  it("shows a query's text with its control characters escaped in --verbose (an ESC in a set cannot drive the terminal)", () => {
    const queries = [{ query: { q: "weather\u001b]52;c;aGk=\u0007 now", agent: "a\u009bb", skill: "x" }, hits: [hit("a\u009bb", "x")] }];
    const [line] = verboseLines({ label: "lexical", result: { figures: figuresOf(queries, []), queries, negatives: [], embeddings: null } });
    expect(line).toContain("weather\\x1b]52;c;aGk=\\x07 now");
    expect(line).toContain("a\\x9bb/x");
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

describe("parseSearchSet", () => {
  it("reads the test set: cards with synthetic ag_ ids, queries and negatives", () => {
    const set = parseSearchSet(SMALL_SET);
    expect([set.cards.length, set.queries.length, set.negatives.length]).toEqual([8, 15, 4]);
    expect(new Set(set.cards.map((card) => card.agent_id)).size).toBe(8);
    expect(set.cards[0]!.agent_id).toMatch(/^ag_[0-9a-f]{12}$/);
  });

  const broken = (edit: (set: Record<string, unknown>) => void) => {
    const copy = structuredClone(SMALL_SET) as Record<string, any>;
    edit(copy);
    return () => parseSearchSet(copy);
  };

  it.each([
    ["no agents", (s: any) => delete s.agents, /"agents" must be a non-empty array/],
    ["an agent without a name", (s: any) => delete s.agents[2].name, /agents\[2\]\.name must be/],
    ["a name twice", (s: any) => (s.agents[3].name = s.agents[0].name), /agents\[3\]\.name "parcel-tracker" appears twice/],
    ["a bad skill id", (s: any) => (s.agents[1].skills[0].id = "has space"), /agents\[1\] \("pantry-chef"\): skills\[0\]\.id must be/],
    ["no queries", (s: any) => (s.queries = []), /"queries" must be a non-empty array/],
    ["a query for an unknown agent", (s: any) => (s.queries[4].agent = "nobody"), /queries\[4\]\.agent must name one of the set's agents, not "nobody"/],
    ["a skill the agent lacks", (s: any) => (s.queries[0].skill = "nope"), /queries\[0\]\.skill must be one of "parcel-tracker"'s skill ids \(track, redirect\), not "nope"/],
    ["an empty query", (s: any) => (s.queries[7].q = " "), /queries\[7\]\.q must be a non-empty string/],
    ["a negative too long for the relay", (s: any) => (s.negatives[1] = "x".repeat(501)), /negatives\[1\] must be a non-empty string of at most 500/],
    ["negatives not an array", (s: any) => (s.negatives = "none"), /"negatives" must be an array/],
  ])("refuses %s, naming the field", (_name, edit, message) => {
    expect(broken(edit)).toThrow(SearchSetError);
    expect(broken(edit)).toThrow(message);
  });
});

describe("evalSearchArgs", () => {
  const account = { CLOUDFLARE_ACCOUNT_ID: "acc", CLOUDFLARE_API_TOKEN: "tok" };

  it("reads the file, the switches, the floor and a Workers AI model with its account", () => {
    expect(evalSearchArgs(["set.json", "--json", "--verbose", "--floor", "0.6"], {})).toMatchObject({ file: "set.json", json: true, verbose: true, lexical: false, floor: "0.6", calibrate: false, workersAi: null });
    expect(evalSearchArgs(["set.json", "--workers-ai", "@cf/baai/bge-m3", "--calibrate"], { ...account, CLOUDFLARE_API_BASE_URL: "http://127.0.0.1:1/v4" }).workersAi).toEqual({
      model: "@cf/baai/bge-m3",
      account: { accountId: "acc", apiToken: "tok", apiBase: "http://127.0.0.1:1/v4" },
    });
  });

  it.each([
    [[], /one set FILE \(0 given\)/],
    [["a.json", "b.json"], /one set FILE \(2 given\)/],
    [["a.json", "--top", "3"], /Unknown option '--top'/],
    [["a.json", "--floor", "1.2"], /--floor must be a cosine between 0 and 1/],
    [["a.json", "--floor", "x"], /--floor must be a cosine/],
    [["a.json", "--lexical", "--floor", "0.5"], /--lexical runs without a model/],
    [["a.json", "--calibrate", "--floor", "0.5", "--workers-ai", "@cf/baai/bge-m3"], /--calibrate measures the floor itself/],
    [["a.json", "--workers-ai", "bge-m3"], /a Workers AI model id such as @cf\/baai\/bge-m3/],
  ])("refuses %j", (argv, message) => {
    expect(() => evalSearchArgs(argv, account)).toThrow(EvalSearchUsage);
    expect(() => evalSearchArgs(argv, account)).toThrow(message);
  });

  it("refuses --workers-ai without CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN, naming both", () => {
    expect(() => evalSearchArgs(["a.json", "--workers-ai", "@cf/baai/bge-m3"], { CLOUDFLARE_ACCOUNT_ID: "acc" })).toThrow(/CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN/);
  });
});

describe("calibrationFrom", () => {
  it("finds the negative closest to any skill, suggests a floor just above it, and counts queries below it", () => {
    const set = parseSearchSet({
      agents: [
        { name: "alpha", description: "A", skills: [{ id: "one", name: "One" }, { id: "two", name: "Two" }] },
        { name: "beta", description: "B", skills: [] },
      ],
      queries: [{ q: "q1", agent: "alpha", skill: "one" }, { q: "q2", agent: "beta", skill: null }],
      negatives: ["n1", "n2"],
    });
    const v = (...xs: number[]) => Float32Array.from(xs);
    const skills = [
      { agent: "alpha", skill: "one", vector: v(1, 0, 0) },
      { agent: "alpha", skill: "two", vector: v(0, 1, 0) },
      { agent: "beta", skill: null, vector: v(0, 0, 1) },
    ];
    // n1 · beta = 0.8 is the highest any negative reaches (n2 · beta ≈ 0.714); floor 0.8 + 0.01 = 0.81 (not
    // 0.811: 0.8 + 0.01 is 0.8100000000000001 in floating point). q1 · one = 0.8 is below it, q2 · beta = 1 above.
    const calibration = calibrationFrom(set, skills, [v(0.6, 0, 0.8), v(0, 0.7, 0.714)], [v(0.8, 0.6, 0), v(0, 0, 1)]);
    expect(calibration.highest).toMatchObject({ negative: "n1", agent: "beta", skill: null });
    expect(calibration.highest.cosine).toBeCloseTo(0.8, 6);
    expect(calibration.floor).toBe(0.81);
    expect(calibration.queriesBelowFloor).toBe(1);
  });
});
