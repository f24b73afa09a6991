// HTTP for webhook sources: the owner's signed calls to add, list, change and remove them, and the
// public URL each provider posts to (…/sources/{name}; a token source …/sources/{name}/{secret}, with any
// sub-path and query after it, and PUT, PATCH, DELETE too when it has a forward target; GET and HEAD when it
// is live too). A live source's requests are answered by the app while the agent is connected (source-live.ts).
// A change of a source's target or policy (or its removal) makes a lanes agent abandon the source's events
// it holds, and sends them again with the new `forward`. Mounted by inbox-routes.ts; covered by
// test/worker/sources-*.test.ts (tails and methods: sources-forward-routes.test.ts) and websocket-lanes.test.ts.
import { Hono } from "hono";
import type { Context } from "hono";
import { FORWARD_METHODS, RelayError, sourceLane } from "../../protocol/index.ts";
import type { AbandonFrame, ForwardMethod } from "../../protocol/index.ts";
import type { Abandoned } from "../delivery/socket-session.ts";
import type { IntakeContext } from "../intake/intake-context.ts";
import { readBodyCapped } from "../intake/request-body.ts";
import { requireOwner, requireOwnerJson } from "../access/request-auth.ts";
import type { OwnedInbox } from "../access/request-auth.ts";
import type { SourceBook } from "./source-book.ts";
import { parseNewSource, parseSourceChange, sourceView } from "./source-config.ts";
import type { StoredSource } from "./source-config.ts";
import { acceptSourceEvent } from "./source-intake.ts";
import { receiveLive } from "./source-live.ts";
import type { LiveSourceHost } from "./source-live.ts";
import { checkMethod, checkTail, keptHeaders, requestTail } from "./source-request.ts";
import { verifySourceRequest } from "./source-verify.ts";

/** What these routes need of the inbox. */
export interface SourceHost extends OwnedInbox, LiveSourceHost {
  readonly sources: SourceBook;
  intake(nowMs?: number): IntakeContext;
  /** A lanes agent stops posting what it holds of a lane (inbox.ts): sent again with the source's new target. */
  abandon(which: Abandoned, reason: AbandonFrame["reason"]): void;
}

const REQUEST_BODY_LIMIT = 16 * 1024;

function notFound(name: string): RelayError {
  return new RelayError(404, "source_not_found", `this inbox has no source "${name.slice(0, 40)}": add it with clawrelay sources add ${name.slice(0, 40)} --kind KIND (clawrelay sources list shows those it has)`);
}

function inboxUrl(c: Context, agentId: string): string {
  return `${new URL(c.req.url).origin}/inbox/${agentId}`;
}

/** The URL to paste into the provider: a token source's holds its secret, known only right after it was made. */
function postUrl(base: string, source: StoredSource, secret: string | null): string {
  return `${base}/sources/${source.name}${source.kind === "token" && secret ? `/${secret}` : ""}`;
}

export function sourceRoutes(host: SourceHost): Hono {
  const app = new Hono();

  async function ownerBody(c: Context): Promise<{ agentId: string; json: unknown }> {
    const { config, json } = await requireOwnerJson(host, c.req.raw, REQUEST_BODY_LIMIT, "a source request's limit", "a source is a name, a kind, a secret and a sub-path");
    return { agentId: config.agent_id, json };
  }

  function answer(c: Context, agentId: string, made: { source: StoredSource; secret: string | null }, status: 200 | 201) {
    const base = inboxUrl(c, agentId);
    const view = sourceView(made.source, base, Date.now(), host.sources.lastRefusal(made.source.name));
    return c.json({ source: view, post_url: postUrl(base, made.source, made.secret), ...(made.secret ? { secret: made.secret } : {}) }, status);
  }

  app.get("/inbox/:agent_id/sources", async (c) => {
    const config = await requireOwner(host, c.req.raw, { spendNonce: false });
    const base = inboxUrl(c, config.agent_id);
    const now = Date.now();
    return c.json({ sources: host.sources.list().map((s) => sourceView(s, base, now, host.sources.lastRefusal(s.name))) });
  });

  app.post("/inbox/:agent_id/sources", async (c) => {
    const { agentId, json } = await ownerBody(c);
    return answer(c, agentId, await host.sources.add(parseNewSource(json), Date.now()), 201);
  });

  app.patch("/inbox/:agent_id/sources/:name", async (c) => {
    const { agentId, json } = await ownerBody(c);
    const source = host.sources.get(c.req.param("name"));
    if (!source) throw notFound(c.req.param("name"));
    const change = parseSourceChange(json, source);
    const made = await host.sources.change(source, change, Date.now());
    // What a lanes agent holds of the source was sent with the old target or policy: it goes again with the new.
    if (change.forward !== undefined || change.policy !== undefined) host.abandon({ lane: sourceLane(source.name) }, "retargeted");
    return answer(c, agentId, made, 200);
  });

  app.delete("/inbox/:agent_id/sources/:name", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: true });
    const name = c.req.param("name");
    const had = host.sources.forwardTarget(name);
    if (!host.sources.remove(name)) throw notFound(name);
    // Its events go to the gateway from now on: a lanes agent posting them to the old target stops.
    if (had) host.abandon({ lane: sourceLane(name) }, "retargeted");
    // Events it already delivered into the queue stay: they are data, listed and replayed like any.
    return c.json({ removed: name });
  });

  /** A refused request is kept (in memory) as the source's last refusal, for its owner's listing. */
  async function noting<T>(name: string, nowMs: number, work: () => T | Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof RelayError && err.status < 500) host.sources.noteRefusal(name, { at: nowMs, code: err.code, message: err.message });
      throw err;
    }
  }

  async function receive(c: Context, name: string, pathSecret: string | null): Promise<Response> {
    const config = host.requireConfig();
    const source = host.sources.get(name);
    if (!source) throw notFound(name);
    if (pathSecret !== null && source.kind !== "token") throw new RelayError(404, "not_found", `source "${name}" takes events at …/sources/${name} itself`);
    const now = Date.now();
    const tail = pathSecret === null ? "" : requestTail(c.req.url);
    await noting(name, now, () => checkTail(tail));
    const body = await readBodyCapped(c.req.raw, config.limits.max_body_bytes);
    const { verdict, method } = await noting(name, now, async () => {
      const request = { headers: c.req.raw.headers, body, nowSec: Math.floor(now / 1000), pathSecret };
      const verdict = await verifySourceRequest(source.kind, request, await host.sources.keys(source, now));
      // After the secret: only its holder learns whether the source forwards.
      return { verdict, method: checkMethod(c.req.method, source) };
    });
    if ("reply" in verdict) return c.json(verdict.reply, 200);
    const headers = await noting(name, now, () => keptHeaders(c.req.raw.headers));
    const contentType = c.req.header("content-type") ?? "application/octet-stream";
    if (typeof source.live_sec === "number") {
      return receiveLive(host, { source, liveSec: source.live_sec, event: verdict.event, body, contentType, method, tail, headers }, now);
    }
    // Not live: checkMethod let no GET or HEAD through.
    const request = await host.keptCredentials.storedJson({ method: method as ForwardMethod, tail, headers }, source.forward !== null);
    const arrival = { source, event: verdict.event, body, contentType, request };
    // 200, not 202: Slack documents a 200 as the answer it waits for; the others take any 2xx.
    return c.json(await acceptSourceEvent(host.intake(now), arrival), 200);
  }

  app.post("/inbox/:agent_id/sources/:name", (c) => receive(c, c.req.param("name"), null));
  // "/*" matches the bare …/{secret} too; the tail is read from the raw URL (requestTail).
  // GET also answers HEAD (Hono); both reach only a live source with a target (checkMethod).
  app.on(["GET", ...FORWARD_METHODS], "/inbox/:agent_id/sources/:name/:secret/*", (c) => receive(c, c.req.param("name"), c.req.param("secret")));
  return app;
}
