// `npm run eval:search` end to end on the evaluator's own small set (test/fixtures/search/small-set.json):
// the real bundled Worker in Miniflare, cards published over the Directory's RPC, queries through
// `POST /directory/search`. Lexically the 9 queries that share words with their card come first with their
// skill and the 6 paraphrases that share none are missed: 9/15 exactly; the 4 negatives come back empty.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { evaluate } from "../../scripts/eval-search/evaluate.ts";
import { readSearchSet } from "../../scripts/eval-search/search-set.ts";

const ROOT = join(import.meta.dirname, "../..");
const SMALL_SET = join(ROOT, "test/fixtures/search/small-set.json");
const LEXICAL = { top1: 0.6, skill: 0.6, mrr: 0.6, negatives_empty: 4, negatives: 4 };

async function evalSearch(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(ROOT, "scripts/eval-search.ts"), ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("eval:search on the real relay", () => {
  it("--lexical --json: 9 of 15 first with their skill, MRR 0.6, every negative empty, as the JSON last line; the temp bundle removed", async () => {
    const before = await readdir(tmpdir());
    const { code, stdout, stderr } = await evalSearch(SMALL_SET, "--lexical", "--json", "--verbose");
    expect(stderr).toContain("lexical run: 8 agents, 15 queries, 4 negatives");
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(JSON.parse(lines.at(-1)!)).toEqual({ ...LEXICAL, lexical: LEXICAL });
    expect(stdout).toMatch(/top-1 +60\.0 % \(9\/15\)/);
    expect(stdout).toMatch(/negatives empty +4 of 4/);
    expect(lines.filter((line) => line.startsWith("[lexical] miss "))).toHaveLength(6);
    expect(stdout).toContain("[lexical] ok    rank 1  sicilian opening lesson  expected chess-coach/openings, got chess-coach/openings");
    expect((await readdir(tmpdir())).filter((name) => name.startsWith("clawrelay-eval-search-") && !before.includes(name))).toEqual([]);
  });

  it("without --lexical runs the model and then lexically, the lexical figures the same as alone", async () => {
    const set = await readSearchSet(SMALL_SET);
    const lines: string[] = [];
    const { runs } = await evaluate(inject("relayBundle"), set, { lexical: false, floor: null, calibrate: false, workersAi: null, log: (line) => lines.push(line) });
    expect(runs.map((run) => run.label)).toEqual(["model", "lexical"]);
    expect(runs[1]!.result.figures).toEqual(LEXICAL);
    expect(runs[1]!.result.embeddings?.state ?? "off").toBe("off");
    const model = runs[0]!.result;
    expect(model.figures.negatives_empty).toBe(4);
    // With the local model bound the paraphrases can be found by meaning; a relay without one ranks
    // lexically and says so in its stats (no `embeddings`, or state "off").
    if (model.embeddings?.state === "ready") expect(model.figures.top1).toBeGreaterThan(LEXICAL.top1);
    else expect(model.figures).toEqual(LEXICAL);
  });
});

describe("eval:search's mistakes", () => {
  it("exits 2 naming the field when the set is wrong", async () => {
    const dir = await mkdtemp(join(tmpdir(), "eval-search-set-"));
    const file = join(dir, "set.json");
    await writeFile(file, JSON.stringify({ agents: [{ name: "solo", description: "x", skills: [{ id: "a", name: "A" }] }], queries: [{ q: "hello", agent: "solo", skill: "b" }] }));
    const { code, stderr, stdout } = await evalSearch(file);
    expect(code).toBe(2);
    expect(stderr).toBe(`eval:search: ${file}: queries[0].skill must be one of "solo"'s skill ids (a), not "b"\n`);
    expect(stdout).toBe("");
  });

  it("exits 2 with the usage for a mistake on the command line, and for a file that is not there", async () => {
    const usage = await evalSearch(SMALL_SET, "--floor", "2");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^eval:search: --floor must be a cosine between 0 and 1 \(exclusive\), not "2"\nusage: npm run eval:search -- FILE/);
    const missing = await evalSearch(join(ROOT, "test/fixtures/search/no-such-set.json"), "--lexical");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^eval:search: cannot read the set .*no-such-set\.json: ENOENT/);
  });
});
