// Workers AI's text-embedding models over Cloudflare's REST API, for `eval:search --workers-ai MODEL`:
// the relay in Miniflare calls its AI binding, and this answers it from Node as the deployed binding
// would (`{shape, data}`), so a model can be measured and calibrated before it is deployed. The only
// network the evaluator uses. Covered by test/node/eval-search-workers-ai.test.ts (a stand-in API).
//
// API: POST {base}/accounts/{account}/ai/run/{model} with a bearer token and {"text": [...]}; it answers
// {"result": {"shape": [n, d], "data": [[...]]}, "success": true, "errors": [], "messages": []}, or
// {"success": false, "errors": [{"code", "message"}]} (developers.cloudflare.com/workers-ai, REST API).

import type { NodeEmbeddingsRun } from "../local-ai/local-model.ts";

export const CLOUDFLARE_API_BASE = "https://api.cloudflare.com/client/v4";

export interface WorkersAiAccount {
  accountId: string;
  apiToken: string;
  /** CLOUDFLARE_API_BASE unless told (wrangler's CLOUDFLARE_API_BASE_URL; tests point it at a stand-in). */
  apiBase?: string;
}

/** Workers AI refused or answered something that is not embeddings; the message says which model and why. */
export class WorkersAiError extends Error {}

interface ApiAnswer {
  success?: unknown;
  errors?: unknown;
  result?: { shape?: unknown; data?: unknown };
}

function errorsText(errors: unknown): string {
  if (!Array.isArray(errors) || errors.length === 0) return "no error given";
  return errors
    .map((e: { code?: unknown; message?: unknown } | null) => `${String(e?.code ?? "?")}: ${String(e?.message ?? "")}`)
    .join("; ");
}

function vectorsOf(answer: ApiAnswer, model: string, count: number): { shape: number[]; data: number[][] } {
  const data = answer.result?.data;
  const valid =
    Array.isArray(data) &&
    data.length === count &&
    data.every((v) => Array.isArray(v) && v.length > 0 && v.length === (data[0] as unknown[]).length && v.every((x) => typeof x === "number"));
  if (!valid) throw new WorkersAiError(`Workers AI ${model} answered without one vector per text (${count} asked)`);
  const vectors = data as number[][];
  return { shape: [vectors.length, vectors[0]!.length], data: vectors };
}

export function workersAiRestRun(account: WorkersAiAccount): NodeEmbeddingsRun {
  const base = (account.apiBase ?? CLOUDFLARE_API_BASE).replace(/\/+$/, "");
  return async (model, input) => {
    // Model ids hold slashes (@cf/baai/bge-m3) that the API takes as path segments; only the @ stays raw too.
    const url = `${base}/accounts/${encodeURIComponent(account.accountId)}/ai/run/${model.split("/").map(encodeURIComponent).join("/").replace(/%40/g, "@")}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${account.apiToken}`, "content-type": "application/json" },
        body: JSON.stringify({ text: input.text }),
      });
    } catch (error) {
      // fetch says only "fetch failed"; the network's reason is its cause (ECONNREFUSED, ENOTFOUND, …).
      const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
      throw new WorkersAiError(`Workers AI ${model}: cannot reach ${base} (${String(cause?.code ?? cause?.message ?? (error as Error).message)})`);
    }
    const text = await response.text();
    let answer: ApiAnswer;
    try {
      answer = JSON.parse(text) as ApiAnswer;
    } catch (error) {
      throw new WorkersAiError(`Workers AI ${model} answered HTTP ${response.status} with a body that is not JSON (${String(error)}): ${text.slice(0, 200)}`);
    }
    if (!response.ok || answer.success !== true) {
      throw new WorkersAiError(`Workers AI ${model} refused (HTTP ${response.status}): ${errorsText(answer.errors)}`);
    }
    return vectorsOf(answer, model, input.text.length);
  };
}
