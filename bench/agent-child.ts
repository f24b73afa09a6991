// A Node child of the agent scenario, the built local agent or a bare Node baseline, spawned straight from a
// Node binary (no shell or npm between) so /proc/<pid>/status reads the Node process itself.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

export type Memory = { rss: number[]; anon: number[] };

/** Keeps stderr lines that parse as JSON objects with an `event`; the last other lines go into error messages. */
export class NodeChild {
  /** `delivered` events: relay id -> latency_ms (gateway accept − relay received_at), as the agent logged it. */
  readonly delivered = new Map<number, number>();
  readonly events: { event: string; id?: unknown; latency_ms?: unknown }[] = [];
  private readonly otherLines: string[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly child;
  private readonly exited: Promise<void>;
  private exitInfo: string | null = null;
  private readonly label: string;

  constructor(label: string, bin: string, args: string[], env: Record<string, string>, cwd: string) {
    this.label = label;
    this.child = spawn(bin, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => ((this.exitInfo = signal ? `signal ${signal}` : `code ${code}`), this.notify(), resolve())));
    createInterface({ input: this.child.stderr }).on("line", (line) => {
      let e: unknown = null;
      try { e = JSON.parse(line); } catch { /* not an event */ }
      if (typeof e !== "object" || e === null || typeof (e as { event?: unknown }).event !== "string") {
        if (this.otherLines.push(line) > 20) this.otherLines.shift();
      } else if (this.events.push(e as NodeChild["events"][number]) && (e as { event: string }).event === "delivered") {
        const { id, latency_ms } = e as { id?: unknown; latency_ms?: unknown };
        if (typeof id === "number" && typeof latency_ms === "number") this.delivered.set(id, latency_ms);
      }
      this.notify();
    });
  }

  get running(): boolean { return this.exitInfo === null; }
  private notify(): void { for (const listener of [...this.listeners]) listener(); }

  until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => (clearTimeout(timer), this.listeners.delete(listener), err ? reject(err) : resolve());
      const listener = () =>
        check() ? done() : this.running || done(new Error(`${this.label} exited (${this.exitInfo}) while waiting for ${what}; stderr: ${this.otherLines.join(" | ") || "(none)"}`));
      const timer = setTimeout(() => done(new Error(`${this.label}: timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
      this.listeners.add(listener);
      listener();
    });
  }

  waitForEvent(event: string, timeoutMs = 20_000): Promise<void> {
    return this.until(`log event "${event}"`, () => this.events.some((e) => e.event === event), timeoutMs);
  }

  /** VmRSS, VmHWM (peak so far) and RssAnon (the private part of VmRSS; the rest is file-backed, shared) in KiB. */
  memory(): { rss: number; hwm: number; anon: number } {
    const status = readFileSync(`/proc/${this.child.pid}/status`, "utf8");
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rss: field("VmRSS"), hwm: field("VmHWM"), anon: field("RssAnon") };
  }

  sampleRss(everyMs: number): { stop(): { samples: number[]; spanMs: number } } {
    const [samples, start] = [[] as number[], performance.now()];
    const take = () => this.running && samples.push(this.memory().rss);
    const timer = (take(), setInterval(take, everyMs));
    let spanMs: number | null = null;
    return { stop: () => ({ samples, spanMs: (spanMs ??= (clearInterval(timer), take(), performance.now() - start)) }) };
  }

  /** SIGTERM (the agent closes its socket and exits 0), SIGKILL after a 3 s grace period. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.killNow(), 3000);
    await this.exited;
    clearTimeout(timer);
  }

  killNow(): void { if (this.running) this.child.kill("SIGKILL"); }
}

export async function readMemory(children: NodeChild[], everyMs: number): Promise<Memory[]> {
  const readings = children.map((): Memory => ({ rss: [], anon: [] }));
  for (let i = 0; i < 10; i++, await new Promise((resolve) => setTimeout(resolve, everyMs))) {
    for (const [k, child] of children.entries()) ((m) => (readings[k]!.rss.push(m.rss), readings[k]!.anon.push(m.anon)))(child.memory());
  }
  return readings;
}
