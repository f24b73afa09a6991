// `eval:search --workers-ai MODEL`'s embedder against a stand-in of Cloudflare's REST API on an ephemeral
// port: the request as the API takes it (path with the account and the model id, bearer token, {text}),
// its answer read as the binding's {shape, data}, and each way it can fail said with the API's own words.
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedderFromRun } from "../../scripts/eval-search/calibrate.ts";
import { WorkersAiError, workersAiRestRun } from "../../scripts/eval-search/workers-ai-rest.ts";

interface Seen { method: string; url: string; authorization: string | undefined; body: { text: string[] } }

let server: Server;
let apiBase: string;
const seen: Seen[] = [];
/** What the stand-in answers next: status and body; by default vectors of [length, index, 1]. */
let answer: ((body: { text: string[] }) => { status: number; body: string }) | null = null;

function handle(req: IncomingMessage, res: ServerResponse): void {
  let text = "";
  req.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
  req.on("end", () => {
    const body = JSON.parse(text) as { text: string[] };
    seen.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
    const reply = answer?.(body) ?? {
      status: 200,
      body: JSON.stringify({ result: { shape: [body.text.length, 3], data: body.text.map((t, i) => [t.length, i, 1]) }, success: true, errors: [], messages: [] }),
    };
    res.writeHead(reply.status, { "content-type": "application/json" }).end(reply.body);
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}/client/v4/`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const run = () => workersAiRestRun({ accountId: "acc123", apiToken: "secret-token", apiBase });

describe("workersAiRestRun", () => {
  it("posts {text} to /accounts/{account}/ai/run/{model} with the bearer token and answers {shape, data}", async () => {
    seen.length = 0;
    answer = null;
    const vectors = await run()("@cf/baai/bge-m3", { text: ["hello", "a"] });
    expect(vectors).toEqual({ shape: [2, 3], data: [[5, 0, 1], [1, 1, 1]] });
    expect(seen).toEqual([{ method: "POST", url: "/client/v4/accounts/acc123/ai/run/@cf/baai/bge-m3", authorization: "Bearer secret-token", body: { text: ["hello", "a"] } }]);
  });

  it("says the API's error codes and messages when it answers success: false", async () => {
    answer = () => ({ status: 400, body: JSON.stringify({ success: false, errors: [{ code: 5007, message: "No such model @cf/nope/nope or task" }], messages: [], result: null }) });
    const call = run()("@cf/nope/nope", { text: ["x"] });
    await expect(call).rejects.toThrow(WorkersAiError);
    await expect(run()("@cf/nope/nope", { text: ["x"] })).rejects.toThrow("Workers AI @cf/nope/nope refused (HTTP 400): 5007: No such model @cf/nope/nope or task");
  });

  it("refuses a rate limit answered as success: false with HTTP 429, naming both", async () => {
    answer = () => ({ status: 429, body: JSON.stringify({ success: false, errors: [{ code: 3040, message: "Capacity temporarily exceeded" }] }) });
    await expect(run()("@cf/baai/bge-m3", { text: ["x"] })).rejects.toThrow("(HTTP 429): 3040: Capacity temporarily exceeded");
  });

  it("refuses an answer that is not JSON, or without one vector per text", async () => {
    answer = () => ({ status: 502, body: "<html>bad gateway</html>" });
    await expect(run()("@cf/baai/bge-m3", { text: ["x"] })).rejects.toThrow(/HTTP 502 with a body that is not JSON.*bad gateway/);
    answer = () => ({ status: 200, body: JSON.stringify({ success: true, errors: [], result: { shape: [1, 2], data: [[0.1, 0.2]] } }) });
    await expect(run()("@cf/baai/bge-m3", { text: ["x", "y"] })).rejects.toThrow("answered without one vector per text (2 asked)");
  });
});

describe("workersAiRestRun when the API cannot be reached", () => {
  it("says it was Workers AI and where, with the network's reason, never the token", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const call = workersAiRestRun({ accountId: "acc123", apiToken: "secret-token", apiBase: `http://127.0.0.1:${port}/client/v4` })("@cf/baai/bge-m3", { text: ["x"] });
    const failed = await call.then(() => null, (error: unknown) => error);
    expect(failed).toBeInstanceOf(WorkersAiError);
    expect((failed as Error).message).toBe(`Workers AI @cf/baai/bge-m3: cannot reach http://127.0.0.1:${port}/client/v4 (ECONNREFUSED)`);
  });
});

describe("embedderFromRun", () => {
  it("embeds many texts in batches of 50, keeping their order", async () => {
    seen.length = 0;
    answer = null;
    const texts = Array.from({ length: 120 }, (_, i) => "x".repeat(i + 1));
    const vectors = await embedderFromRun(run(), "@cf/baai/bge-m3")(texts);
    expect(seen.map((s) => s.body.text.length)).toEqual([50, 50, 20]);
    expect(vectors.map((v) => v[0])).toEqual(texts.map((t) => t.length));
  });
});
