// The workerd tests' stand-in hub, its agent-side half: a token per agent that a refresh replaces
// (the hub keeps one current token: an older one is refused with 401, as recorded in
// test/fixtures/hub/current/token-refresh.json), the pull inbox with 120 s leases, renew and ack
// (lease-ack-status.json), and history (newest first without a cursor, oldest first after one:
// history.json). Records are scripted by tests through /__test; the shapes are the fixtures'. The next
// pull's answer can be scripted as a hub that breaks the rules would send it (InboxScript: a huge body, a
// page of more records than asked, a redirect). Used by standin-hub.ts only.
import type { IncomingMessage } from "node:http";

export interface Answer {
  status: number;
  body: unknown;
  /** Instead of `body`: the next pull's scripted answer, written by standin-hub.ts. */
  script?: InboxScript;
}

/** The next GET /hub/inbox answered as a misbehaving hub would: `bytes` of JSON, a page as given, a redirect. */
export type InboxScript = { kind: "bytes"; bytes: number } | { kind: "page"; text: string } | { kind: "redirect"; status: number; location: string };

interface Leased {
  record: Record<string, unknown>;
  state: "queued" | "processing" | "delivered";
  leaseUntil: number;
}

interface AgentSide {
  token: string | null;
  expiresAt: number;
  /** The hub's clock for this agent runs this far ahead of real time: tests say "later" without waiting. */
  clockAheadSec: number;
  refreshes: number;
  inbox: Leased[];
  acked: string[];
  renewed: string[];
  history: Record<string, unknown>[];
  pulls: number;
  script: InboxScript | null;
}

const LEASE_MS = 120_000;
const TOKEN_TTL_SEC = 86_400;

export class StandinAgents {
  private readonly agents = new Map<string, AgentSide>();
  private minted = 0;

  private side(agentId: string): AgentSide {
    let side = this.agents.get(agentId);
    if (!side) this.agents.set(agentId, (side = { token: null, expiresAt: 0, clockAheadSec: 0, refreshes: 0, inbox: [], acked: [], renewed: [], history: [], pulls: 0, script: null }));
    return side;
  }

  /** A new current token for the agent: every older one is refused from now on. */
  mint(agentId: string): { agent_token: string; expires_at: number } {
    const side = this.side(agentId);
    side.token = `tok_${agentId}_${++this.minted}`;
    side.expiresAt = Math.floor(Date.now() / 1000) + side.clockAheadSec + TOKEN_TTL_SEC;
    side.refreshes++;
    return { agent_token: side.token, expires_at: side.expiresAt };
  }

  private authed(req: IncomingMessage): [string, AgentSide] | Answer {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    for (const [agentId, side] of this.agents) if (token && side.token === token) return [agentId, side];
    return { status: 401, body: { detail: "Invalid or expired token", code: "invalid_token", retryable: false } };
  }

  /** /hub/inbox, /hub/inbox/ack, /hub/inbox/lease/renew, /hub/history; null for other paths. */
  route(req: IncomingMessage, url: URL, body: unknown): Answer | null {
    const where = `${req.method} ${url.pathname}`;
    if (!["GET /hub/inbox", "POST /hub/inbox/ack", "POST /hub/inbox/lease/renew", "GET /hub/history"].includes(where)) return null;
    const who = this.authed(req);
    if (!Array.isArray(who)) return who;
    const [, side] = who;
    const now = Date.now();
    const ids = new Set(((body as { message_ids?: unknown } | null)?.message_ids as string[] | undefined) ?? []);
    if (where === "GET /hub/inbox") {
      side.pulls++;
      const script = side.script;
      side.script = null;
      if (script) return { status: 200, body: null, script };
      const limit = Number(url.searchParams.get("limit") ?? 10);
      const ready = side.inbox.filter((l) => l.state === "queued" || (l.state === "processing" && l.leaseUntil <= now));
      const batch = ready.slice(0, limit);
      for (const l of batch) {
        l.state = url.searchParams.get("ack") === "false" ? "processing" : "delivered";
        l.leaseUntil = now + LEASE_MS;
      }
      return { status: 200, body: { messages: batch.map((l) => l.record), count: batch.length, has_more: ready.length > limit } };
    }
    if (where === "POST /hub/inbox/ack") {
      const acking = side.inbox.filter((l) => ids.has(String(l.record.hub_msg_id)) && l.state !== "delivered");
      for (const l of acking) l.state = "delivered";
      side.acked.push(...acking.map((l) => String(l.record.hub_msg_id)));
      return { status: 200, body: { acked: acking.length } };
    }
    if (where === "POST /hub/inbox/lease/renew") {
      const renewing = side.inbox.filter((l) => ids.has(String(l.record.hub_msg_id)) && l.state === "processing");
      for (const l of renewing) l.leaseUntil = now + LEASE_MS;
      side.renewed.push(...renewing.map((l) => String(l.record.hub_msg_id)));
      return { status: 200, body: { renewed: renewing.length } };
    }
    const after = url.searchParams.get("after");
    if (after === null) return { status: 200, body: { messages: [...side.history].reverse().slice(0, 100), count: Math.min(100, side.history.length), has_more: side.history.length > 100 } };
    const at = side.history.findIndex((r) => r.hub_msg_id === after);
    if (at < 0) return { status: 400, body: { detail: "Invalid cursor: message not found", retryable: false } };
    const page = side.history.slice(at + 1, at + 101);
    return { status: 200, body: { messages: page, count: page.length, has_more: side.history.length > at + 101 } };
  }

  /** /__test/agents/{id}/…: script records and read what the relay did. */
  test(method: string, agentId: string, what: string, body: unknown): Answer {
    const side = this.side(agentId);
    if (method === "POST" && what === "inbox") {
      for (const record of body as Record<string, unknown>[]) side.inbox.push({ record, state: "queued", leaseUntil: 0 });
      return { status: 200, body: { ok: true } };
    }
    if (method === "POST" && what === "inbox-script") {
      side.script = body as InboxScript;
      return { status: 200, body: { ok: true } };
    }
    if (method === "POST" && what === "history") {
      side.history.push(...(body as Record<string, unknown>[]));
      return { status: 200, body: { ok: true } };
    }
    if (method === "POST" && what === "refresh") {
      // `later_sec`: the refresh happens that long after the last one (as another client's would), so its token expires later.
      side.clockAheadSec += Number((body as { later_sec?: number } | null)?.later_sec ?? 0);
      return { status: 200, body: this.mint(agentId) };
    }
    if (method === "GET" && what === "state") {
      const states = Object.fromEntries(side.inbox.map((l) => [String(l.record.hub_msg_id), l.state]));
      return { status: 200, body: { token: side.token, refreshes: side.refreshes, acked: side.acked, renewed: side.renewed, pulls: side.pulls, states } };
    }
    return { status: 404, body: { detail: "Not Found" } };
  }
}
