// The Society AI plugin's local API on 127.0.0.1:19791, field for field, so existing skill scripts
// (search-agents.sh, delegate-task.sh) work unchanged against clawrelay.
import { CLAWRELAY_VERSION } from "./package-version.ts";
import type { Route } from "./api-server.ts";
import type { Delegator } from "./delegation.ts";

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

function parseJson(body: Buffer): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(body.toString("utf8") || "null");
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function societyRoutes(deps: SocietyApiDeps): Record<string, Route> {
  return {
    "GET /api/status": async () => {
      const gatewayUp = await deps.gatewayReachable();
      const relayUp = deps.relayConnected();
      return {
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
      };
    },

    "POST /api/search-agents": async (_req, raw) => {
      const body = parseJson(raw);
      if (!body || typeof body.query !== "string" || body.query.trim() === "") {
        return { status: 400, body: { success: false, error: 'send {"query": "<what you need>", "limit": 10}' } };
      }
      const limit = Math.min(50, Math.max(1, Math.trunc(Number(body.limit ?? 10)) || 10));
      const res = await fetch(`${deps.relayUrl}/directory/search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: body.query, limit }),
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
    },

    "POST /api/delegate-task": async (_req, raw) => {
      const body = parseJson(raw);
      const required = ["agent_id", "skill_id", "message"] as const;
      if (!body || required.some((k) => typeof body[k] !== "string" || (body[k] as string).trim() === "")) {
        return { status: 400, body: { success: false, error: "agent_id, skill_id and message are required strings", agent: body?.agent_id ?? null, skill: body?.skill_id ?? null } };
      }
      for (const optional of ["task_id", "session_id"] as const) {
        if (body[optional] !== undefined && typeof body[optional] !== "string") {
          return { status: 400, body: { success: false, error: `${optional} must be a string`, agent: body.agent_id, skill: body.skill_id } };
        }
      }
      return deps.delegator.delegate({
        agent_id: body.agent_id as string,
        skill_id: body.skill_id as string,
        message: body.message as string,
        ...(typeof body.task_id === "string" ? { task_id: body.task_id } : {}),
        ...(typeof body.session_id === "string" ? { session_id: body.session_id } : {}),
      });
    },
  };
}
