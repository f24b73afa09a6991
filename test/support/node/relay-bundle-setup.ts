// vitest globalSetup for the Node project: bundles the relay Worker once (wrangler --dry-run,
// offline) and hands the bundle to the end-to-end tests, which run it in Miniflare.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { bundleWorker } from "../../../scripts/local-workerd.ts";
import type { WorkerBundle } from "../../../scripts/local-workerd.ts";

declare module "vitest" {
  interface ProvidedContext {
    relayBundle: WorkerBundle;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const outdir = await mkdtemp(join(tmpdir(), "clawrelay-bundle-"));
  project.provide("relayBundle", await bundleWorker("wrangler.toml", outdir));
  return () => rm(outdir, { recursive: true, force: true });
}
