// A keep-alive node:http client and a closed-loop load runner for the benchmarks. On 2 cores the client
// competes with workerd for CPU, and node:http with a keep-alive Agent costs ~2.5× less than fetch
// (measured here). Used by relay-bench.ts, verify-bench.ts, intake-bench.ts and delivery-bench.ts.
import http from "node:http";
import { performance } from "node:perf_hooks";

export interface HttpAnswer {
  status: number;
  body: string;
}

export class HttpClient {
  readonly origin: URL;
  private readonly agent: http.Agent;

  constructor(origin: URL, maxSockets = 64) {
    this.origin = origin;
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  request(method: string, path: string, headers: Record<string, string> = {}, body?: string | Uint8Array): Promise<HttpAnswer> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.origin.hostname,
          port: this.origin.port,
          method,
          path,
          agent: this.agent,
          headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  /** Wall time of one request in ms, failing unless the answer has `expectStatus`. */
  async timed(method: string, path: string, expectStatus: number, headers?: Record<string, string>, body?: string): Promise<number> {
    const start = performance.now();
    const answer = await this.request(method, path, headers, body);
    const elapsed = performance.now() - start;
    if (answer.status !== expectStatus) throw new Error(`${method} ${path} -> ${answer.status} (expected ${expectStatus}): ${answer.body.slice(0, 300)}`);
    return elapsed;
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface LoadResult {
  count: number;
  concurrency: number;
  wallMs: number;
  /** One latency (ms) per operation, as the operation measured it. */
  latenciesMs: number[];
}

/**
 * Runs operations 0..count-1 with `concurrency` of them in flight: each of `concurrency` workers starts
 * its next operation as soon as its previous one finished (closed loop). `op` returns its latency in ms.
 */
export async function runClosedLoop(count: number, concurrency: number, op: (index: number) => Promise<number>): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  let failed = false;
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
