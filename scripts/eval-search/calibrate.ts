// `eval:search --calibrate`: a floor for a model, measured on the set's negatives (queries no agent
// serves). Every skill is embedded from the text the directory embeds (skillText), with the same model in
// Node; the highest cosine any negative reaches is where off-topic answers begin, and the floor suggested
// is just above it. Used by scripts/eval-search.ts; covered by test/node/eval-search-metrics.test.ts.
import { cosine, skillText } from "../../worker/directory/embeddings/semantic-index.ts";
import type { SearchSet } from "./search-set.ts";
import type { NodeEmbeddingsRun } from "../local-ai/local-model.ts";

/** Texts → one vector each, with the model the relay ranks with. */
export type TextEmbedder = (texts: string[]) => Promise<number[][]>;

/** Above the highest off-topic cosine by this much, so that query itself stays out. */
export const FLOOR_MARGIN = 0.01;
/** Texts per call: Workers AI takes up to 100 per request for its embedding models. */
const EMBED_BATCH = 50;

export interface Calibration {
  /** The highest cosine any negative reaches against any skill, and where. */
  highest: { cosine: number; negative: string; agent: string; skill: string | null };
  /** highest.cosine + FLOOR_MARGIN, rounded up to 3 decimals (EMBEDDING_FLOOR). */
  floor: number;
  /** Queries whose expected skill's cosine is below the floor: found by their words or not at all. */
  queriesBelowFloor: number;
  queries: number;
}

export function embedderFromRun(run: NodeEmbeddingsRun, model: string): TextEmbedder {
  return async (texts) => {
    const vectors: number[][] = [];
    for (let i = 0; i < texts.length; i += EMBED_BATCH) vectors.push(...(await run(model, { text: texts.slice(i, i + EMBED_BATCH) })).data);
    return vectors;
  };
}

interface SkillVector {
  agent: string;
  skill: string | null;
  vector: Float32Array;
}

/** The floor from vectors already made: pure, so it is tested without a model. */
export function calibrationFrom(set: SearchSet, skills: readonly SkillVector[], negatives: readonly Float32Array[], queries: readonly Float32Array[]): Calibration {
  if (set.negatives.length === 0) throw new Error("calibrating needs negatives: queries no agent of the set serves");
  let highest: Calibration["highest"] = { cosine: -Infinity, negative: "", agent: "", skill: null };
  negatives.forEach((vector, i) => {
    for (const skill of skills) {
      const value = cosine(vector, skill.vector);
      if (value > highest.cosine) highest = { cosine: value, negative: set.negatives[i]!, agent: skill.agent, skill: skill.skill };
    }
  });
  // Rounded to a millionth before rounding up: 0.8 + 0.01 is 0.8100000000000001, which must stay 0.81.
  const floor = Math.ceil(Math.round((highest.cosine + FLOOR_MARGIN) * 1e6) / 1000) / 1000;
  const queriesBelowFloor = set.queries.filter((query, i) => {
    const expected = skills.find((s) => s.agent === query.agent && s.skill === query.skill);
    return !expected || cosine(queries[i]!, expected.vector) < floor;
  }).length;
  return { highest, floor, queriesBelowFloor, queries: set.queries.length };
}

export async function calibrate(set: SearchSet, embed: TextEmbedder): Promise<Calibration> {
  // A card without skills is embedded as one text (skillText(card, null)), as the directory does.
  const units = set.cards.flatMap((card) =>
    card.skills.length > 0
      ? card.skills.map((skill) => ({ agent: card.name, skill: skill.id as string | null, text: skillText(card, skill) }))
      : [{ agent: card.name, skill: null, text: skillText(card, null) }],
  );
  const vectors = (await embed([...units.map((u) => u.text), ...set.negatives, ...set.queries.map((q) => q.q)])).map((v) => Float32Array.from(v));
  const skills = units.map((unit, i) => ({ agent: unit.agent, skill: unit.skill, vector: vectors[i]! }));
  const negatives = vectors.slice(units.length, units.length + set.negatives.length);
  return calibrationFrom(set, skills, negatives, vectors.slice(units.length + set.negatives.length));
}
