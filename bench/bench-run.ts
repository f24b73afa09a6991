// The frame a bench entry runs in (relay-bench.ts, agent-bench.ts, directory-bench.ts): a temporary
// directory, one Miniflare at a time with a keep-alive client to it, whatever else must be closed, and
// one idempotent clean-up shared by the finally block, a signal and the watchdog.
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Miniflare } from "miniflare";
import { HttpClient } from "./http-client.ts";

export interface RunOptions {
  /** A run still going after this long is aborted (and cleaned up). */
  watchdogMs?: number;
  /**
   * On a signal or the watchdog, release at once (`now` of what is owned, the directory removed) before
   * the clean-up, which Miniflare's own signal handler may cut short. Without it the directory waits for
   * the clean-up or the "exit" hook: a wrangler still writing into it would write the files back.
   */
  releaseFirst?: boolean;
}

interface Owned {
  close: () => unknown;
  /** For a process about to end without waiting (kill a child). */
  now?: () => void;
}

/**
 * CPU time (user + system, ms) used so far by the workerd processes this process started, read from
 * /proc; null where there is none. On a shared machine wall time moves with the neighbours' load, CPU
 * time much less, so the benches print both.
 */
export function workerdCpuMs(): number | null {
  let total: number | null = null;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const fields = stat.slice(close + 2).split(" ");
      // After the name: state, ppid, … utime is field 14 and stime 15 of the file, in clock ticks (100/s).
      if (stat.slice(stat.indexOf("(") + 1, close) !== "workerd" || Number(fields[1]) !== process.pid) continue;
      total = (total ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

export class BenchRun {
  tmpDir: string | null = null;
  private mf: Miniflare | null = null;
  private workerClient: HttpClient | null = null;
  private readonly owned: Owned[] = [];
  private cleaning: Promise<void> | null = null;
  readonly log: (line: string) => void;

  constructor(name: string) {
    this.log = (line) => process.stderr.write(`[${name}] ${line}\n`);
  }

  /** True once the clean-up began: during `main`, a signal or the watchdog. */
  get aborted(): boolean {
    return this.cleaning !== null;
  }

  async makeTmpDir(prefix: string): Promise<string> {
    this.tmpDir = await mkdtemp(path.join(os.tmpdir(), prefix));
    return this.tmpDir;
  }

  /** Closed at the clean-up, newest first, before Miniflare goes; failures there are ignored. */
  own(close: () => unknown, now?: () => void): void {
    this.owned.push({ close, now });
  }

  /** A keep-alive client closed at the clean-up. */
  client(origin: URL | string, maxSockets?: number): HttpClient {
    const c = new HttpClient(typeof origin === "string" ? new URL(origin) : origin, maxSockets);
    this.own(() => c.close());
    return c;
  }

  /** The running Miniflare, if any. */
  get miniflare(): Miniflare | null {
    return this.mf;
  }

  /** Starts the run's Miniflare (one at a time) and a keep-alive client to it. */
  async startMiniflare(start: () => Miniflare): Promise<HttpClient> {
    if (this.cleaning) throw new Error("interrupted");
    const mf = (this.mf = start());
    this.workerClient = new HttpClient(await mf.ready);
    return this.workerClient;
  }

  async stopMiniflare(): Promise<void> {
    this.workerClient?.close();
    this.workerClient = null;
    const mf = this.mf;
    this.mf = null;
    await mf?.dispose();
  }

  cleanUp(): Promise<void> {
    this.cleaning ??= this.disposeAll();
    return this.cleaning;
  }

  private async disposeAll(): Promise<void> {
    // Newest first: agents close their relay sockets while the relay still runs.
    for (const { close } of this.owned.splice(0).reverse()) {
      try {
        await close();
      } catch {
        // the rest must still be closed
      }
    }
    try {
      await this.stopMiniflare();
    } finally {
      const dir = this.tmpDir;
      this.tmpDir = null;
      if (dir) await rm(dir, { recursive: true, force: true });
    }
  }

  /** For a process about to end: no waiting. Retries while a just-killed workerd may still hold files. */
  releaseNow(): void {
    for (const { now } of this.owned) now?.();
    const dir = this.tmpDir;
    this.tmpDir = null;
    if (!dir) return;
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    } catch (err) {
      this.log(`could not remove ${dir}: ${(err as Error).message}`);
    }
  }

  /** Runs `main` under the signal handlers, the "exit" hook and the watchdog; cleans up at the end. */
  async run(main: () => Promise<void>, options: RunOptions = {}): Promise<void> {
    // While Miniflare runs, its own signal handler (registered after this one) kills workerd and exits
    // the process right after this returns; the "exit" hook then releases what is left.
    const abort = (why: string, exitCode: number) => {
      this.log(why);
      if (options.releaseFirst) this.releaseNow();
      void this.cleanUp().finally(() => process.exit(exitCode));
    };
    const onSignal = (signal: NodeJS.Signals) => abort(`${signal}: cleaning up`, 130);
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    process.once("exit", () => this.releaseNow());
    const { watchdogMs } = options;
    const watchdog = watchdogMs === undefined ? undefined : setTimeout(() => abort(`still running after ${watchdogMs / 1000} s: aborting`, 1), watchdogMs);
    watchdog?.unref();
    try {
      await main();
    } catch (err) {
      // After a signal, whatever main was doing fails as the clean-up pulls things away: not worth a trace.
      if (!this.aborted) console.error("bench failed:", err);
      process.exitCode = 1;
    } finally {
      await this.cleanUp();
      clearTimeout(watchdog);
    }
  }
}
