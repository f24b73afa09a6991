// npm run bench:directory: the agent directory and delegation on the real relay, each figure against a
// baseline measured in the same run, ending with a summary table of figures against their goals.
//   1. POST /directory/search on a 10,000-agent directory vs GET /healthz (concurrency 1, interleaved);
//      the Directory object's cold start (evicted with Miniflare's unsafeEvictDurableObject, and after a
//      workerd restart on persisted storage) against the same for one agent's Inbox object, and against
//      a full rebuild of its search index (the persisted index marked stale: what every start did before);
//   1b. the same directory grown to 100,000 cards: rebuild, warm search against the 10,000-card figure,
//      card updates (rows written per publish), cold start after evictions and restarts;
//   2. delegation round trip: POST /api/delegate-task on a requester agent -> relay -> target agent ->
//      its stand-in gateway's /v1/chat/completions (answers at once) -> result back, vs the same chat
//      completion posted straight to that gateway; concurrency 1 and 8.
// The relay Worker (wrangler deploy --dry-run bundle) runs in Miniflare 5; the agents run in this process
// (local-agent/agent.ts startAgent, as test/support/node/stack.ts does); all on 127.0.0.1. Prints, asserts
// only that answers are right. Options: --agents 10000 (claimed and published over HTTP) --large 100000
// (cards of part 1b, 0 to skip it) --updates 1500 --queries 200 --delegations 200. A default run takes ~2–3 min.
// Part 1: directory-load.ts, directory-search-bench.ts, directory-cold-start.ts, directory-storage.ts,
// directory-report.ts; part 1b: directory-scale.ts; part 2: delegation-bench.ts (delegation-agents.ts,
// delegation-pieces.ts), delegation-report.ts; the summary: directory-summary.ts.
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { bundleWorker } from "../scripts/local-workerd.ts";
import { parseCard } from "../worker/directory/card.ts";
import { SearchIndex } from "../worker/directory/search-index.ts";
import { loadAverage, printHeader } from "./bench-header.ts";
import { BenchRun } from "./bench-run.ts";
import { runDelegationPart } from "./delegation-bench.ts";
import { printDelegation } from "./delegation-report.ts";
import { syntheticDirectory } from "./directory-cards.ts";
import { EVICTIONS, RESTARTS, runDirectoryEvictions, runInboxEvictions, runRestarts, startRelay } from "./directory-cold-start.ts";
import { directoryStats, LOAD_CONCURRENCY, loadAgent, loadDirectory } from "./directory-load.ts";
import { printDirectory, printScale } from "./directory-report.ts";
import { runScale } from "./directory-scale.ts";
import type { ScaleFigures } from "./directory-scale.ts";
import { runSearches, SEARCH_WARMUP } from "./directory-search-bench.ts";
import { invalidateIndex } from "./directory-storage.ts";
import { printSummary } from "./directory-summary.ts";
import { fmt } from "./stats.ts";

const { values: args } = parseArgs({
  options: {
    agents: { type: "string", default: "10000" },
    large: { type: "string", default: "100000" },
    updates: { type: "string", default: "1500" },
    queries: { type: "string", default: "200" },
    delegations: { type: "string", default: "200" },
  },
});
const AGENTS = Number(args.agents);
const LARGE = Number(args.large);
const UPDATES = Number(args.updates);
const QUERIES = Number(args.queries);
const DELEGATIONS = Number(args.delegations);
/** The whole run is aborted (and cleaned up) past this. */
const WATCHDOG_MS = 900_000;

const run = new BenchRun("bench:directory");
const log = run.log;

async function directorySize(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return { files, bytes };
}

async function main(): Promise<void> {
  const started = performance.now();
  await printHeader("clawrelay directory and delegation bench");
  console.log(`all traffic on 127.0.0.1; this process (load client, agents, gateways) and workerd share the same cores`);

  const tmpDir = await run.makeTmpDir("clawrelay-directory-bench-");
  const persistDir = path.join(tmpDir, "relay-state");
  log("bundling the relay (wrangler deploy --dry-run)…");
  const bundling = bundleWorker("wrangler.toml", path.join(tmpDir, "relay"));
  // The clean-up waits for wrangler before removing tmpDir, or wrangler would write the files back.
  run.own(() => bundling);
  const bundle = await bundling;
  if (run.aborted) return;

  // The first AGENTS cards of a LARGE directory are those of an AGENTS one (the same generator, in order).
  const synthetic = syntheticDirectory(Math.max(AGENTS, LARGE), SEARCH_WARMUP + QUERIES);
  const cards = synthetic.cards.slice(0, AGENTS);
  const warmupQueries = synthetic.queries.slice(0, SEARCH_WARMUP);
  const queries = synthetic.queries.slice(SEARCH_WARMUP);
  log(`generating ${AGENTS} keys and the in-Node reference index…`);
  const loadAgents = Array.from({ length: AGENTS }, loadAgent);
  const reference = new SearchIndex();
  const buildStart = performance.now();
  cards.forEach((card, i) => reference.upsert(parseCard({ ...card, agent_id: loadAgents[i]!.id }, card.name)));
  const referenceBuildMs = performance.now() - buildStart;
  const skills = cards.reduce((n, card) => n + card.skills.length, 0);

  const first = await startRelay(run, bundle, persistDir);
  log(`part 1: claiming ${AGENTS} inboxes and publishing their cards (${LOAD_CONCURRENCY} in flight)…`);
  const loaded = await loadDirectory(first.relay, loadAgents, cards, log);
  const loadStats = await directoryStats(run.miniflare!);
  // A restart lets go of the RPC proxy's hold on the Directory object, and of the 10,000 Inbox objects.
  log(`  loaded in ${fmt(loaded.load.wallMs / 1000)} s; restarting the relay…`);
  await run.stopMiniflare();
  const { relay: warm } = await startRelay(run, bundle, persistDir);
  log("  searching…");
  const searches = await runSearches(warm, queries, warmupQueries, reference);
  log("  evicting the Directory and Inbox objects…");
  const evictions = await runDirectoryEvictions(run, warm, queries, reference);
  const inboxEvictions = await runInboxEvictions(run, warm, loadAgents);
  log("  restarting the relay on its persisted storage…");
  const { rounds: restarts } = await runRestarts(run, bundle, persistDir, queries, reference);
  log("  marking the persisted index stale and restarting: the first search rebuilds it…");
  const rebuilt = await runRestarts(run, bundle, persistDir, queries, reference, { rounds: 1, firstQuery: EVICTIONS + RESTARTS, beforeStart: invalidateIndex });
  const storage = await directorySize(persistDir);
  const directoryDb = await directorySize(path.join(persistDir, "do", "clawrelay-Directory")).catch(() => ({ files: 0, bytes: Number.NaN }));
  const part1 = { loaded, loadStats, skills, vocabulary: synthetic.vocabulary, referenceBuildMs, searches, evictions, inboxEvictions, restarts, rebuild: rebuilt.rounds[0]!, storage, directoryDb };

  let scale: ScaleFigures | null = null;
  let largeDb = { files: 0, bytes: Number.NaN };
  if (LARGE > AGENTS) {
    scale = await runScale({ run, bundle, persistDir, cards: synthetic.cards, loaded: AGENTS, queries, warmup: warmupQueries, reference, referenceBuildMs, updates: UPDATES, log });
    largeDb = await directorySize(path.join(persistDir, "do", "clawrelay-Directory"));
  }
  const relay = scale?.relay ?? rebuilt.relay;

  log("part 2: two agents and their gateways…");
  const delegation = await runDelegationPart(run, relay, tmpDir, loadAgents[0]!, DELEGATIONS);

  printDirectory(part1, AGENTS, QUERIES);
  if (scale) printScale(scale, part1, largeDb, QUERIES);
  printDelegation(delegation, scale?.cards ?? AGENTS, DELEGATIONS);
  printSummary(part1, scale);
  console.log(`\nwhole run ${fmt((performance.now() - started) / 1000)} s (bundling, key generation, loading, restarts included); load avg now ${loadAverage()}`);
}

await run.run(main, { watchdogMs: WATCHDOG_MS });
