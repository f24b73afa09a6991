// The directory scenario's timed steps on the relay and the two parts they make up: the load, warm searches against
// GET /healthz, the Directory object's cold start after evictions and restarts vs an Inbox object's, answers checked.
import { generateKeyPairSync, sign as nodeSign } from "node:crypto";
import type { KeyObject } from "node:crypto";
import type { CardFile } from "../local-agent/society/card-file.ts";
import { defaultKeyIdFor } from "../protocol/index.ts";
import { startRelayMiniflare } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import { parseCard } from "../worker/directory/card.ts";
import type { SearchIndex } from "../worker/directory/search-index.ts";
import type { BenchRun } from "./bench-run.ts";
import { DIRECTORY_NAME, diskUsage, directoryDir, directoryStats, editDirectoryDb, insertCards, invalidateIndex, publishThroughRpc, syntheticAgentId } from "./directory-storage.ts";
import type { HttpClient } from "./http-client.ts";
import { runClosedLoop } from "./http-client.ts";
import { fmt } from "./report.ts";
import { LOOPBACK_HUB_URL, benchAgent, claimInbox, signedCall } from "./relay-agents.ts";
import type { BenchAgent } from "./relay-agents.ts";

/** Claim + publish requests in flight while loading the directory (workerd is CPU-bound past ~8). */
export const LOAD_CONCURRENCY = 16;
export const [SEARCH_LIMIT, SEARCH_WARMUP, EVICTIONS, AFTER_EVICTION, RESTARTS] = [10, 20, 5, 12, 2];
type Searcher = { queries: string[]; reference: SearchIndex };
const rawPublicKey = (key: KeyObject) => "ed25519:" + Buffer.from(key.export({ format: "jwk" }).x!, "base64url").toString("base64");
const timed = async (run: () => Promise<unknown>) => {
  const start = performance.now();
  await run();
  return performance.now() - start;
};

/** A directory agent signing with a Node KeyObject: ~20× cheaper than pure JS, so the load stays quick. */
export async function loadAgent(): Promise<BenchAgent> {
  const [main, receipt] = [generateKeyPairSync("ed25519"), generateKeyPairSync("ed25519")];
  const receiptKey = { key_id: await defaultKeyIdFor(rawPublicKey(receipt.publicKey)), private_key: Buffer.from(receipt.privateKey.export({ format: "jwk" }).d!, "base64url").toString("base64") };
  return benchAgent(rawPublicKey(main.publicKey), async (message) => new Uint8Array(nodeSign(null, message, main.privateKey)), receiptKey);
}

export async function loadDirectory(run: BenchRun, relay: HttpClient, agents: BenchAgent[], cards: CardFile[]) {
  const [claimMs, publishMs] = [[] as number[], [] as number[]];
  const progress = setInterval(() => run.log(`  ${publishMs.length}/${agents.length} agents claimed and published`), 15_000);
  const load = await runClosedLoop(agents.length, LOAD_CONCURRENCY, async (i) => {
    const [agent, card] = [agents[i]!, cards[i]!];
    const claim = await timed(() => claimInbox(relay, agent, {}));
    const publish = await timed(() => signedCall(relay, agent, "PUT", `/directory/agents/${card.name}`, 201, { ...card, agent_id: agent.id }));
    claimMs.push(claim), publishMs.push(publish);
    return claim + publish;
  }).finally(() => clearInterval(progress));
  return { load, claimMs, publishMs };
}

async function search(relay: HttpClient, s: Searcher, q: number, check = true) {
  const query = s.queries[q % s.queries.length]!;
  const start = performance.now();
  const answer = await relay.request("POST", "/directory/search", { "content-type": "application/json" }, JSON.stringify({ query, limit: SEARCH_LIMIT }));
  const ms = performance.now() - start;
  if (answer.status !== 200) throw new Error(`search "${query}" -> ${answer.status}: ${answer.body.slice(0, 300)}`);
  const hits = (JSON.parse(answer.body) as { agents: { name: string; best_skill_id: string | null }[] }).agents.map((a) => `${a.name}/${a.best_skill_id}`);
  const expected = check ? s.reference.search(query, SEARCH_LIMIT).map((h) => `${h.card.name}/${h.best_skill_id}`) : [];
  return { ms, bytes: Buffer.byteLength(answer.body), hits: hits.length, same: check && expected.join("\n") === hits.join("\n") };
}

async function searchesFrom(relay: HttpClient, s: Searcher, first: number, next: number) {
  const head = await search(relay, s, first);
  const allMs = [head.ms];
  for (let i = 0; i < AFTER_EVICTION; i++) allMs.push((await search(relay, s, next + i, false)).ms);
  return { firstMs: head.ms, secondMs: allMs[1]!, warmMs: allMs.slice(3), allMs, firstCorrect: head.same };
}

/** Each query right after a GET /healthz (interleaved: both see the same moment of the machine), then on the in-Node index alone. */
export async function runSearches(relay: HttpClient, s: Searcher, warmup: string[]) {
  const healthz = () => relay.timed("GET", "/healthz", 200);
  for (const query of warmup) await healthz(), await search(relay, { ...s, queries: [query] }, 0, false);
  const f = { searchMs: [] as number[], healthzMs: [] as number[], bytes: [] as number[], hitCounts: [] as number[], sameAsReference: 0, nodeIndexMs: [] as number[] };
  for (let q = 0; q < s.queries.length; q++) {
    f.healthzMs.push(await healthz());
    const answer = await search(relay, s, q);
    f.searchMs.push(answer.ms), f.bytes.push(answer.bytes), f.hitCounts.push(answer.hits), (f.sameAsReference += answer.same ? 1 : 0);
  }
  for (const query of [...warmup, ...s.queries]) s.reference.search(query, SEARCH_LIMIT);
  for (const query of s.queries) {
    const start = performance.now();
    s.reference.search(query, SEARCH_LIMIT);
    f.nodeIndexMs.push(performance.now() - start);
  }
  return f;
}
export type SearchFigures = Awaited<ReturnType<typeof runSearches>>;

export async function runDirectoryEvictions(run: BenchRun, relay: HttpClient, s: Searcher) {
  const rounds = [];
  for (let r = 0; r < EVICTIONS; r++) {
    const evictMs = await timed(() => run.miniflare!.unsafeEvictDurableObject("clawrelay", "Directory", { name: DIRECTORY_NAME }));
    rounds.push({ evictMs, ...(await searchesFrom(relay, s, r, r + 1)) });
  }
  return rounds;
}
export type ColdRound = Awaited<ReturnType<typeof runDirectoryEvictions>>[number];

/** Baseline: the same for one agent's Inbox object (config + an empty queue in SQLite), a signed poll. */
export async function runInboxEvictions(run: BenchRun, relay: HttpClient, agents: BenchAgent[]) {
  const rounds = [];
  for (let r = 0; r < EVICTIONS; r++) {
    const agent = agents[(r * 997) % agents.length]!;
    const poll = () => timed(() => signedCall(relay, agent, "GET", `/inbox/${agent.id}/messages?after=0&limit=1`, 200));
    await poll(); // warm first, so the eviction is what the next poll pays for
    await run.miniflare!.unsafeEvictDurableObject("clawrelay", "Inbox", { name: agent.id });
    const [firstMs, warmMs] = [await poll(), [] as number[]];
    for (let i = 0; i < 10; i++) warmMs.push(await poll());
    rounds.push({ firstMs, warmMs });
  }
  return rounds;
}

export async function startRelay(run: BenchRun, bundle: WorkerBundle, persistDir: string) {
  const start = performance.now();
  // No embedding model: this measures the lexical index under 10,000+ synthetic cards, and the local
  // model at ~30 ms a card would turn the load into minutes of embedding that measures nothing here.
  const relay = await run.startMiniflare(() => startRelayMiniflare(bundle, LOOPBACK_HUB_URL, { persistDir, embeddings: "off" }));
  return { relay, readyMs: performance.now() - start };
}

export async function runRestarts(run: BenchRun, bundle: WorkerBundle, persistDir: string, s: Searcher, rounds: number, firstQuery: number, beforeStart?: () => Promise<void>) {
  const results = [];
  let relay: HttpClient | null = null;
  for (let round = 0; round < rounds; round++) {
    await run.stopMiniflare();
    await beforeStart?.();
    const started = await startRelay(run, bundle, persistDir);
    relay = started.relay;
    const healthzMs = await relay.timed("GET", "/healthz", 200);
    results.push({ readyMs: started.readyMs, healthzMs, ...(await searchesFrom(relay, s, firstQuery + round, round * 31)) });
  }
  return { relay: relay!, rounds: results };
}
export type RestartRound = Awaited<ReturnType<typeof runRestarts>>["rounds"][number];

/** Card updates published over RPC at full size: past one commit (1,000 changed cards), the rest pending. */
export const UPDATE_CONCURRENCY = 16;

export type Context = { run: BenchRun; bundle: WorkerBundle; persistDir: string; s: Searcher; warmup: string[] };

/** Part 1: the directory loaded over HTTP, restarted, searched; evictions, restarts, and a full rebuild. */
export async function measurePart1({ run, bundle, persistDir, s, warmup }: Context, agents: BenchAgent[], cards: CardFile[]) {
  const first = await startRelay(run, bundle, persistDir);
  run.log(`part 1: claiming ${cards.length} inboxes and publishing their cards…`);
  const loaded = await loadDirectory(run, first.relay, agents, cards);
  const loadStats = await directoryStats(run.miniflare!);
  // A restart lets go of the RPC proxy's hold on the Directory object, and of the 10,000 Inbox objects.
  run.log(`  loaded in ${fmt(loaded.load.wallMs / 1000)} s; restarting the relay, then searching…`);
  await run.stopMiniflare();
  const { relay } = await startRelay(run, bundle, persistDir);
  const searches = await runSearches(relay, s, warmup);
  const evictions = await runDirectoryEvictions(run, relay, s);
  const inboxEvictions = await runInboxEvictions(run, relay, agents);
  run.log("  restarting the relay on its persisted storage, then with the index marked stale (the first search rebuilds it)…");
  const { rounds: restarts } = await runRestarts(run, bundle, persistDir, s, RESTARTS, EVICTIONS);
  const rebuilt = await runRestarts(run, bundle, persistDir, s, 1, EVICTIONS + RESTARTS, () => editDirectoryDb(persistDir, invalidateIndex));
  const [storage, directoryDb] = [await diskUsage(persistDir), await diskUsage(directoryDir(persistDir))];
  return { relay: rebuilt.relay, loaded, loadStats, skills: cards.reduce((n, c) => n + c.skills.length, 0), searches, evictions, inboxEvictions, restarts, rebuild: rebuilt.rounds[0]!, storage, directoryDb };
}

// Part 1b: the cards beyond part 1's inserted into SQLite while workerd is down, the index marked stale so the first
// search rebuilds it (the baseline); evictions, searches, card updates over RPC (one index commit, the rest left
// pending for every start to replay), restarts, evictions again.
export async function growDirectory({ run, bundle, persistDir, s, warmup }: Context, all: CardFile[], loaded: number, updates: number, loadedBuildMs: number) {
  const added = all.slice(loaded);
  run.log(`part 1b: ${all.length} cards: extending the in-Node reference, inserting into SQLite, restarting: the first search rebuilds…`);
  const start = performance.now();
  added.forEach((card, i) => s.reference.upsert(parseCard({ ...card, agent_id: syntheticAgentId(loaded + i) }, card.name)));
  const referenceBuildMs = loadedBuildMs + performance.now() - start;
  const grown = await runRestarts(run, bundle, persistDir, s, 1, 2 * EVICTIONS + RESTARTS + 1, () => editDirectoryDb(persistDir, (db) => (insertCards(db, added, loaded), invalidateIndex(db))));
  // Evictions before any RPC call: Miniflare's RPC proxy holds the object until a restart.
  const idleEvictions = await runDirectoryEvictions(run, grown.relay, s);
  const searches = await runSearches(grown.relay, s, warmup);
  const searchedStats = await directoryStats(run.miniflare!);
  // Cards of part 1b take other cards' content under their own name and agent id.
  const updated = Array.from({ length: Math.min(updates, added.length) }, (_, j) => {
    const [into, from] = [all[loaded + j]!, all[(loaded + j + Math.floor(added.length / 2)) % all.length]!];
    return parseCard({ ...from, name: into.name, agent_id: syntheticAgentId(loaded + j) }, into.name);
  });
  const beforeUpdates = await directoryStats(run.miniflare!);
  const updateLoad = await publishThroughRpc(run.miniflare!, updated, 1, UPDATE_CONCURRENCY);
  const afterUpdates = await directoryStats(run.miniflare!);
  for (const card of updated) s.reference.upsert(card);
  // Restarts first: they also let go of the RPC proxy's hold on the object, which an eviction waits for.
  const restarted = await runRestarts(run, bundle, persistDir, s, RESTARTS, 2 * EVICTIONS + RESTARTS + 2);
  const evictions = await runDirectoryEvictions(run, restarted.relay, s);
  return {
    relay: restarted.relay, cards: all.length, skills: all.reduce((n, c) => n + c.skills.length, 0), referenceBuildMs, rebuild: grown.rounds[0]!, idleEvictions, searches,
    searchedStats, updates: updateLoad, beforeUpdates, afterUpdates, evictions, restarts: restarted.rounds, db: await diskUsage(directoryDir(persistDir)),
  };
}
export type Scale = Awaited<ReturnType<typeof growDirectory>>;
export type Part1 = Awaited<ReturnType<typeof measurePart1>> & { vocabulary: number; referenceBuildMs: number };
