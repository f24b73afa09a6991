// The local stand-in for the Workers AI binding: an entrypoint worker beside the relay in Miniflare,
// bound to the relay as `AI` (`env.AI.run(model, { text })` over JS RPC, as Workers AI is called). The
// model itself runs in Node (local-model.ts): workerd cannot compile its WebAssembly, so each run goes
// to the Node process that started workerd (the MODEL binding, or MODEL_URL). Plain JavaScript
// because workerd runs it as it is; read by scripts/local-ai/local-ai.ts. Covered by
// test/worker/directory/local-ai.test.ts (workerd) and test/node/local-ai.test.ts.
import { WorkerEntrypoint } from "cloudflare:workers";

export class LocalAi extends WorkerEntrypoint {
  /** Workers AI's text-embedding call: `{ text: string | string[] }` → `{ shape: [n, d], data }`; failures throw. */
  async run(model, inputs) {
    const text = typeof inputs?.text === "string" ? [inputs.text] : inputs?.text;
    // Miniflare binds MODEL to a function in Node; `wrangler dev` (npm run dev:relay) cannot, so there the
    // model is a loopback HTTP server at MODEL_URL.
    const request = new Request(this.env.MODEL_URL ?? "http://local-ai/run", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, text }),
    });
    const response = await (this.env.MODEL ? this.env.MODEL.fetch(request) : fetch(request));
    const answer = await response.json();
    if (!response.ok) throw new Error(answer?.error?.message ?? `the local embeddings model answered HTTP ${response.status}`);
    return answer;
  }
}

export default {
  fetch() {
    return Response.json({ error: { code: "not_found", message: "local-ai is reached as the relay's AI binding (env.AI.run), not over HTTP" } }, { status: 404 });
  },
};
