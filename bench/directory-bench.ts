// npm run bench:directory: the agent directory and delegation on the real relay, each figure against a
// baseline measured in the same run.
//   1. POST /directory/search on a 10,000-agent directory vs GET /healthz (concurrency 1, interleaved);
//      the Directory object's cold start (evicted with Miniflare's unsafeEvictDurableObject, and after a
//      workerd restart on persisted storage), against the same for one agent's Inbox object;
//   2. delegation round trip: POST /api/delegate-task on a requester agent -> relay -> target agent ->
//      its stand-in gateway's /v1/chat/completions (answers at once) -> result back, vs the same chat
//      completion posted straight to that gateway; concurrency 1 and 8.
// The relay Worker (wrangler deploy --dry-run bundle) runs in Miniflare 5; the agents run in this process
// (local-agent/agent.ts startAgent, as test/support/node/stack.ts does); all on 127.0.0.1. Prints, asserts
// only that answers are right. Options: --agents 10000 --queries 200 --delegations 200.
// Part 1: directory-load.ts, directory-search-bench.ts, directory-cold-start.ts, directory-report.ts;
// part 2: delegation-bench.ts (delegation-agents.ts, delegation-pieces.ts), delegation-report.ts.
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { bundleWorker } from "../scripts/local-workerd.ts";
import { parseCard } from "../worker/directory/card.ts";
import { SearchIndex } from "../worker/directory/search-index.ts";
import { loadAverage, printHeader } from "./bench-header.ts";
import { BenchRun } from "./bench-run.ts";
import { runDelegationPart } from "./delegation-bench.ts";
import { printDelegation } from "./delegation-report.ts";
import { syntheticDirectory } from "./directory-cards.ts";
import { runDirectoryEvictions, runInboxEvictions, runRestarts, startRelay } from "./directory-cold-start.ts";
import { LOAD_CONCURRENCY, loadAgent, loadDirectory } from "./directory-load.ts";
import { printDirectory } from "./directory-report.ts";
import { runSearches, SEARCH_WARMUP } from "./directory-search-bench.ts";
import { fmt } from "./stats.ts";

const { values: args } = parseArgs({
  options: {
    agents: { type: "string", default: "10000" },
    queries: { type: "string", default: "200" },
    delegations: { type: "string", default: "200" },
  },
});
const AGENTS = Number(args.agents);
const QUERIES = Number(args.queries);
const DELEGATIONS = Number(args.delegations);
/**
 * Pause after the load: workerd evicts an object 10 s after its last request, so without it the
 * evictions of the last-loaded inboxes would run during the measurements. The Directory object is
 * evicted too; the warm-up searches pay its cold start.
 */
const SETTLE_MS = 12_000;
/** The whole run is aborted (and cleaned up) past this. */
const WATCHDOG_MS = 270_000;

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

  const synthetic = syntheticDirectory(AGENTS, SEARCH_WARMUP + QUERIES);
  const warmupQueries = synthetic.queries.slice(0, SEARCH_WARMUP);
  const queries = synthetic.queries.slice(SEARCH_WARMUP);
  log(`generating ${AGENTS} keys and the in-Node reference index…`);
  const loadAgents = Array.from({ length: AGENTS }, loadAgent);
  const reference = new SearchIndex();
  synthetic.cards.forEach((card, i) => reference.upsert(parseCard({ ...card, agent_id: loadAgents[i]!.id }, card.name)));
  const skills = synthetic.cards.reduce((n, card) => n + card.skills.length, 0);

  const first = await startRelay(run, bundle, persistDir);
  log(`part 1: claiming ${AGENTS} inboxes and publishing their cards (${LOAD_CONCURRENCY} in flight)…`);
  const loaded = await loadDirectory(first.relay, loadAgents, synthetic.cards, log);
  log(`  loaded in ${fmt(loaded.load.wallMs / 1000)} s; waiting ${SETTLE_MS / 1000} s for workerd to evict the idle Inbox objects…`);
  await sleep(SETTLE_MS);
  log("  searching…");
  const searches = await runSearches(first.relay, queries, warmupQueries, reference);
  log("  evicting the Directory and Inbox objects…");
  const evictions = await runDirectoryEvictions(run, first.relay, queries, reference);
  const inboxEvictions = await runInboxEvictions(run, first.relay, loadAgents);
  log("  restarting the relay on its persisted storage…");
  const { relay, rounds: restarts } = await runRestarts(run, bundle, persistDir, queries, reference);
  const storage = await directorySize(persistDir);
  const directoryDb = await directorySize(path.join(persistDir, "do", "clawrelay-Directory")).catch(() => ({ files: 0, bytes: Number.NaN }));

  log("part 2: two agents and their gateways…");
  const delegation = await runDelegationPart(run, relay, tmpDir, loadAgents[0]!, DELEGATIONS);

  printDirectory({ loaded, skills, vocabulary: synthetic.vocabulary, searches, evictions, inboxEvictions, restarts, storage, directoryDb }, AGENTS, QUERIES);
  printDelegation(delegation, AGENTS, DELEGATIONS);
  console.log(`\nwhole run ${fmt((performance.now() - started) / 1000)} s (bundling, key generation, loading, restarts included); load avg now ${loadAverage()}`);
}

await run.run(main, { watchdogMs: WATCHDOG_MS });
