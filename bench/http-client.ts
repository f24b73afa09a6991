// The load every scenario puts on a server: a keep-alive node:http client (on 2 cores it competes with
// workerd for CPU, and costs ~2.5× less than fetch, measured here), closed loops, and workerd's CPU time.
import { readFileSync, readdirSync } from "node:fs";
import http from "node:http";

export class HttpClient {
  readonly origin: URL;
  private readonly agent: http.Agent;

  constructor(origin: URL | string, maxSockets = 64) {
    this.origin = new URL(origin);
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  request(method: string, path: string, headers: Record<string, string> = {}, body?: string | Uint8Array): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const sized = body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) };
      const req = http.request({ host: this.origin.hostname, port: this.origin.port, method, path, agent: this.agent, headers: sized }, (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk)).on("error", reject);
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("error", reject).end(body);
    });
  }

  async timed(method: string, path: string, expectStatus: number, headers?: Record<string, string>, body?: string | Uint8Array): Promise<number> {
    const start = performance.now();
    const answer = await this.request(method, path, headers, body);
    const elapsed = performance.now() - start;
    if (answer.status !== expectStatus) throw new Error(`${method} ${path} -> ${answer.status} (expected ${expectStatus}): ${answer.body.slice(0, 300)}`);
    return elapsed;
  }

  close(): void { this.agent.destroy(); }
}

export type LoadResult = { count: number; concurrency: number; wallMs: number; latenciesMs: number[] };

/** Operations 0..count-1, `concurrency` in flight, each worker starting its next as its last one ends; `op` returns its latency (ms). */
export async function runClosedLoop(count: number, concurrency: number, op: (index: number) => Promise<number>): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let [next, failed] = [0, false];
  const worker = async () => {
    try {
      while (next < count && !failed) latenciesMs.push(await op(next++));
    } catch (err) {
      failed = true; // the other workers stop at their next turn instead of loading a failing relay
      throw err;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { count, concurrency, wallMs: performance.now() - start, latenciesMs };
}

export async function warmedLoop(warmup: number, count: number, concurrency: number, op: (index: number, measured: boolean) => Promise<number>): Promise<LoadResult> {
  await runClosedLoop(warmup, concurrency, (i) => op(i, false));
  return runClosedLoop(count, concurrency, (i) => op(warmup + i, true));
}

function workerdCpuMs(): number | null {
  let total: number | null = null;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      // After the name: state, ppid, … utime is field 14 and stime 15 of the file, in clock ticks (100/s).
      const fields = stat.slice(close + 2).split(" ");
      if (stat.slice(stat.indexOf("(") + 1, close) === "workerd" && Number(fields[1]) === process.pid) total = (total ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10;
    } catch { /* The process ended between the listing and the read. */ }
  }
  return total;
}

/** A run and workerd's CPU time over it: on a shared machine wall time moves with the neighbours' load, CPU time much less. */
export type Measured = { load: LoadResult; cpuMs: number | null };

export async function withCpu(run: () => Promise<LoadResult>): Promise<Measured> {
  const before = workerdCpuMs();
  const load = await run();
  const after = workerdCpuMs();
  return { load, cpuMs: before === null || after === null ? null : after - before };
}

export const cpuPerOp = (m: Measured) => (m.cpuMs === null ? Number.NaN : (m.cpuMs * 1000) / m.load.count);
