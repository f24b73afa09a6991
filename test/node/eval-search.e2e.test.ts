// `npm run eval:search` end to end on the evaluator's own small set (test/fixtures/search/small-set.json):
// the real bundled Worker in Miniflare, cards published over the Directory's RPC, queries through
// `POST /directory/search`. Lexically the 9 queries that share words with their card come first with their
// skill and the 6 paraphrases that share none are missed: 9/15 exactly; the 4 negatives come back empty.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import type { NodeEmbeddingsRun } from "../../scripts/local-ai/local-model.ts";
import { evaluate } from "../../scripts/eval-search/evaluate.ts";
import { runSearchSet } from "../../scripts/eval-search/relay-run.ts";
import { readSearchSet } from "../../scripts/eval-search/search-set.ts";
import { EMBEDDING_MODELS, LOCAL_EMBEDDING_MODEL } from "../../worker/directory/embeddings/embedding-models.ts";

const ROOT = join(import.meta.dirname, "../..");
const SMALL_SET = join(ROOT, "test/fixtures/search/small-set.json");
const CALIBRATION_SET = join(ROOT, "test/fixtures/search/calibration-set.json");
const LEXICAL = { top1: 0.6, skill: 0.6, mrr: 0.6, negatives_empty: 4, negatives: 4 };

async function evalSearch(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(ROOT, "scripts/eval-search.ts"), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("eval:search on the real relay", () => {
  it("--lexical --json: 9 of 15 first with their skill, MRR 0.6, every negative empty, as the JSON last line; the temp bundle removed", async () => {
    const before = await readdir(tmpdir());
    const { code, stdout, stderr } = await evalSearch([SMALL_SET, "--lexical", "--json", "--verbose"]);
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

  it("without --lexical runs the local model and then lexically, the lexical figures the same as alone", async () => {
    const set = await readSearchSet(SMALL_SET);
    const lines: string[] = [];
    // Below the table's floor (0.596, calibrated on calibration-set.json) so this set's paraphrases, whose
    // cosines lie between 0.43 and 0.56, are found by meaning: EMBEDDING_FLOOR set as --floor sets it.
    const { runs } = await evaluate(inject("relayBundle"), set, { lexical: false, floor: "0.5", calibrate: false, workersAi: null, log: (line) => lines.push(line) });
    expect(runs.map((run) => run.label)).toEqual(["model", "lexical"]);
    expect(runs[1]!.result.figures).toEqual(LEXICAL);
    expect(runs[1]!.result.embeddings?.state ?? "off").toBe("off");
    const model = runs[0]!.result;
    expect(model.embeddings).toMatchObject({ model: LOCAL_EMBEDDING_MODEL, floor: 0.5, state: "ready", embedded: 8, pending: 0 });
    // Three of the six paraphrases found first, with their skill (the local model is deterministic), and
    // still every negative empty.
    expect(model.figures).toEqual({ top1: 0.8, skill: 0.8, mrr: 0.8, negatives_empty: 4, negatives: 4 });
  });

  it("--calibrate on the calibration set gives the local model's floor in the table, and every negative there stays empty by meaning", async () => {
    const set = await readSearchSet(CALIBRATION_SET);
    const { runs, calibration } = await evaluate(inject("relayBundle"), set, { lexical: false, floor: null, calibrate: true, workersAi: null, log: () => {} });
    expect(calibration?.model).toBe(LOCAL_EMBEDDING_MODEL);
    expect(calibration?.result.floor).toBe(EMBEDDING_MODELS[LOCAL_EMBEDDING_MODEL]!.floor);
    expect(runs.map((run) => run.label)).toEqual(["model", "lexical"]);
    // At that floor no negative is answered by meaning: those the model run answers, the words answered
    // (the lexical run answers them too). The queries are the cards' own examples: each finds its card first.
    expect(runs[0]!.result.figures.negatives_empty).toBe(runs[1]!.result.figures.negatives_empty);
    expect(runs[0]!.result.figures.top1).toBe(1);
  });
});

/** A stand-in text embedder: character trigrams hashed into 64 dimensions, so similar spellings are close. */
function trigramVector(text: string): number[] {
  const vector = new Array<number>(64).fill(0);
  const padded = ` ${text.toLowerCase()} `;
  for (let i = 0; i + 3 <= padded.length; i++) {
    let hash = 2166136261;
    for (const c of padded.slice(i, i + 3)) hash = Math.imul(hash ^ c.charCodeAt(0), 16777619);
    vector[(hash >>> 0) % 64]! += 1;
  }
  return vector;
}

describe("eval:search --workers-ai --calibrate against a stand-in of Cloudflare's API", () => {
  it("embeds the skills and negatives over REST, prints the highest negative cosine and the floor above it, and measures at it", async () => {
    const asked: string[][] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        const { text } = JSON.parse(body) as { text: string[] };
        asked.push(text);
        const ok = req.url === "/v4/accounts/acc/ai/run/@cf/test/trigrams" && req.headers.authorization === "Bearer tok";
        const answer = ok
          ? { result: { shape: [text.length, 64], data: text.map(trigramVector) }, success: true, errors: [], messages: [] }
          : { success: false, errors: [{ code: 10000, message: `unexpected ${String(req.url)}` }] };
        res.writeHead(ok ? 200 : 400, { "content-type": "application/json" }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v4`;
      const { code, stdout, stderr } = await evalSearch([SMALL_SET, "--workers-ai", "@cf/test/trigrams", "--calibrate", "--json"], {
        CLOUDFLARE_ACCOUNT_ID: "acc",
        CLOUDFLARE_API_TOKEN: "tok",
        CLOUDFLARE_API_BASE_URL: apiBase,
      });
      expect(stderr).not.toContain("refused");
      expect(code).toBe(0);
      // 16 skill texts, 4 negatives and 15 queries, in one batch.
      expect(asked[0]).toHaveLength(35);
      const highest = /highest cosine a negative reaches is (0\.\d{4})/.exec(stdout);
      const floor = /suggested floor: EMBEDDING_FLOOR=(0\.\d+)/.exec(stdout);
      expect(highest && floor).toBeTruthy();
      expect(Number(floor![1])).toBeCloseTo(Number(highest![1]) + 0.01, 3);
      expect(stdout).toMatch(/queries whose expected skill is below it \(found by their words, or not at all\): \d+ of 15/);
      const figures = JSON.parse(stdout.trimEnd().split("\n").at(-1)!) as { negatives_empty: number; lexical: unknown };
      expect(figures.lexical).toEqual(LEXICAL);
      expect(figures.negatives_empty).toBe(4);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("eval:search when the model fails while the queries are asked", () => {
  it("fails the run, saying how often, rather than report the lexical answers the relay fell back to as the model's", async () => {
    const set = await readSearchSet(SMALL_SET);
    const queries = new Set(set.queries.map((query) => query.q.toLowerCase()));
    // Cards embed; every query's embedding is refused (as a rate limit or an outage would be).
    const run: NodeEmbeddingsRun = async (_model, input) => {
      if (input.text.some((text) => queries.has(text.trim().toLowerCase()))) throw new Error("3040: Capacity temporarily exceeded");
      return { shape: [input.text.length, 64], data: input.text.map(trigramVector) };
    };
    const failed = await runSearchSet(inject("relayBundle"), set, { embeddings: run, vars: { EMBEDDING_MODEL: "@cf/test/trigrams", EMBEDDING_FLOOR: "0.5" }, log: () => {} }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(Error);
    // The relay stops asking a failing model for a while (card-embeddings.ts), so one failed call may be all there is.
    expect((failed as Error).message).toMatch(/^the model failed on [1-9]\d* of \d+ embedding calls while the queries were asked\b.*first: 3040: Capacity temporarily exceeded/);
  });
});

describe("eval:search --workers-ai with a token Workers AI refuses", () => {
  it("fails at once with Workers AI's own words, not after waiting for cards that will never embed", async () => {
    const server = createServer((req, res) => {
      req.resume().on("end", () => {
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ success: false, errors: [{ code: 10000, message: "Authentication error" }] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v4`;
      const set = await readSearchSet(SMALL_SET);
      const workersAi = { model: "@cf/test/trigrams", account: { accountId: "acc", apiToken: "wrong-token", apiBase } };
      const failed = await evaluate(inject("relayBundle"), set, { lexical: false, floor: "0.5", calibrate: false, workersAi, embedTimeoutMs: 3000, log: () => {} }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(Error);
      expect((failed as Error).message).toBe("Workers AI @cf/test/trigrams refused (HTTP 401): 10000: Authentication error");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("eval:search's mistakes", () => {
  it("exits 2 naming the field when the set is wrong", async () => {
    const dir = await mkdtemp(join(tmpdir(), "eval-search-set-"));
    const file = join(dir, "set.json");
    await writeFile(file, JSON.stringify({ agents: [{ name: "solo", description: "x", skills: [{ id: "a", name: "A" }] }], queries: [{ q: "hello", agent: "solo", skill: "b" }] }));
    const { code, stderr, stdout } = await evalSearch([file]);
    expect(code).toBe(2);
    expect(stderr).toBe(`eval:search: ${file}: queries[0].skill must be one of "solo"'s skill ids (a), not "b"\n`);
    expect(stdout).toBe("");
  });

  it("exits 2 for --calibrate on a set without negatives, before running anything", async () => {
    const dir = await mkdtemp(join(tmpdir(), "eval-search-set-"));
    const file = join(dir, "set.json");
    await writeFile(file, JSON.stringify({ agents: [{ name: "solo", description: "x", skills: [{ id: "a", name: "A" }] }], queries: [{ q: "hello", agent: "solo", skill: "a" }] }));
    const { code, stderr, stdout } = await evalSearch([file, "--calibrate"]);
    expect(stderr).toBe(`eval:search: ${file}: --calibrate needs "negatives": queries no agent of the set serves, to measure the floor on\n`);
    expect(code).toBe(2);
    expect(stdout).toBe("");
  });

  it("exits 2 with the usage for a mistake on the command line, and for a file that is not there", async () => {
    const usage = await evalSearch([SMALL_SET, "--floor", "2"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^eval:search: --floor must be a cosine between 0 and 1 \(exclusive\), not "2"\nusage: npm run eval:search -- FILE/);
    const missing = await evalSearch([join(ROOT, "test/fixtures/search/no-such-set.json"), "--lexical"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^eval:search: cannot read the set .*no-such-set\.json: ENOENT/);
  });
});
