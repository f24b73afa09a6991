// The Society AI plugin's local API on 127.0.0.1:19791, field for field, so existing skill scripts
// (search-agents.sh, delegate-task.sh) work unchanged against clawrelay. Covered by
// test/node/society-api.e2e.test.ts, delegation.e2e.test.ts and local-api-bad-input.e2e.test.ts. Mounted
// on the local API's app (../api/local-api.ts), whose guards and error answers (`success: false`) it shares.
import { Hono } from "hono";
import type { Context } from "hono";
import { MAX_JSON_DEPTH, strictJsonProblem } from "../../protocol/index.ts";
import { CLAWRELAY_VERSION } from "../package-version.ts";
import type { ApiAnswer, Delegator } from "./delegation.ts";

export interface SocietyApiDeps {
  relayUrl: string;
  agentName(): string;
  relayConnected(): boolean;
  /** The agent's card is in the relay's directory (others can find it and delegate to it). */
  listed(): boolean;
  gatewayReachable(): Promise<boolean>;
  apiPort(): number;
  startedAt: number;
  delegator: Delegator;
}

/** What a body is: an object; not JSON at all; JSON this API does not take, and why; JSON of another shape. */
type ParsedBody = { object: Record<string, unknown> } | { notJson: true } | { refused: string } | { otherShape: true };

/** Refused as the relay refuses it (strict-json.ts): a key twice in one object, nesting past MAX_JSON_DEPTH, a lone surrogate. */
function parseJson(body: string): ParsedBody {
  const text = body || "null";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { notJson: true };
  }
  const problem = strictJsonProblem(text, MAX_JSON_DEPTH);
  if (problem) return { refused: problem.message };
  return typeof value === "object" && value !== null && !Array.isArray(value) ? { object: value as Record<string, unknown> } : { otherShape: true };
}

/**
 * Names, skill ids and task ids arrive with stray whitespace from shell scripts: `jq -Rs .` keeps the
 * newline `echo` added. They are identifiers, so they are trimmed, as the original client does.
 */
function identifier(value: unknown): unknown {
  return typeof value === "string" ? value.trim() : value;
}

/** A person's text keeps its inner newlines; only the one newline a shell `echo` appends goes. */
export function withoutTrailingNewline(text: string): string {
  return text.replace(/\r?\n$/, "");
}

/** The answer as the route worked it out (status and body, as the delegator's). */
const answer = (c: Context, { status, body }: ApiAnswer) => c.json(body, status as 200);

export function societyRoutes(deps: SocietyApiDeps): Hono {
  const app = new Hono();
  app.get("/api/status", async (c) => {
    const gatewayUp = await deps.gatewayReachable();
    const relayUp = deps.relayConnected();
    return answer(c, {
      status: 200,
      body: {
        connected: relayUp && deps.listed() && gatewayUp,
        agent: deps.agentName(),
        // The "hub" of this API is the relay and its directory: registered = the card is listed there.
        hub: { status: relayUp ? "connected" : "disconnected", registered: deps.listed(), relay: deps.relayUrl },
        gateway: { status: gatewayUp ? "connected" : "disconnected" },
        api: { port: deps.apiPort(), uptime: Math.floor((Date.now() - deps.startedAt) / 1000) },
        version: CLAWRELAY_VERSION,
      },
    });
  });

  app.post("/api/search-agents", async (c) => answer(c, await searchAgents(deps, await c.req.text())));
  app.post("/api/delegate-task", async (c) => answer(c, await delegateTask(deps, await c.req.text())));
  return app;
}

async function searchAgents(deps: SocietyApiDeps, raw: string): Promise<ApiAnswer> {
  const parsed = parseJson(raw);
  if ("refused" in parsed) return { status: 400, body: { success: false, error: parsed.refused } };
  const body = "object" in parsed ? parsed.object : null;
  if (!body || typeof body.query !== "string" || body.query.trim() === "") {
    return { status: 400, body: { success: false, error: 'send {"query": "<what you need>", "limit": 10}' } };
  }
  const limit = Math.min(50, Math.max(1, Math.trunc(Number(body.limit ?? 10)) || 10));
  const res = await fetch(`${deps.relayUrl}/directory/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: body.query.trim(), limit }),
    signal: AbortSignal.timeout(15_000),
  }).catch(() => null);
  if (!res?.ok) return { status: 502, body: { success: false, error: `the relay's directory did not answer (${res?.status ?? "unreachable"})` } };
  const found = (await res.json()) as { agents: { name: string; description: string; score: number; best_skill_id: string | null; skills: unknown[] }[]; total: number };
  return {
    status: 200,
    body: {
      agents: found.agents.map((a) => ({ name: a.name, description: a.description, score: a.score, best_skill_id: a.best_skill_id, skills: a.skills })),
      total: found.total,
    },
  };
}

/**
 * Every failure a script can act on is a 200 with success:false and the reason: the documented
 * commands use `curl -sf`, which prints nothing at all for an HTTP error status. Only a body that is
 * not JSON (no script sends that) keeps a 400.
 */
async function delegateTask(deps: SocietyApiDeps, raw: string): Promise<ApiAnswer> {
  const parsed = parseJson(raw);
  if ("notJson" in parsed) {
    return { status: 400, body: { success: false, error: 'the body is not JSON: send {"agent_id": "…", "skill_id": "…", "message": "…"}', agent: "", skill: "" } };
  }
  if ("refused" in parsed) return { status: 200, body: { success: false, error: `the body is refused: ${parsed.refused}`, agent: "", skill: "" } };
  const body = "object" in parsed ? parsed.object : {};
  const agent = identifier(body.agent_id);
  const skill = identifier(body.skill_id);
  const taskId = identifier(body.task_id);
  const sessionId = identifier(body.session_id);
  const named = { agent: typeof agent === "string" ? agent : "", skill: typeof skill === "string" ? skill : "" };
  const refuse = (error: string) => ({ status: 200, body: { success: false, error, ...named } });
  const missing = (["agent_id", "skill_id", "message"] as const).filter((k) => {
    const v = k === "message" ? body.message : identifier(body[k]);
    return typeof v !== "string" || v.trim() === "";
  });
  if (!("object" in parsed) || missing.length > 0) {
    return refuse(`${missing.length > 0 ? missing.join(", ") : "agent_id, skill_id and message"} ${missing.length === 1 ? "is" : "are"} required (non-empty strings): send {"agent_id": "<name from search>", "skill_id": "<best_skill_id>", "message": "…"}`);
  }
  for (const [name, value] of [["task_id", taskId], ["session_id", sessionId]] as const) {
    if (value !== undefined && (typeof value !== "string" || value === "")) return refuse(`${name} must be a non-empty string (leave it out to start a new task)`);
  }
  return deps.delegator.delegate({
    agent_id: named.agent,
    skill_id: named.skill,
    message: withoutTrailingNewline(body.message as string),
    ...(typeof taskId === "string" ? { task_id: taskId } : {}),
    ...(typeof sessionId === "string" ? { session_id: sessionId } : {}),
  });
}
