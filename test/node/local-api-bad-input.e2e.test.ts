// Property-based (fast-check, fixed seeds): the local API on the agent's port — the Society AI routes
// (local-agent/society/society-api.ts) and the inspector's JSON API (inspector/inspector-routes.ts) — given
// lone surrogates, deep nesting and other junk never answers 5xx: search refuses with 400, delegation with
// the documented 200 and a reason, the inspector with a 4xx (or does what was asked). Against a real
// agent, relay and stand-in gateway. Regression for issue 22: /api/delegate-task with a lone surrogate
// answered 500 where 200 with a reason is documented (docs/directory.md#the-local-api).
import { request } from "node:http";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { TOKEN_HEADER } from "../../local-agent/inspector/inspector-routes.ts";
import type { CardFile } from "../../local-agent/society/card-file.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, runAgent, startRelay, waitUntil } from "../support/node/stack.ts";
import type { AgentHome, LocalRelay } from "../support/node/stack.ts";

// Fixed so every run is the same; replay a failure with `{ ...settings(SEED, RUNS), path: "<reported path>" }`.
const SEED = 22;
/** Generated inputs per property; the file runs 5 properties: 250 + 60 + 150 + 250 + 40 = 750. */
const RUNS = { surrogates: 250, deep: 60, junk: 150, inspector: 250, inspectorDeep: 40 };
const NAME = `forecaster-${crypto.randomUUID().slice(0, 6)}`;

let relay: LocalRelay;
let gateway: StandinGateway;
let home: AgentHome;
let agent: AgentHandle;
let token: string;

beforeAll(async () => {
  relay = await startRelay();
  gateway = await startStandinGateway();
  const card: CardFile = { name: NAME, description: "Weather forecasts", skills: [{ id: "forecast", name: "Forecast", description: "The weather where you are" }] };
  home = await makeAgentHome(relay, gateway, "Forecaster", { card });
  agent = await runAgent(home);
  await waitUntil("connected", () => agent.status().relay.state === "connected");
  const page = await fetch(`http://127.0.0.1:${agent.apiPort}/`);
  token = /name="clawrelay-token" content="([^"]+)"/.exec(await page.text())![1]!;
}, 60_000);
afterAll(async () => {
  await agent?.close();
  await gateway?.close();
  await home?.cleanup();
  await relay?.stop();
});

function settings<T>(seed: number, numRuns: number): fc.Parameters<T> {
  return {
    seed,
    numRuns,
    reporter: (details) => {
      if (!details.failed) return;
      const example = (() => {
        try {
          return fc.stringify(details.counterexample).slice(0, 600);
        } catch {
          return "(too deep to print)";
        }
      })();
      throw new Error(`property failed after ${details.numRuns} runs (seed ${seed}, path "${details.counterexamplePath}")\ncounterexample: ${example}\nerror: ${String(details.errorInstance).slice(0, 1500)}`);
    },
  };
}

interface Answer {
  status: number;
  json: Record<string, unknown>;
}

/** One request to the agent's API port as a local script sends it (no Origin; the inspector's token when asked). */
function send(method: string, path: string, body: string, withToken = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `127.0.0.1:${agent.apiPort}`, "content-type": "application/json", ...(withToken ? { [TOKEN_HEADER]: token } : {}) };
    const req = request({ host: "127.0.0.1", port: agent.apiPort, method, path, headers }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> });
        } catch {
          reject(new Error(`${method} ${path} answered ${res.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`));
        }
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A string with one half of a surrogate pair alone in it (JSON.stringify writes it as a \ud8xx escape). */
const withLoneSurrogate = fc
  .tuple(fc.string({ maxLength: 12 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 12 }))
  .map(([before, unit, after]) => `${before}${String.fromCharCode(unit)}${after}`);

/** A delegation or search body with a lone surrogate in one field, key or nested value, the rest plausible. */
const surrogateBody = fc
  .record({
    place: fc.constantFrom("agent_id", "skill_id", "message", "task_id", "session_id", "query", "key", "nested"),
    lone: withLoneSurrogate,
  })
  .map(({ place, lone }) => {
    const body: Record<string, unknown> = { agent_id: NAME, skill_id: "forecast", message: "Weather in Paris?", query: "weather" };
    if (place === "key") body[lone] = 1;
    else if (place === "nested") body.extra = { list: [1, { deep: lone }] };
    else body[place] = lone;
    return JSON.stringify(body);
  });

/** `[[[…]]]` or `{"a":{"a":…}}` past the 64 levels the API takes, alone or as a field (≤ 64 KiB). */
const deepBody = fc
  .record({ depth: fc.constantFrom(65, 200, 1000, 10_000), kind: fc.constantFrom("array", "object"), asField: fc.boolean() })
  .map(({ depth, kind, asField }) => {
    const deep = kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
    return asField ? `{"agent_id":${JSON.stringify(NAME)},"skill_id":"forecast","message":"hi","query":"weather","extra":${deep}}` : deep;
  });

const SOCIETY_ROUTES = ["/api/search-agents", "/api/delegate-task"] as const;

/** Search refuses with 400 and a reason; delegation answers the documented 200 with success:false, agent and skill. */
function expectRefused(route: (typeof SOCIETY_ROUTES)[number], answer: Answer): void {
  if (route === "/api/search-agents") {
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ success: false, error: expect.any(String) });
  } else {
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ success: false, error: expect.stringMatching(/surrogate|nested|twice/), agent: expect.any(String), skill: expect.any(String) });
  }
}

describe("the local API given bad input", () => {
  it("regression: delegating with a lone surrogate in the message or the agent's name answers 200 with the reason (was 500)", async () => {
    for (const body of [`{"agent_id":${JSON.stringify(NAME)},"skill_id":"forecast","message":"a\\ud800b"}`, '{"agent_id":"x\\udfff","skill_id":"forecast","message":"hi"}']) {
      const answer = await send("POST", "/api/delegate-task", body);
      expect(answer).toEqual({ status: 200, json: { success: false, error: expect.stringContaining("lone UTF-16 surrogate"), agent: "", skill: "" } });
    }
  });

  it("Society API: a lone surrogate anywhere in the body is refused — search 400, delegation 200 with a reason — never 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(surrogateBody, fc.constantFrom(...SOCIETY_ROUTES), async (body, route) => expectRefused(route, await send("POST", route, body))),
      settings(SEED, RUNS.surrogates),
    );
  });

  it("Society API: nesting past 64 levels is refused the same way, never 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(deepBody, fc.constantFrom(...SOCIETY_ROUTES), async (body, route) => expectRefused(route, await send("POST", route, body))),
      settings(SEED + 1, RUNS.deep),
    );
  });

  it("Society API: any other body (JSON of any shape, broken JSON, bytes) is answered below 500 in the documented shape", async () => {
    const junk = fc.oneof(fc.json({ maxDepth: 4 }), fc.string({ unit: "binary", maxLength: 60 }), fc.constantFrom("", "{", "[1,]", '{"a":1,"a":2}', "null", '"text"'));
    await fc.assert(
      fc.asyncProperty(junk, fc.constantFrom(...SOCIETY_ROUTES), async (body, route) => {
        const answer = await send("POST", route, body);
        expect(answer.status).toBeLessThan(500);
        expect(answer.json).toMatchObject({ success: expect.any(Boolean) });
        if (route === "/api/delegate-task" && answer.status === 200) expect(answer.json).toMatchObject({ agent: expect.any(String), skill: expect.any(String) });
      }),
      settings(SEED + 2, RUNS.junk),
    );
  });

  it("inspector API: odd states, ids, queries and bodies (lone surrogates, percent-encoded ones) answer 200 or a 4xx with a reason, never 5xx", async () => {
    const encoded = fc.constantFrom("%ED%A0%80", "%ED%BF%BF", "%F0%9F%98%80", "%FF", "%", "%ZZ", "\\ud800", "bogus", "dead", "all", "", "DEAD", "queued%20", "%00");
    const id = fc.oneof(fc.constantFrom("0", "00", "-1", "1.5", "1e3", "99999999999999999999", "9007199254740993", "%31", "1%00"), fc.nat({ max: 1_000_000 }).map(String));
    const request = fc.oneof(
      encoded.map((state) => ["GET", `/inspector/api/queue?state=${state}`] as const),
      fc.tuple(id, encoded).map(([n, q]) => ["GET", `/inspector/api/messages/${n}?x=${q}`] as const),
      fc.tuple(id, fc.constantFrom("replay", "drop"), encoded).map(([n, action, q]) => ["POST", `/inspector/api/messages/${n}/${action}?${q}=${q}`] as const),
    );
    await fc.assert(
      fc.asyncProperty(request, surrogateBody, async ([method, path], body) => {
        const answer = await send(method, path, method === "POST" ? body : "", true);
        expect(answer.status === 200 || (answer.status >= 400 && answer.status < 500)).toBe(true);
        if (answer.status !== 200) expect(answer.json).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
      }),
      settings(SEED + 3, RUNS.inspector),
    );
  });

  it("inspector API: replay and drop with bodies nested past 64 levels are answered below 500", async () => {
    await fc.assert(
      fc.asyncProperty(deepBody, fc.constantFrom("replay", "drop"), async (body, action) => {
        const answer = await send("POST", `/inspector/api/messages/7/${action}`, body, true);
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(answer.status).toBeLessThan(500);
      }),
      settings(SEED + 4, RUNS.inspectorDeep),
    );
  });
});
