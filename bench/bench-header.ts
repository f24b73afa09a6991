// The lines every bench entry (relay-bench.ts, agent-bench.ts, directory-bench.ts) starts its report
// with: what ran, on which machine, with which software.
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "../scripts/local-workerd.ts";

export const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");

/** The first three lines every bench prints: what, the machine, the software. */
export async function printHeader(title: string, nodeNote = ""): Promise<void> {
  const cpus = os.cpus();
  console.log(`${title}, ${new Date().toISOString()}`);
  console.log(`machine: nproc ${os.availableParallelism()} (${cpus[0]?.model.trim() ?? "unknown CPU"}), ${os.platform()} ${os.release()}, load avg ${loadAverage()}`);
  console.log(`software: Node ${process.version}${nodeNote}, workerd ${await versionOf("workerd")}, miniflare ${await versionOf("miniflare")}, wrangler ${await versionOf("wrangler")}`);
}

async function versionOf(pkg: string): Promise<string> {
  const json = JSON.parse(await readFile(path.join(REPO_ROOT, "node_modules", pkg, "package.json"), "utf8")) as { version: string };
  return json.version;
}
