// Child processes for bench/agent-bench.ts: the real local agent (`node local-agent/cli.ts start --json`)
// and a bare Node baseline, both spawned from the bench's own Node binary with the same environment,
// so /proc/<pid>/status reads the Node process itself (no shell or npm wrapper in between).
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const STOP_GRACE_MS = 3000;

export interface LogLine {
  event: string;
  [field: string]: unknown;
}

/** One spawned Node process; stderr lines that parse as JSON objects with an `event` are kept as events. */
export class NodeChild {
  readonly label: string;
  readonly pid: number;
  /** `delivered` events: relay id -> latency_ms (gateway accept − relay received_at), as the agent logged it. */
  readonly delivered = new Map<number, number>();
  readonly events: LogLine[] = [];
  /** Last lines that were not JSON events (warnings, crash traces), for error messages. */
  readonly otherLines: string[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  private exitInfo: string | null = null;
  private readonly listeners = new Set<() => void>();

  /** `node`: the Node binary to run (default: this process's). */
  constructor(label: string, args: string[], env: Record<string, string>, cwd: string, node = process.execPath) {
    this.label = label;
    this.child = spawn(node, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    if (this.child.pid === undefined) throw new Error(`could not spawn ${label}`);
    this.pid = this.child.pid;
    this.exited = new Promise((resolve) => {
      this.child.once("exit", (code, signal) => {
        this.exitInfo = signal ? `signal ${signal}` : `code ${code}`;
        this.notify();
        resolve();
      });
    });
    const lines = createInterface({ input: this.child.stderr! });
    lines.on("line", (line) => this.onLine(line));
  }

  get running(): boolean {
    return this.exitInfo === null;
  }

  private onLine(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      value = null;
    }
    if (typeof value === "object" && value !== null && typeof (value as LogLine).event === "string") {
      const event = value as LogLine;
      this.events.push(event);
      if (event.event === "delivered" && typeof event.id === "number" && typeof event.latency_ms === "number") {
        this.delivered.set(event.id, event.latency_ms);
      }
    } else {
      this.otherLines.push(line);
      if (this.otherLines.length > 20) this.otherLines.shift();
    }
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Resolves once `check` holds (re-checked on every stderr line); fails on exit or after `timeoutMs`. */
  until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        if (err) reject(err);
        else resolve();
      };
      const listener = () => {
        if (check()) done();
        else if (!this.running) done(new Error(`${this.label} exited (${this.exitInfo}) while waiting for ${what}; stderr: ${this.otherLines.join(" | ") || "(none)"}`));
      };
      const timer = setTimeout(() => done(new Error(`${this.label}: timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      this.listeners.add(listener);
      listener();
    });
  }

  waitForEvent(event: string, timeoutMs: number): Promise<void> {
    return this.until(`log event "${event}"`, () => this.events.some((e) => e.event === event), timeoutMs);
  }

  /** VmRSS and VmHWM (peak RSS so far) in KiB from /proc/<pid>/status. */
  /** VmRSS, VmHWM, and RssAnon: the private part of VmRSS (the rest is the node binary and libraries, file-backed and shared). */
  memory(): { rssKiB: number; hwmKiB: number; anonKiB: number } {
    const status = readFileSync(`/proc/${this.pid}/status`, "utf8");
    const field = (name: string) => {
      const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status);
      if (!match) throw new Error(`no ${name} in /proc/${this.pid}/status`);
      return Number(match[1]);
    };
    return { rssKiB: field("VmRSS"), hwmKiB: field("VmHWM"), anonKiB: field("RssAnon") };
  }

  /** SIGTERM (the agent closes its socket and exits 0), SIGKILL after a grace period. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (this.running) this.child.kill("SIGKILL");
        resolve();
      }, STOP_GRACE_MS);
    });
    await Promise.race([this.exited, killed]);
    await this.exited;
    clearTimeout(timer);
  }

  /** For a process about to exit: no waiting. */
  killNow(): void {
    if (this.running) this.child.kill("SIGKILL");
  }
}

/** Samples VmRSS of `child` every `intervalMs` until stopped; returns the samples (KiB). */
export function sampleRss(child: NodeChild, intervalMs: number): { stop(): { samplesKiB: number[]; spanMs: number } } {
  const samplesKiB: number[] = [];
  const start = performance.now();
  const take = () => {
    if (child.running) samplesKiB.push(child.memory().rssKiB);
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return { samplesKiB, spanMs: performance.now() - start };
    },
  };
}
