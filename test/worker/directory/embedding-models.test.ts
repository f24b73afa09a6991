// The embedding models the directory knows (worker/directory/embeddings/embedding-models.ts) and how the Directory
// takes its source from the bindings (sourceFromEnv): floors per model, the operator's EMBEDDING_FLOOR,
// a model without a floor or unknown ranking lexically, and no binding meaning no embeddings at all.
import { describe, expect, it, vi } from "vitest";
import { sourceFromEnv } from "../../../worker/directory/directory.ts";
import { EMBEDDING_MODELS, LOCAL_EMBEDDING_MODEL, PRODUCTION_EMBEDDING_MODEL, floorFor } from "../../../worker/directory/embeddings/embedding-models.ts";
import type { Env } from "../../../worker/env.ts";
import type { EmbeddingsBinding } from "../../../worker/directory/embeddings/semantic-index.ts";

const answering = (dims: number): EmbeddingsBinding => ({ run: async (_model, { text }) => ({ shape: [text.length, dims], data: text.map(() => Array.from({ length: dims }, () => 0.5)) }) });
const envWith = (vars: Partial<Env>) => vars as Env;

describe("embedding models and their floors", () => {
  it("knows the production model (1024-d, not calibrated yet) and the local model (512-d, calibrated)", () => {
    expect(EMBEDDING_MODELS[PRODUCTION_EMBEDDING_MODEL]).toEqual({ dimensions: 1024, floor: null });
    expect(EMBEDDING_MODELS[LOCAL_EMBEDDING_MODEL]!.dimensions).toBe(512);
    expect(floorFor(LOCAL_EMBEDDING_MODEL, undefined)).toBeGreaterThan(0);
    expect(floorFor(PRODUCTION_EMBEDDING_MODEL, undefined)).toBeNull();
  });

  it("takes the operator's EMBEDDING_FLOOR over the table, and an unusable one as no floor (lexical)", () => {
    expect(floorFor(PRODUCTION_EMBEDDING_MODEL, "0.61")).toBe(0.61);
    expect(floorFor(LOCAL_EMBEDDING_MODEL, " ")).toBe(floorFor(LOCAL_EMBEDDING_MODEL, undefined));
    for (const bad of ["abc", "0", "1", "-0.2", "1.5"]) expect(floorFor(LOCAL_EMBEDDING_MODEL, bad)).toBeNull();
  });

  it("gives an unknown model no floor unless the operator calibrated one", () => {
    expect(floorFor("@cf/some/other-model", undefined)).toBeNull();
    expect(floorFor("@cf/some/other-model", "0.5")).toBe(0.5);
  });
});

describe("the Directory's embeddings source from its bindings", () => {
  it("is none without an AI binding, whatever the vars say", () => {
    expect(sourceFromEnv(envWith({ EMBEDDING_MODEL: LOCAL_EMBEDDING_MODEL, EMBEDDING_FLOOR: "0.5" }))).toBeNull();
  });

  it("defaults to the production model, uncalibrated, and refuses vectors of another length", async () => {
    const source = sourceFromEnv(envWith({ AI: answering(768) }))!;
    expect(source).toMatchObject({ model: PRODUCTION_EMBEDDING_MODEL, dims: 1024, floor: null });
    await expect(source.embed(["hello"])).rejects.toThrow(/not 1024 numbers long/);
    expect(await sourceFromEnv(envWith({ AI: answering(1024) }))!.embed(["a", "b"])).toHaveLength(2);
  });

  it("says so when EMBEDDING_FLOOR is not a cosine in 0..1 (search then stays lexical, which nothing else shows)", () => {
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      expect(sourceFromEnv(envWith({ AI: answering(512), EMBEDDING_MODEL: LOCAL_EMBEDDING_MODEL, EMBEDDING_FLOOR: "0,6" }))?.floor).toBeNull();
      expect(warned.mock.calls).toHaveLength(1);
      expect(String(warned.mock.calls[0]![0])).toMatch(/EMBEDDING_FLOOR "0,6".*lexical/);
      sourceFromEnv(envWith({ AI: answering(512), EMBEDDING_MODEL: LOCAL_EMBEDDING_MODEL, EMBEDDING_FLOOR: "0.6" }));
      sourceFromEnv(envWith({ AI: answering(1024) }));
      expect(warned.mock.calls).toHaveLength(1);
    } finally {
      warned.mockRestore();
    }
  });

  it("uses EMBEDDING_MODEL and EMBEDDING_FLOOR as given", () => {
    expect(sourceFromEnv(envWith({ AI: answering(512), EMBEDDING_MODEL: LOCAL_EMBEDDING_MODEL }))).toMatchObject({ model: LOCAL_EMBEDDING_MODEL, dims: 512, floor: floorFor(LOCAL_EMBEDDING_MODEL, undefined) });
    expect(sourceFromEnv(envWith({ AI: answering(1024), EMBEDDING_FLOOR: "0.6" }))).toMatchObject({ model: PRODUCTION_EMBEDDING_MODEL, floor: 0.6 });
  });
});
