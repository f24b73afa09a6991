// The frame bench/run.ts runs a scenario in: a temporary directory, one Miniflare at a time with a client to it,
// whatever else must be closed, and one idempotent clean-up for the finally block, a signal and the watchdog.
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Miniflare } from "miniflare";
import { bundleWorker } from "../scripts/local-workerd.ts";
import type { WorkerBundle } from "../scripts/local-workerd.ts";
import { HttpClient } from "./http-client.ts";

export class BenchRun {
  miniflare: Miniflare | null = null;
  /** The run's temporary directory, made before the scenario and removed at the clean-up. */
  dir = "";
  private workerClient: HttpClient | null = null;
  /** `close` at the clean-up, newest first; `now` for a process about to end without waiting. */
  private readonly owned: { close: () => unknown; now: (() => void) | undefined }[] = [];
  private cleaning: Promise<void> | null = null;
  private readonly name: string;
  readonly log: (line: string) => void;

  constructor(name: string) {
    this.name = name;
    this.log = (line) => process.stderr.write(`[${name}] ${line}\n`);
  }

  own(close: () => unknown, now?: () => void): void {
    this.owned.push({ close, now });
  }

  client(origin: string, maxSockets?: number): HttpClient {
    const c = new HttpClient(origin, maxSockets);
    this.own(() => c.close());
    return c;
  }

  /** Bundles each wrangler config as `wrangler deploy` does; the clean-up waits for every wrangler, or it would write its files back. */
  async bundle(...configs: string[]): Promise<WorkerBundle[]> {
    this.log(`bundling ${configs.join(", ")} (wrangler deploy --dry-run)…`);
    const bundling = Promise.allSettled(configs.map((config, i) => bundleWorker(config, path.join(this.dir, `bundle-${i}`))));
    this.own(() => bundling);
    const bundles = await bundling;
    const failed = bundles.find((b): b is PromiseRejectedResult => b.status === "rejected");
    if (failed || this.cleaning) throw failed?.reason ?? new Error("interrupted");
    return bundles.map((b) => (b as PromiseFulfilledResult<WorkerBundle>).value);
  }

  async startMiniflare(start: () => Miniflare): Promise<HttpClient> {
    if (this.cleaning) throw new Error("interrupted");
    const mf = (this.miniflare = start());
    return (this.workerClient = new HttpClient(await mf.ready));
  }

  async stopMiniflare(): Promise<void> {
    const mf = this.miniflare;
    this.workerClient?.close();
    [this.workerClient, this.miniflare] = [null, null];
    await mf?.dispose();
  }

  private cleanUp(): Promise<void> {
    return (this.cleaning ??= (async () => {
      // Newest first: agents close their relay sockets while the relay still runs; a failure must not stop the rest.
      for (const { close } of this.owned.splice(0).reverse()) await Promise.resolve().then(close).catch(() => {});
      await this.stopMiniflare().finally(async () => {
        const dir = this.dir;
        this.dir = "";
        if (dir) await rm(dir, { recursive: true, force: true });
      });
    })());
  }

  /** For a process about to end: no waiting. Retries while a just-killed workerd may still hold files. */
  private releaseNow(): void {
    for (const { now } of this.owned) now?.();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    this.dir = "";
  }

  async run(main: () => Promise<void>, watchdogMs?: number): Promise<void> {
    // Released at once: Miniflare's own signal handler (registered after this one) kills workerd and may exit the
    // process before the clean-up ends; the "exit" hook releases what is left.
    const abort = (why: string, exitCode: number) => {
      this.log(why);
      this.releaseNow();
      void this.cleanUp().finally(() => process.exit(exitCode));
    };
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => abort(`${signal}: cleaning up`, 130));
    process.once("exit", () => this.releaseNow());
    const watchdog = watchdogMs === undefined ? undefined : setTimeout(() => abort(`still running after ${watchdogMs / 1000} s: aborting`, 1), watchdogMs).unref();
    try {
      this.dir = await mkdtemp(path.join(os.tmpdir(), `clawrelay-${this.name.replace(":", "-")}-`));
      await main();
    } catch (err) {
      // After a signal, whatever main was doing fails as the clean-up pulls things away: not worth a trace.
      if (!this.cleaning) console.error("bench failed:", err);
      process.exitCode = 1;
    } finally {
      await this.cleanUp();
      clearTimeout(watchdog);
    }
  }
}
