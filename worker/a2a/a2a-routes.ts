// A2A through the inbox: the owner's signed PUT/GET/DELETE /inbox/{id}/a2a, and the public side an A2A
// client talks to — the Agent Card at /inbox/{id}/.well-known/agent-card.json (and agent.json), fetched live
// from the gateway, its endpoint URLs rewritten to the inbox's and kept to serve while the agent is offline;
// and POST /inbox/{id}/a2a/v1, passed live to the gateway's /a2a/v1 once the caller's bearer is one of the
// peers' (checked here: an unknown one never reaches the agent). Calls are never held. Mounted by
// inbox-routes.ts; covered by test/worker/a2a-routes.test.ts and test/worker/a2a-card.test.ts.
import { Hono } from "hono";
import type { Context } from "hono";
import { A2A_ENDPOINT_PATH, LIVE, RelayError, jsonRpcError } from "../../protocol/index.ts";
import { requireOwner, requireOwnerJson } from "../access/request-auth.ts";
import { discardUnreadBody } from "../http-errors.ts";
import type { OwnedInbox } from "../access/request-auth.ts";
import { readBodyCapped } from "../intake/request-body.ts";
import { DEADLINE_RETRY_SEC, OFFLINE_RETRY_SEC, answeredResponse, liveRefusal } from "../live/live-answer.ts";
import type { LiveAsk, LiveRequests, LiveResult } from "../live/live-requests.ts";
import { keptHeaders } from "../sources/source-request.ts";
import type { A2aBook } from "./a2a-book.ts";
import { cardIn, rewriteCard } from "./a2a-card.ts";
import { bearerOf, parseA2aSettings, peerFor } from "./a2a-settings.ts";
import type { A2aSettings } from "./a2a-settings.ts";

export interface A2aHost extends OwnedInbox {
  readonly a2a: A2aBook;
  readonly live: LiveRequests;
}

const SETTINGS_BODY_LIMIT = 128 * 1024;
/** A bearer none of the peers': the relay's own error shape (the gateway's 401 is a bare `{"error": text}`; its status and scheme are the same). */
function unauthorized(): RelayError {
  return new RelayError(401, "a2a_unauthorized", "the bearer token is none of this agent's A2A peers' (channels.a2a.peers.<name>.token in its openclaw.json, published with clawrelay a2a enable): send Authorization: Bearer <your peer token>", { "www-authenticate": "Bearer" });
}

function notEnabled(): RelayError {
  return new RelayError(404, "a2a_not_enabled", "this inbox does not publish an A2A agent: its owner turns it on with clawrelay a2a enable");
}

function inboxBase(c: Context, agentId: string): string {
  return `${new URL(c.req.url).origin}/inbox/${agentId}`;
}

/** The answer to a call that was not passed on: a JSON-RPC error naming the request's id, so an A2A client reads it as one. */
function callRefusal(id: string | number | null, result: Exclude<LiveResult, { kind: "answered" }>, deadlineSec: number): Response {
  const refusal = liveRefusal(result, deadlineSec);
  const retry = Number(refusal.headers["retry-after"] ?? "0") || undefined;
  const message =
    result.kind === "deadline"
      ? `the agent did not answer within the relay's ${deadlineSec} s; send the call with configuration.returnImmediately: true and poll the task with GetTask`
      : result.kind === "offline" || result.kind === "agent_too_old"
        ? `the agent is offline (or its clawrelay does not answer live requests); nothing was kept: retry after ${retry ?? OFFLINE_RETRY_SEC} s`
        : refusal.message;
  return Response.json(jsonRpcError(id, refusal.code, message, retry), { status: refusal.status, headers: refusal.headers });
}

function rpcIdOf(body: Uint8Array): string | number | null {
  try {
    const value = JSON.parse(new TextDecoder().decode(body)) as { id?: unknown } | null;
    return typeof value?.id === "string" || typeof value?.id === "number" ? value.id : null;
  } catch {
    // Not JSON: the gateway answers its own parse error; a refusal here names no id.
    return null;
  }
}

export function a2aRoutes(host: A2aHost): Hono {
  const app = new Hono();

  app.put("/inbox/:agent_id/a2a", async (c) => {
    const { config, json } = await requireOwnerJson(host, c.req.raw, SETTINGS_BODY_LIMIT, "an A2A settings request's limit", "the settings are peers' names and hashes, a deadline and a card");
    const { peers, deadlineSec, card } = parseA2aSettings(json);
    const now = Date.now();
    host.a2a.save({ peers, deadline_sec: deadlineSec, updated_at: now } satisfies A2aSettings);
    if (card) host.a2a.storeCard(card, now);
    const base = inboxBase(c, config.agent_id);
    return c.json({ a2a: host.a2a.view(), card_url: `${base}/.well-known/agent-card.json`, endpoint_url: `${base}${A2A_ENDPOINT_PATH}` });
  });

  app.get("/inbox/:agent_id/a2a", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: false });
    return c.json(host.a2a.view());
  });

  app.delete("/inbox/:agent_id/a2a", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: true });
    return c.json({ removed: host.a2a.remove() });
  });

  // GET answers HEAD too (Hono); the gateway answers its card to GET only, so GET is what goes down.
  const card = async (c: Context, path: string): Promise<Response> => {
    const config = host.requireConfig();
    const settings = host.a2a.settings();
    if (!settings) throw notEnabled();
    const deadlineSec = Math.min(settings.deadline_sec, LIVE.deadlineSec);
    const ask: LiveAsk = {
      to: "a2a", method: "GET", tail: path, headers: keptHeaders(c.req.raw.headers), body: new Uint8Array(0),
      deadlineMs: deadlineSec * 1000, target: {}, holdable: false, log: { source: "a2a", path },
    };
    const result = await host.live.ask(ask);
    const endpoint = `${inboxBase(c, config.agent_id)}${A2A_ENDPOINT_PATH}`;
    const serve = (json: Record<string, unknown>, status: number, headers: Record<string, string> = {}) =>
      new Response(c.req.method === "HEAD" ? null : JSON.stringify(rewriteCard(json, endpoint)), { status, headers: { "content-type": "application/json", "cache-control": "no-store", ...headers } });
    if (result.kind === "answered") {
      const fetched = result.status >= 200 && result.status < 300 ? cardIn(result.body) : null;
      if (!fetched) return answeredResponse(result, c.req.method);
      host.a2a.storeCard(fetched, Date.now());
      return serve(fetched, result.status);
    }
    const stored = host.a2a.card();
    if (result.kind !== "busy" && stored) return serve(stored.card, 200, { "x-clawrelay-card": "stored" });
    throw liveRefusal(result, deadlineSec);
  };
  app.get("/inbox/:agent_id/.well-known/agent-card.json", (c) => card(c, "/.well-known/agent-card.json"));
  app.get("/inbox/:agent_id/.well-known/agent.json", (c) => card(c, "/.well-known/agent.json"));

  app.post(`/inbox/:agent_id${A2A_ENDPOINT_PATH}`, async (c) => {
    host.requireConfig();
    const settings = host.a2a.settings();
    if (!settings) throw notEnabled();
    // Before the body is used, as the gateway does: an unauthenticated flood costs a hash, never the agent's time.
    if ((await peerFor(bearerOf(c.req.header("authorization") ?? null), settings.peers)) === null) {
      host.a2a.noteRefusal({ at: Date.now(), code: "unauthorized", message: "a call's bearer token is none of the peers'" });
      await discardUnreadBody(c.req.raw);
      throw unauthorized();
    }
    const body = await readBodyCapped(c.req.raw, LIVE.requestBodyMaxBytes, "an A2A call's limit (the gateway's own)", "an A2A message is text and small data parts");
    const result = await host.live.ask({
      to: "a2a", method: "POST", tail: A2A_ENDPOINT_PATH, headers: keptHeaders(c.req.raw.headers), body,
      deadlineMs: settings.deadline_sec * 1000, target: {}, holdable: false, log: { source: "a2a", path: A2A_ENDPOINT_PATH },
    });
    if (result.kind === "answered") return answeredResponse(result, "POST");
    // Only a refusal names the call's id: an answered call's body is parsed by the gateway, not here.
    return callRefusal(rpcIdOf(body), result, settings.deadline_sec);
  });

  return app;
}
