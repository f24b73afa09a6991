// `npm run bench:vectors`: what the directory's semantic half costs per card and per search, in Node with
// the Directory's own modules (semantic-index.ts, vector-codec.ts) and the local model. Each figure beside a
// baseline of the same run: 8-bit vectors against the same vectors as float32, a search with the model
// against a lexical search on the same cards. Memory is V8's heap and array buffers after a full GC.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { runLocalModel } from "../scripts/local-ai/local-model.ts";
import { parseCard } from "../worker/directory/card.ts";
import { LOCAL_EMBEDDING_MODEL } from "../worker/directory/embeddings/embedding-models.ts";
import { SearchIndex } from "../worker/directory/search-index.ts";
import { CARD_OVERHEAD_BYTES, MAX_VECTOR_BYTES, SemanticIndex, cosine } from "../worker/directory/embeddings/semantic-index.ts";
import { quantise, unit } from "../worker/directory/embeddings/vector-codec.ts";
import type { BenchRun } from "./bench-run.ts";
import { syntheticDirectory } from "./directory-cards.ts";
import { syntheticAgentId } from "./directory-storage.ts";
import { fmt, median, table } from "./report.ts";
import { rng } from "./seeded-random.ts";

const SEARCHES = 15;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heldBytes = () => {
  // Twice: array buffers freed by one collection are only counted out after the next.
  gc();
  gc();
  const use = process.memoryUsage();
  return use.heapUsed + use.arrayBuffers;
};

function randomVector(random: () => number, dims: number): Float32Array {
  return Float32Array.from({ length: dims }, () => random() * 2 - 1);
}

/** Bytes per card held, and the median ms of a search's scan, for `cards` cards of `skills` skills. */
function measure(cards: number, skills: number, dims: number, random: () => number): { int8: [number, number]; float32: [number, number] } {
  const vectors = Array.from({ length: cards }, () => Array.from({ length: skills }, () => randomVector(random, dims)));
  const queries = Array.from({ length: SEARCHES }, () => unit(randomVector(random, dims)));
  const before = heldBytes();
  const quantised = new SemanticIndex();
  vectors.forEach((card, i) => quantised.upsert(`agent-${i}`, quantise(card)));
  const int8Bytes = heldBytes() - before;
  const int8Scan = median(queries.map((query) => timed(() => quantised.closest(query, -1))));
  // The baseline: the same vectors kept as float32 arrays under the same names, scanned the same way.
  const floats = new Map(vectors.map((card, i) => [`agent-${i}`, card.map(unit)]));
  const float32Bytes = heldBytes() - before - int8Bytes;
  const float32Scan = median(queries.map((query) => timed(() => {
    for (const card of floats.values()) for (const vector of card) cosine(query, vector);
  })));
  return { int8: [int8Bytes / cards, int8Scan], float32: [float32Bytes / cards, float32Scan] };
}

function timed(work: () => unknown): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}

export async function vectorsScenario(run: BenchRun, args: Record<string, number>): Promise<void> {
  const cards = args.cards!;
  const random = rng(20261207);
  const rows = [["dims × skills", "8-bit B/card", "float32 B/card", "ratio", "cards under the cap", `scan ms (${cards} cards)`, "float32 scan ms", "ratio"]];
  for (const [dims, skills] of [[512, 1], [512, 3], [1024, 1], [1024, 3]] as const) {
    run.log(`vectors: ${cards} cards × ${skills} skills × ${dims} dimensions…`);
    const { int8, float32 } = measure(cards, skills, dims, random);
    // The Directory's own estimate, which its cap is held against: the bytes, a norm each, and a card's overhead.
    const capBytes = skills * (dims + 4) + CARD_OVERHEAD_BYTES;
    rows.push([`${dims} × ${skills}`, fmt(int8[0]), fmt(float32[0]), `${fmt(int8[0] / float32[0])}×`, fmt(Math.floor(MAX_VECTOR_BYTES / capBytes)), fmt(int8[1]), fmt(float32[1]), `${fmt(int8[1] / float32[1])}×`]);
  }
  console.log(`\npart 1: skill vectors held in memory (the Directory's SemanticIndex, 8-bit) against the same vectors as float32`);
  console.log(table(rows));
  console.log(`  "cards under the cap": ${MAX_VECTOR_BYTES / 1024 / 1024} MiB over the Directory's estimate per card (its bytes, a 4-byte norm per vector, ${CARD_OVERHEAD_BYTES} bytes besides)`);

  run.log(`model: a lexical index of ${cards} synthetic cards, then the local model…`);
  const synthetic = syntheticDirectory(cards, SEARCHES);
  const lexical = new SearchIndex();
  synthetic.cards.forEach((card, i) => lexical.upsert(parseCard({ ...card, agent_id: syntheticAgentId(i) }, card.name)));
  const lexicalMs = median(synthetic.queries.map((query) => timed(() => lexical.find(query, 10))));
  await runLocalModel(LOCAL_EMBEDDING_MODEL, { text: ["warm-up"] });
  const embedMs: number[] = [];
  for (const query of synthetic.queries) {
    const start = performance.now();
    await runLocalModel(LOCAL_EMBEDDING_MODEL, { text: [query] });
    embedMs.push(performance.now() - start);
  }
  const cardTexts = synthetic.cards.slice(0, SEARCHES).map((card) => card.skills.map((skill) => `${skill.name}. ${skill.description}`));
  const cardMs: number[] = [];
  for (const texts of cardTexts) {
    const start = performance.now();
    await runLocalModel(LOCAL_EMBEDDING_MODEL, { text: texts });
    cardMs.push(performance.now() - start);
  }
  console.log(`\npart 2: the local model (${LOCAL_EMBEDDING_MODEL}, in this process) against a lexical search`);
  console.log(table([
    ["", "median ms", "vs a lexical search"],
    [`lexical search (${cards} cards, baseline)`, fmt(lexicalMs), "1×"],
    ["embed a query", fmt(median(embedMs)), `${fmt(median(embedMs) / lexicalMs)}×`],
    [`embed a card (${fmt(median(cardTexts.map((texts) => texts.length)))} skills)`, fmt(median(cardMs)), `${fmt(median(cardMs) / lexicalMs)}×`],
  ]));
}
