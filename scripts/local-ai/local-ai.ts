// The local stack's Workers AI: the LocalAi entrypoint worker (local-ai-worker.js) beside the relay in
// Miniflare, bound to the relay as `AI`, with `EMBEDDING_MODEL` set to the local model; each run goes to
// a function in this Node process (MODEL), which embeds with local-model.ts or another NodeEmbeddingsRun.
// Imported by scripts/local-workerd.ts (npm start, the node end-to-end relays, the benchmarks, the
// search evaluator), scripts/dev-relay.ts (wrangler dev) and vitest.config.ts (the workerd test project). Covered by test/node/local-ai.test.ts
// and test/worker/directory/local-ai.test.ts.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Response } from "miniflare";
import type { LegacyWorkerOptions, Miniflare, Request } from "miniflare";
import { LOCAL_EMBEDDING_MODEL } from "../../worker/directory/embeddings/embedding-models.ts";
import { runLocalModel } from "./local-model.ts";
import type { NodeEmbeddingsRun } from "./local-model.ts";

export type { NodeEmbeddingsRun } from "./local-model.ts";

export const LOCAL_AI_WORKER_NAME = "local-ai";
const MODULE_NAME = "local-ai-worker.js";
/** LocalAi needs only JS RPC (WorkerEntrypoint); a fixed date keeps it apart from the relay's wrangler.toml. */
const COMPATIBILITY_DATE = "2026-11-01";

type MiniflareWorker = ConstructorParameters<typeof Miniflare>[0]["workers"][number];
type MiniflareBindings = NonNullable<MiniflareWorker["config"]["env"]>;

/** The entrypoint worker's source, read as it is (workerd runs it untranslated). */
export function localAiWorkerSource(): string {
  return readFileSync(new URL(`./${MODULE_NAME}`, import.meta.url), "utf8");
}

function failure(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}

/**
 * The MODEL service binding's handler: `POST {model, text}` → `{shape, data}`, or the error as
 * `{error: {code, message}}` (LocalAi throws it in the caller, as a Workers AI failure throws).
 */
export function modelRequestHandler(run: NodeEmbeddingsRun = runLocalModel): (request: Pick<Request, "json">) => Promise<Response> {
  return async (request) => {
    let body: { model?: unknown; text?: unknown };
    try {
      body = (await request.json()) as typeof body;
    } catch (error) {
      return failure(400, "bad_request", `local-ai: the request body is not JSON (${(error as Error).message})`);
    }
    const { model, text } = body ?? {};
    if (typeof model !== "string" || !Array.isArray(text) || !text.every((item) => typeof item === "string")) {
      return failure(400, "bad_request", "local-ai: run(model, inputs) takes a model id and inputs.text as a string or an array of strings");
    }
    try {
      return Response.json(await run(model, { text }));
    } catch (error) {
      return failure(500, "embeddings_failed", (error as Error).message);
    }
  };
}

/** Miniflare 5 (scripts/local-workerd.ts): the LocalAi worker, and the bindings the relay gets (`AI`, `EMBEDDING_MODEL`). */
export function localAiForMiniflare(run: NodeEmbeddingsRun): { worker: MiniflareWorker; relayBindings: MiniflareBindings } {
  const handler = modelRequestHandler(run);
  return {
    worker: {
      config: {
        name: LOCAL_AI_WORKER_NAME,
        compatibilityDate: COMPATIBILITY_DATE,
        manifest: { mainModule: MODULE_NAME, modules: { [MODULE_NAME]: { type: "esm", contents: localAiWorkerSource() } } },
        env: { MODEL: { type: "fetcher", handler: (request) => handler(request) } },
      },
    },
    relayBindings: {
      AI: { type: "worker", worker: LOCAL_AI_WORKER_NAME, exportName: "LocalAi" },
      EMBEDDING_MODEL: { type: "text", value: LOCAL_EMBEDDING_MODEL },
    },
  };
}

/**
 * The vitest plugin's `miniflare` options (the workerd test project). wrangler.toml's `[ai]` binding is
 * remote-only (it throws "Binding AI needs to be run remotely"), so it is renamed out of the way (the
 * plugin merges bindings by key) and `AI` becomes a service binding to LocalAi.
 */
export function localAiForVitest(): Pick<LegacyWorkerOptions, "ai" | "serviceBindings" | "bindings"> & { workers: LegacyWorkerOptions[] } {
  const handler = modelRequestHandler(runLocalModel);
  return {
    ai: { binding: "WORKERS_AI_REMOTE_ONLY" },
    serviceBindings: { AI: { name: LOCAL_AI_WORKER_NAME, entrypoint: "LocalAi" } },
    bindings: { EMBEDDING_MODEL: LOCAL_EMBEDDING_MODEL },
    workers: [
      {
        name: LOCAL_AI_WORKER_NAME,
        modules: true,
        compatibilityDate: COMPATIBILITY_DATE,
        script: localAiWorkerSource(),
        serviceBindings: { MODEL: (request: Request) => handler(request) },
      },
    ],
  };
}

/**
 * `npm run dev:relay` (wrangler dev), which binds no Node function: the model as a loopback HTTP server
 * (POST /run, the MODEL handler's protocol) for LocalAi's MODEL_URL.
 */
export async function serveModelOverHttp(run: NodeEmbeddingsRun = runLocalModel): Promise<{ url: string; close(): void }> {
  const handler = modelRequestHandler(run);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      void handler({ json: async () => JSON.parse(body) as unknown }).then(async (response) => {
        res.writeHead(response.status, { "content-type": "application/json" }).end(await response.text());
      }).catch((error: unknown) => console.error("local-ai: answering wrangler dev's LocalAi failed:", error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/run`, close: () => server.close() };
}

/**
 * The two configs `wrangler dev` runs for dev:relay, from wrangler.toml's text. The relay's: the same,
 * `main` seen from .clawrelay-dev/ (where dev:relay writes both), and the remote-only `[ai]` table replaced by
 * a service binding `AI` to LocalAi. LocalAi's: its module, with MODEL_URL.
 */
export function wranglerDevConfigs(wranglerToml: string, modelUrl: string): { relay: string; localAi: string } {
  const relay = wranglerToml
    .replace(/^main = "([^"]+)"$/m, (_, main: string) => `main = "../${main}"`)
    .replace(/^\[ai\]\n(?:[^[\n][^\n]*\n?|\n)*/m, "");
  const service = `\n[[services]]\nbinding = "AI"\nservice = "${LOCAL_AI_WORKER_NAME}"\nentrypoint = "LocalAi"\n`;
  const localAi = [
    `name = "${LOCAL_AI_WORKER_NAME}"`,
    `main = "../scripts/local-ai/${MODULE_NAME}"`,
    `compatibility_date = "${COMPATIBILITY_DATE}"`,
    "",
    "[vars]",
    `MODEL_URL = "${modelUrl}"`,
    "",
  ].join("\n");
  return { relay: relay.trimEnd() + "\n" + service, localAi };
}
