// The local stack's Workers AI (scripts/local-ai/): the English model in Node answers as Workers AI's
// text-embedding models do, and a worker in Miniflare reaches it, or another embedder, through env.AI.run.
import { afterAll, describe, expect, it } from "vitest";
import { LOCAL_EMBEDDING_MODEL, PRODUCTION_EMBEDDING_MODEL } from "../../worker/directory/embeddings/embedding-models.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { localAiForMiniflare, serveModelOverHttp, wranglerDevConfigs } from "../../scripts/local-ai/local-ai.ts";
import { runLocalModel } from "../../scripts/local-ai/local-model.ts";
import type { NodeEmbeddingsRun } from "../../scripts/local-ai/local-model.ts";
import { startMiniflare } from "../../scripts/local-workerd.ts";
import type { WorkerBundle } from "../../scripts/local-workerd.ts";

const cos = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

// A worker that does what the Directory does with its binding: env.AI.run(env.EMBEDDING_MODEL or the
// asked model, {text}), answering the result or the thrown error's message.
const PROBE: WorkerBundle = {
  mainModule: "probe.js",
  compatibilityDate: "2026-11-01",
  compatibilityFlags: [],
  contents: `export default {
    async fetch(request, env) {
      const { model, text } = await request.json();
      try {
        return Response.json({ model: env.EMBEDDING_MODEL, answer: await env.AI.run(model ?? env.EMBEDDING_MODEL, { text }) });
      } catch (error) {
        return Response.json({ error: error.message }, { status: 500 });
      }
    },
  };`,
};

async function startProbe(run: NodeEmbeddingsRun) {
  const ai = localAiForMiniflare(run);
  const mf = startMiniflare("probe", PROBE, ai.relayBindings, undefined, { siblings: [ai.worker] });
  const url = (await mf.ready).origin;
  const ask = async (body: { model?: string; text: string[] }) => {
    const res = await fetch(url, { method: "POST", body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { model?: string; answer?: { shape: number[]; data: number[][] }; error?: string } };
  };
  return { ask, dispose: () => mf.dispose() };
}

describe("the local embedding model", () => {
  it("answers Workers AI's shape: one 512-d unit vector per text", async () => {
    const answer = await runLocalModel(LOCAL_EMBEDDING_MODEL, { text: ["do I need an umbrella tomorrow", "weather forecast and rain outlook", "vegetarian dinner recipes"] });
    expect(answer.shape).toEqual([3, 512]);
    expect(answer.data).toHaveLength(3);
    for (const vector of answer.data) expect(Math.hypot(...vector)).toBeCloseTo(1, 3);
    const [umbrella, forecast, recipes] = answer.data as [number[], number[], number[]];
    expect(cos(umbrella, forecast)).toBeGreaterThan(cos(umbrella, recipes));
  });

  it("gives a text the same vector whatever it is sent with (the model alone differs by ~2e-7 in a batch)", async () => {
    const text = "do I need an umbrella tomorrow";
    const alone = await runLocalModel(LOCAL_EMBEDDING_MODEL, { text: [text] });
    // In one batch with these two, the model's vector for `text` is not bit-equal to its vector alone.
    const withOthers = await runLocalModel(LOCAL_EMBEDDING_MODEL, { text: [text, "weather forecast and rain outlook", "translate a long business letter from German into English for a client"] });
    expect(withOthers.data[0]).toEqual(alone.data[0]);
  });

  it("refuses another model id, naming it (as Workers AI refuses a model it does not have)", async () => {
    await expect(runLocalModel(PRODUCTION_EMBEDDING_MODEL, { text: ["hello"] })).rejects.toThrow(`not "${PRODUCTION_EMBEDDING_MODEL}"`);
  });
});

describe("env.AI in Miniflare (startRelayMiniflare's wiring)", () => {
  const probes: { dispose(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const probe of probes) await probe.dispose();
  });

  it("reaches the local model through env.AI.run, with EMBEDDING_MODEL naming it", async () => {
    const probe = await startProbe(runLocalModel);
    probes.push(probe);
    const { status, body } = await probe.ask({ text: ["weather forecast and rain outlook"] });
    expect(status).toBe(200);
    expect(body.model).toBe(LOCAL_EMBEDDING_MODEL);
    const direct = await runLocalModel(LOCAL_EMBEDDING_MODEL, { text: ["weather forecast and rain outlook"] });
    expect(body.answer).toEqual(direct);

    const refused = await probe.ask({ model: PRODUCTION_EMBEDDING_MODEL, text: ["hello"] });
    expect(refused.status).toBe(500);
    expect(refused.body.error).toContain(PRODUCTION_EMBEDDING_MODEL);
  });

  it("runs another embedder in its place (the evaluator's Workers AI client), passing the model and texts through", async () => {
    const calls: { model: string; text: string[] }[] = [];
    const probe = await startProbe(async (model, input) => {
      calls.push({ model, text: input.text });
      return { shape: [input.text.length, 2], data: input.text.map(() => [0.6, 0.8]) };
    });
    probes.push(probe);
    const { body } = await probe.ask({ model: "@cf/example/other", text: ["one", "two"] });
    expect(calls).toEqual([{ model: "@cf/example/other", text: ["one", "two"] }]);
    expect(body.answer).toEqual({ shape: [2, 2], data: [[0.6, 0.8], [0.6, 0.8]] });
  });
});

describe("npm run dev:relay's local AI (wrangler dev binds no Node function)", () => {
  it("derives the relay's config from wrangler.toml with AI bound to LocalAi instead of Workers AI", () => {
    const toml = readFileSync(join(import.meta.dirname, "../../wrangler.toml"), "utf8");
    expect(toml).toMatch(/^\[ai\]\nbinding = "AI"$/m);
    const { relay, localAi } = wranglerDevConfigs(toml, "http://127.0.0.1:1234/run");
    expect(relay).not.toMatch(/^\[ai\]/m);
    expect(relay).not.toMatch(/^remote = true/m);
    expect(relay).toMatch(/^main = "\.\.\/worker\/index\.ts"$/m);
    expect(relay).toMatch(/\[\[services\]\]\nbinding = "AI"\nservice = "local-ai"\nentrypoint = "LocalAi"\n$/);
    // Everything else stays: the Durable Objects and their migrations.
    expect(relay).toContain('class_name = "Directory"');
    expect(relay).toContain('new_sqlite_classes = ["Directory"]');
    expect(localAi).toContain('main = "../scripts/local-ai/local-ai-worker.js"');
    expect(localAi).toContain('MODEL_URL = "http://127.0.0.1:1234/run"');
  });

  it("serves the model over loopback HTTP for LocalAi's MODEL_URL, failures in the error shape", async () => {
    const server = await serveModelOverHttp();
    try {
      const post = (body: unknown) => fetch(server.url, { method: "POST", body: JSON.stringify(body) });
      const ok = await post({ model: LOCAL_EMBEDDING_MODEL, text: ["weather forecast"] });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { shape: number[] }).shape).toEqual([1, 512]);
      const refused = await post({ model: PRODUCTION_EMBEDDING_MODEL, text: ["weather forecast"] });
      expect(refused.status).toBe(500);
      expect(await refused.json()).toMatchObject({ error: { code: "embeddings_failed", message: expect.stringContaining(PRODUCTION_EMBEDDING_MODEL) } });
      expect((await post({ model: LOCAL_EMBEDDING_MODEL })).status).toBe(400);
    } finally {
      server.close();
    }
  });
});
