// Skill vectors as the directory keeps them (vector-codec.ts, SemanticIndex in semantic-index.ts): 8-bit
// values whose cosines stay within 0.002 of float32's (so only near-ties may swap), stored bytes that are
// not whole vectors refused, and each card's closest skill found at or above a cosine.
import { describe, expect, it } from "vitest";
import { SemanticIndex, cosine } from "../../../worker/directory/embeddings/semantic-index.ts";
import { cosineAt, fromBytes, quantise, unit } from "../../../worker/directory/embeddings/vector-codec.ts";

/** Deterministic vectors near a few topic centres, as sentence embeddings of related texts are. */
function clustered(count: number, dims: number, seed: number): number[][] {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) - 0.5;
  const centres = Array.from({ length: 8 }, () => Array.from({ length: dims }, random));
  return Array.from({ length: count }, (_, i) => centres[i % 8]!.map((x) => x + 0.6 * random()));
}

describe("8-bit skill vectors", () => {
  it("keep cosines within 0.002 of float32, so any two cards further apart than that rank in the same order", () => {
    const dims = 512;
    const skills = clustered(600, dims, 7);
    const cards = Array.from({ length: 200 }, (_, i) => skills.slice(3 * i, 3 * i + 3));
    const quantised = cards.map((vectors) => quantise(vectors));
    let worst = 0;
    let pairsCompared = 0;
    const swapped: string[] = [];
    for (const query of clustered(40, dims, 99)) {
      const q = unit(query);
      const exact = cards.map((vectors) => Math.max(...vectors.map((v) => cosine(query, v))));
      const small = quantised.map((card) => Math.max(...[0, 1, 2].map((i) => cosineAt(q, card, i))));
      exact.forEach((cos, i) => (worst = Math.max(worst, Math.abs(cos - small[i]!))));
      for (let a = 0; a < cards.length; a++) {
        for (let b = a + 1; b < cards.length; b++) {
          if (Math.abs(exact[a]! - exact[b]!) <= 2 * 0.002) continue;
          pairsCompared++;
          if (Math.sign(small[a]! - small[b]!) !== Math.sign(exact[a]! - exact[b]!)) swapped.push(`${a}/${b}`);
        }
      }
    }
    expect(swapped).toEqual([]);
    expect(worst).toBeLessThan(0.002);
    expect(worst).toBeGreaterThan(0);
    expect(pairsCompared).toBeGreaterThan(700_000);
  });

  it("take one byte per dimension, and read back from stored bytes only as whole vectors", () => {
    const card = quantise([[3, -4], [0, 0]]);
    expect([...card.values]).toEqual([95, -127, 0, 0]);
    expect(fromBytes(card.values, 2, 2)).toEqual(card);
    expect(fromBytes(card.values, 3, 1)).toBeNull();
    expect(fromBytes(card.values, 2, 3)).toBeNull();
    expect(fromBytes(new Int8Array(0), 2, 0)).toBeNull();
    // A zero vector is nobody's neighbour.
    expect(cosineAt(unit([1, 0]), card, 1)).toBe(0);
    expect(() => quantise([[1, 2], [1]])).toThrow(/dimensions/);
    expect(() => quantise([[Number.NaN, 1]])).toThrow(/finite/);
  });

  it("find each card's closest skill, only for cards at or above the given cosine, and count the bytes held", () => {
    const index = new SemanticIndex();
    index.upsert("north", quantise([[0, 1], [1, 0.1]]));
    index.upsert("south", quantise([[0, -1]]));
    expect(index.bytes).toBe(4 + 8 + 2 + 4);
    const found = index.closest(unit([1, 0]), 0.5);
    expect([...found.keys()]).toEqual(["north"]);
    expect(found.get("north")!.skill).toBe(1);
    expect(found.get("north")!.cos).toBeCloseTo(cosine([1, 0], [1, 0.1]), 2);
    index.remove("north");
    expect(index.closest(unit([1, 0]), 0.5).size).toBe(0);
    expect(index.bytes).toBe(2 + 4);
  });
});
