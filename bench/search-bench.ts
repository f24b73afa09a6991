// Directory search timing: worker/directory/search-index.ts (every card in memory, ranked by
// term-index.ts) over a synthetic 10,000-agent directory, against a linear scan that scores every
// pre-tokenised skill with the same formula, counting document frequencies as it goes (it also
// cross-checks the index: both must return the same agents, skills and scores).
// Run: node bench/search-bench.ts [--agents 10000] [--queries 200]
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { SearchIndex } from "../worker/directory/search-index.ts";
import type { AgentCard, SearchHit, SkillCard } from "../worker/directory/search-index.ts";
import { tokenize } from "../worker/directory/tokenize.ts";
import { rng } from "./seeded-random.ts";
import { fmt, percentile, table } from "./stats.ts";

const { values } = parseArgs({ options: { agents: { type: "string", default: "10000" }, queries: { type: "string", default: "200" } } });
const AGENTS = Number(values.agents);
const QUERIES = Number(values.queries);
const VOCABULARY = 5000;
const LIMIT = 10;
// Mirrors WEIGHT (card-units.ts), K1, B and COVERAGE_FLOOR (term-index.ts); the cross-check below fails if they drift apart.
const WEIGHT = { skillName: 3, tags: 2, skillDescription: 1, examples: 1, agentDescription: 0.5, agentName: 1 };
const K1 = 1.2;
const B = 0.75;
const COVERAGE_FLOOR = 0.5;

const random = rng(20251130);
const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));

// Pseudo-words of 2–4 syllables (no "s", so the stemmer leaves most alone), drawn with a Zipf-like
// skew (weight 1/(rank+10)): a few words are common, as "data" or "api" are in real cards.
const words: string[] = [];
for (const seen = new Set<string>(); words.length < VOCABULARY; ) {
  let word = "";
  for (let n = int(2, 4); n > 0; n--) word += "bdfgklmnprtvz"[int(0, 12)]! + "aeiou"[int(0, 4)]!;
  if (!seen.has(word)) seen.add(word), words.push(word);
}
const cumulative: number[] = [];
words.reduce((sum, _, rank) => (cumulative.push(sum + 1 / (rank + 10)), sum + 1 / (rank + 10)), 0);
function word(): string {
  const target = random() * cumulative.at(-1)!;
  let lo = 0;
  for (let hi = cumulative.length - 1; lo < hi; ) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return words[lo]!;
}
const phrase = (lo: number, hi: number) => Array.from({ length: int(lo, hi) }, word).join(" ");

const cards: AgentCard[] = Array.from({ length: AGENTS }, (_, i) => ({
  name: `agent-${i}`,
  agent_id: `ag_${i}`,
  description: phrase(8, 15),
  skills: Array.from({ length: int(2, 4) }, (_, j): SkillCard => ({
    id: `skill-${j}`,
    name: phrase(2, 3),
    description: phrase(10, 20),
    tags: Array.from({ length: int(2, 4) }, word),
    examples: Array.from({ length: int(0, 2) }, () => phrase(5, 8)),
  })),
}));
// 1–4 terms; one query term in twenty is a word no card contains.
const queries = Array.from({ length: QUERIES }, () =>
  Array.from({ length: int(1, 4) }, () => (random() < 0.05 ? "qqqzz" : word())).join(" "));

function timed<T>(run: () => T): [T, number] {
  const start = performance.now();
  const result = run();
  return [result, performance.now() - start];
}

// --- the index -----------------------------------------------------------------------------------
const [index, buildMs] = timed(() => {
  const built = new SearchIndex();
  for (const card of cards) built.upsert(card);
  return built;
});

// --- the baseline: every unit pre-tokenised, scored on every query ------------------------------
interface ScanUnit { card: AgentCard; skill: string | null; length: number; tf: Map<string, number> }
const [scanUnits, scanBuildMs] = timed(() =>
  cards.flatMap((card) => card.skills.map((skill): ScanUnit => {
    const tf = new Map<string, number>();
    let length = 0;
    const fields: [string, number][] = [[card.name, WEIGHT.agentName], [card.description, WEIGHT.agentDescription],
      [skill.name, WEIGHT.skillName], [skill.description, WEIGHT.skillDescription],
      ...skill.tags.map((t): [string, number] => [t, WEIGHT.tags]), ...skill.examples.map((e): [string, number] => [e, WEIGHT.examples])];
    for (const [text, weight] of fields) for (const term of tokenize(text)) tf.set(term, (tf.get(term) ?? 0) + weight), (length += weight);
    return { card, skill: skill.id, length, tf };
  })));
const avgLength = scanUnits.reduce((sum, unit) => sum + unit.length, 0) / scanUnits.length;

function scan(query: string, limit: number): SearchHit[] {
  const terms = [...new Set(tokenize(query))];
  const idf = terms.map((term) => {
    const df = scanUnits.reduce((n, unit) => n + (unit.tf.has(term) ? 1 : 0), 0);
    return Math.log(1 + (scanUnits.length - df + 0.5) / (df + 0.5));
  });
  const idfSum = idf.reduce((a, b) => a + b, 0);
  const best = new Map<AgentCard, SearchHit>();
  for (const unit of scanUnits) {
    const k = K1 * (1 - B + B * (unit.length / avgLength));
    let score = 0;
    let matched = 0;
    terms.forEach((term, i) => {
      const tf = unit.tf.get(term);
      if (tf) (score += (idf[i]! * tf) / (tf + k)), matched++;
    });
    // The coverage factor (COVERAGE_FLOOR in term-index.ts): half the score, the other half by terms matched.
    score = (score / idfSum) * (COVERAGE_FLOOR + ((1 - COVERAGE_FLOOR) * matched) / terms.length);
    if (score > 0 && score > (best.get(unit.card)?.score ?? 0)) best.set(unit.card, { card: unit.card, score, best_skill_id: unit.skill });
  }
  return [...best.values()].sort((a, b) => b.score - a.score || (a.card.name < b.card.name ? -1 : 1)).slice(0, limit);
}

// --- timing ---------------------------------------------------------------------------------------
// Each side timed in its own pass, after a warm-up pass (JIT), so neither evicts the other's caches.
for (const query of queries) index.search(query, LIMIT);
const indexRuns = queries.map((query) => timed(() => index.search(query, LIMIT)));
for (const query of queries.slice(0, 20)) scan(query, LIMIT);
const scanRuns = queries.map((query) => timed(() => scan(query, LIMIT)));
const indexMs = indexRuns.map(([, ms]) => ms);
const scanMs = scanRuns.map(([, ms]) => ms);
let hitCount = 0;
queries.forEach((query, q) => {
  const hits = indexRuns[q]![0];
  const expected = scanRuns[q]![0];
  hitCount += hits.length;
  const same = hits.length === expected.length &&
    hits.every((hit, i) => hit.card === expected[i]!.card && Math.abs(hit.score - expected[i]!.score) < 1e-9 && hit.best_skill_id === expected[i]!.best_skill_id);
  if (!same) throw new Error(`index and scan disagree on "${query}": check WEIGHT/K1/B/COVERAGE_FLOOR here against term-index.ts`);
});
const [, updateMs] = timed(() => {
  for (let i = 0; i < 1000; i++) index.upsert(cards[(i * 7919) % AGENTS]!);
});

const units = scanUnits.length;
console.log(`directory search: ${AGENTS} agents, ${units} skills, ${QUERIES} queries of 1–4 terms, limit ${LIMIT}`);
console.log(table([
  ["", "p50 ms", "p99 ms", "max ms"],
  ["index search", fmt(percentile(indexMs, 50)), fmt(percentile(indexMs, 99)), fmt(Math.max(...indexMs))],
  ["linear scan", fmt(percentile(scanMs, 50)), fmt(percentile(scanMs, 99)), fmt(Math.max(...scanMs))],
  ["scan / index", fmt(percentile(scanMs, 50) / percentile(indexMs, 50)), fmt(percentile(scanMs, 99) / percentile(indexMs, 99)), ""],
]));
console.log(`index build ${fmt(buildMs)} ms (scan's pre-tokenising ${fmt(scanBuildMs)} ms); re-upsert of one card ${fmt(updateMs / 1000)} ms`);
console.log(`results identical to the scan for all ${QUERIES} queries (${hitCount} hits returned)`);
