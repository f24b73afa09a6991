// The workerd test project's Workers AI: env.AI.run reaches the local English model in the vitest
// process (scripts/local-ai/, vitest.config.ts) over JS RPC, the way the relay calls Workers AI.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LOCAL_EMBEDDING_MODEL, PRODUCTION_EMBEDDING_MODEL } from "../../../worker/directory/embeddings/embedding-models.ts";

interface Answer {
  shape: number[];
  data: number[][];
}

const cos = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describe("env.AI in the workerd tests", () => {
  it("names the local model as the directory's EMBEDDING_MODEL", () => {
    expect(env.EMBEDDING_MODEL).toBe(LOCAL_EMBEDDING_MODEL);
  });

  it("embeds with the local model: 512-d unit vectors, closer for texts that mean the same", async () => {
    const answer = (await env.AI.run(LOCAL_EMBEDDING_MODEL, { text: ["will it rain tomorrow", "weather forecast", "vegetarian dinner recipes"] })) as Answer;
    expect(answer.shape).toEqual([3, 512]);
    expect(answer.data).toHaveLength(3);
    for (const vector of answer.data) expect(Math.hypot(...vector)).toBeCloseTo(1, 3);
    const [rain, forecast, recipes] = answer.data as [number[], number[], number[]];
    expect(cos(rain, forecast)).toBeGreaterThan(cos(rain, recipes));
  });

  it("refuses a model it does not run, naming it, as Workers AI refuses an unknown model", async () => {
    const refused = await env.AI.run(PRODUCTION_EMBEDDING_MODEL, { text: ["hello"] }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain(PRODUCTION_EMBEDDING_MODEL);
  });
});
