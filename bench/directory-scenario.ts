// `npm run bench:directory`: search on 10,000 agents and the Directory object's cold start (1), the same at 100,000
// cards (1b, `--large 0` skips it), and the delegation round trip (2), each against a baseline of the same run.
import path from "node:path";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import { parseCard } from "../worker/directory/card.ts";
import { SearchIndex } from "../worker/directory/search-index.ts";
import type { BenchRun } from "./bench-run.ts";
import { printDelegation, printPart1, printScale, printSummary } from "./directory-report.ts";
import { runDelegation } from "./delegation-run.ts";
import { syntheticDirectory } from "./directory-cards.ts";
import { SEARCH_WARMUP, growDirectory, loadAgent, measurePart1 } from "./directory-rounds.ts";
import type { Context, Part1 } from "./directory-rounds.ts";

export async function directoryScenario(run: BenchRun, args: Record<string, number>): Promise<void> {
  const { agents, large, updates, queries, delegations } = args as Record<"agents" | "large" | "updates" | "queries" | "delegations", number>;
  console.log(`all traffic on 127.0.0.1; this process (load client, agents, gateways) and workerd share the same cores`);
  const [tmpDir, [bundle]] = [run.dir, (await run.bundle("wrangler.toml")) as [WorkerBundle]];
  // The first `agents` cards of a `large` directory are those of an `agents` one (the same generator, in order).
  const synthetic = syntheticDirectory(Math.max(agents, large), SEARCH_WARMUP + queries);
  const loadAgents = await Promise.all(Array.from({ length: agents }, loadAgent));
  const ctx: Context = { run, bundle, persistDir: path.join(tmpDir, "relay-state"), s: { queries: synthetic.queries.slice(SEARCH_WARMUP), reference: new SearchIndex() }, warmup: synthetic.queries.slice(0, SEARCH_WARMUP) };
  const start = performance.now();
  synthetic.cards.slice(0, agents).forEach((card, i) => ctx.s.reference.upsert(parseCard({ ...card, agent_id: loadAgents[i]!.id }, card.name)));
  const referenceBuildMs = performance.now() - start;
  const part1: Part1 = { ...(await measurePart1(ctx, loadAgents, synthetic.cards.slice(0, agents))), vocabulary: synthetic.vocabulary, referenceBuildMs };
  const scale = large > agents ? await growDirectory(ctx, synthetic.cards, agents, updates, referenceBuildMs) : null;
  run.log("part 2: two agents and their gateways…");
  const delegation = await runDelegation(run, scale?.relay ?? part1.relay, tmpDir, delegations);
  printPart1(part1, queries);
  if (scale) printScale(scale, part1, queries);
  printDelegation(delegation, scale?.cards ?? agents, delegations);
  printSummary(part1, scale);
}
