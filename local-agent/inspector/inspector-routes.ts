// The inspector page on the agent's loopback API port: `/` (the page), `/inspector/*` (its script and
// style, its JSON API and its event stream) and `/metrics` (metrics.ts). The page comes from
// local-agent/inspector/ (plain files, no build step, nothing fetched from elsewhere). Loopback rules
// as the API (api-server.ts refuses a foreign Host); an Origin other than the page's own is refused,
// and the JSON API and event stream need the per-process token the page carries, which another site's
// page cannot read, so it cannot replay or drop. What it cannot do is a 4xx saying why; a 502 only when
// the relay fails. Mounted by agent.ts; covered by test/node/inspector.e2e.test.ts,
// inspector-refusals.e2e.test.ts, local-api-bad-input.e2e.test.ts, inspector.browser.test.ts and
// inspector-deliveries.browser.test.ts.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { MESSAGE_STATES } from "../../protocol/index.ts";
import type { MessageState } from "../../protocol/index.ts";
import type { AgentStatus } from "../agent-status.ts";
import type { PageRoute, Pages } from "../api-server.ts";
import type { DeliveryFeed } from "./delivery-feed.ts";
import { AgentError } from "../errors.ts";
import { dropMessage, listMessages, queueSummary, replayMessage, showMessage } from "../relay/messages.ts";
import type { InboxAccess } from "../relay/messages.ts";
import { renderMetrics } from "./metrics.ts";

export interface InspectorHost {
  status(): AgentStatus;
  feed: DeliveryFeed;
  access: InboxAccess;
  /** Cuts every wait short (agent.ts, as `clawrelay retry`); the page's "Retry now". */
  retry?(): unknown;
}

export const TOKEN_HEADER = "x-clawrelay-inspector-token";
const QUEUE_CAP = 200;
const STATE_EVERY_MS = 2000;
const RELAY_WAIT_MS = 2000;
const SCRIPT = "text/javascript; charset=utf-8";
/** The page's own files: its style and its script's modules (inspector.js imports the others). */
const FILES: Record<string, string> = {
  "/inspector/inspector.css": "text/css; charset=utf-8",
  ...Object.fromEntries(["inspector", "delivery-list", "message-detail", "hour-chart", "page-dom", "page-text"].map((name) => [`/inspector/${name}.js`, SCRIPT])),
};
/** The page runs only its own script and style, talks only to its own origin, and is never framed. */
const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

const fileCache = new Map<string, string>();
function file(name: string): string {
  let text = fileCache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`./${name}`, import.meta.url), "utf8");
    fileCache.set(name, text);
  }
  return text;
}

function send(res: ServerResponse, status: number, type: string, text: string): void {
  res.writeHead(status, { ...PAGE_HEADERS, "content-type": type, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const json = (res: ServerResponse, status: number, body: unknown) => send(res, status, "application/json", JSON.stringify(body));

function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://${req.headers.host ?? ""}`;
}

function tokenMatches(presented: string | undefined, token: string): boolean {
  const a = Buffer.from(presented ?? "");
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A request the inspector's API refuses for what it asks (a 400, never the relay's fault). */
const badRequest = (message: string) => new AgentError("bad_request", message, 400);

/** The request's path, without its query (the routes match paths, never what follows a "?"). */
const pathOf = (req: IncomingMessage) => (req.url ?? "/").split("?")[0]!;

function messageIdOf(text: string | undefined): number {
  const id = Number(text);
  if (!text || !/^\d+$/.test(text) || !Number.isSafeInteger(id) || id < 1) throw badRequest("a message id is a positive integer (1, 2, …)");
  return id;
}

/**
 * A refusal of what the page asked passes through (our own 400, the relay's 404, 409 and other 4xx); a
 * refusal of the agent itself (the relay's 401, 403) or any other failure is the relay's: 502.
 */
function statusOf(err: unknown): number {
  const status = err instanceof AgentError ? err.status : undefined;
  return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403 ? status : 502;
}

/** The inspector's routes for agent.ts, and the token its page carries (a new one per process). */
export function inspectorPages(host: InspectorHost): { pages: Pages; token: string } {
  const token = randomBytes(24).toString("base64url");

  const api = async (res: ServerResponse, run: () => Promise<unknown>): Promise<void> => {
    try {
      json(res, 200, await run());
    } catch (err) {
      json(res, statusOf(err), { error: err instanceof Error ? err.message : String(err) });
    }
  };

  const state = () => {
    const now = Date.now();
    return { status: host.status(), totals: host.feed.totals, reconnects: host.feed.reconnects, last_hour: host.feed.lastHour(now), now };
  };

  const events: PageRoute = (_req, res) => {
    res.writeHead(200, { ...PAGE_HEADERS, "content-type": "text/event-stream", connection: "keep-alive" });
    const push = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    push("state", { ...state(), recent: host.feed.recent });
    const stop = host.feed.subscribe((event) => push("delivery", event));
    const timer = setInterval(() => push("state", state()), STATE_EVERY_MS).unref();
    // The response's close, not the request's: a request closes once its (empty) body was read.
    res.on("close", () => {
      stop();
      clearInterval(timer);
    });
  };

  const routes: Record<string, PageRoute> = {
    "GET /": (_req, res) => send(res, 200, "text/html; charset=utf-8", file("index.html").replace("{{TOKEN}}", token)),
    // Browsers ask for it on their own; there is none, and a 404 would read as an error in the console.
    "GET /favicon.ico": (_req, res) => {
      res.writeHead(204, PAGE_HEADERS);
      res.end();
    },
    "GET /metrics": async (_req, res) => {
      // A scrape must not wait on a relay that does not answer (Prometheus gives up after 10 s).
      const relayQueue = await Promise.race([
        queueSummary(host.access).catch(() => null),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), RELAY_WAIT_MS).unref()),
      ]);
      const s = host.status();
      const text = renderMetrics({ feed: host.feed, relayConnected: s.relay.state === "connected", relayQueue, inAgent: s.delivery.queued, paused: s.delivery.paused !== null, startedAtMs: s.started_at });
      send(res, 200, "text/plain; version=0.0.4; charset=utf-8", text);
    },
    "GET /inspector/events": events,
    "POST /inspector/api/retry": (_req, res) => api(res, async () => host.retry?.() ?? { woken: 0 }),
    "GET /inspector/api/state": (_req, res) => json(res, 200, { ...state(), recent: host.feed.recent }),
    "GET /inspector/api/queue": (req, res) =>
      api(res, async () => {
        const wanted = new URL(req.url ?? "/", "http://x").searchParams.get("state") ?? "all";
        const state = wanted === "all" ? undefined : (MESSAGE_STATES as readonly string[]).includes(wanted) ? (wanted as MessageState) : null;
        if (state === null) throw badRequest(`state must be all, ${MESSAGE_STATES.join(", ")}`);
        return listMessages(host.access, state, QUEUE_CAP);
      }),
  };
  for (const path of Object.keys(FILES)) routes[`GET ${path}`] = (_req, res) => send(res, 200, FILES[path]!, file(path.slice("/inspector/".length)));

  /** One message: the relay's copy while it has one, else the agent's own of a finished one. */
  const message: PageRoute = (req, res) =>
    api(res, async () => {
      const id = messageIdOf(/^\/inspector\/api\/messages\/(\d+)$/.exec(pathOf(req))?.[1]);
      try {
        return { ...(await showMessage(host.access, id)), source: "relay" };
      } catch (err) {
        const kept = host.feed.keptMessage(id);
        if (!kept || statusOf(err) !== 404) throw err;
        const last = host.feed.recent.findLast((event) => event.id === id);
        const seen = last ? { subpath: last.subpath, sender: last.sender, attempts: last.attempts, last_status: last.status, ...(last.target ? { target: `${last.method ?? "POST"} ${last.target}` } : {}) } : {};
        return { message: { id, state: "finished", kind: kept.kind, content_type: kept.content_type, ...seen }, body: kept.body, encoding: kept.encoding, headers: kept.headers, source: "agent" };
      }
    });
  const action = (what: "replay" | "drop"): PageRoute => (req, res) =>
    api(res, () => {
      const id = messageIdOf(/^\/inspector\/api\/messages\/(\d+)\/(?:replay|drop)$/.exec(pathOf(req))?.[1]);
      return what === "replay" ? replayMessage(host.access, id) : dropMessage(host.access, id);
    });

  const guarded = (route: PageRoute, needsToken: boolean): PageRoute => (req, res, body) => {
    if (!sameOrigin(req)) return json(res, 403, { error: "a page from another origin may not use the inspector" });
    if (needsToken) {
      const presented = req.headers[TOKEN_HEADER] ?? new URL(req.url ?? "/", "http://x").searchParams.get("token") ?? undefined;
      if (!tokenMatches(typeof presented === "string" ? presented : undefined, token)) {
        return json(res, 403, { error: `the inspector's API needs the token its page carries (${TOKEN_HEADER}); reload the page` });
      }
    }
    return route(req, res, body);
  };

  const pages: Pages = (method, path) => {
    const key = `${method} ${path}`;
    const fixed = routes[key];
    const needsToken = path.startsWith("/inspector/api/") || path === "/inspector/events";
    if (fixed) return guarded(fixed, needsToken);
    if (method === "GET" && /^\/inspector\/api\/messages\/\d+$/.test(path)) return guarded(message, true);
    if (method === "POST" && /^\/inspector\/api\/messages\/\d+\/replay$/.test(path)) return guarded(action("replay"), true);
    if (method === "POST" && /^\/inspector\/api\/messages\/\d+\/drop$/.test(path)) return guarded(action("drop"), true);
    return null;
  };
  return { pages, token };
}
