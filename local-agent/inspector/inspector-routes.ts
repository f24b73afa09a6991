// The inspector page on the agent's loopback API port: `/` (the page), `/inspector/*` (its script and
// style, its JSON API and its event stream) and `/metrics` (metrics.ts), as Hono routes mounted on the
// local API's app (../api/local-api.ts), whose guards (a foreign Host) and error answers it shares. The
// page comes from local-agent/inspector/ (plain files, no build step, nothing fetched from elsewhere). An
// Origin other than the page's own is refused, and the JSON API and event stream need the per-process
// token the page carries, which another site's page cannot read, so it cannot replay or drop. What it
// cannot do is a 4xx saying why; a 502 only when the relay fails. A message's credential headers are
// always shown redacted (the relay and the delivery feed redact them too: this holds against an older
// relay), and a forwarded one names its whole URL. Covered by test/node/inspector.e2e.test.ts,
// inspector-refusals.e2e.test.ts, local-api-bad-input.e2e.test.ts, api-server.test.ts,
// inspector.browser.test.ts, inspector-deliveries.browser.test.ts and inspector-history.browser.test.ts. The
// History list reads the relay's history (relay/history.ts) a page at a time.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { Hono } from "hono";
import type { Context, Next } from "hono";
import { streamSSE } from "hono/streaming";
import { HISTORY_SEARCH_MAX_CHARS, MESSAGE_STATES, forwardUrl, redactHeaderPairs, redactHeaderRecord } from "../../protocol/index.ts";
import type { MessageState } from "../../protocol/index.ts";
import type { AgentStatus } from "../agent-status.ts";
import type { DeliveryFeed } from "./delivery-feed.ts";
import { AgentError } from "../errors.ts";
import { HISTORY_STATES, historyPage } from "../relay/history.ts";
import type { HistoryQuery, HistoryState } from "../relay/history.ts";
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
  ...Object.fromEntries(["inspector", "delivery-list", "history-list", "message-detail", "hour-chart", "lane-panel", "page-dom", "page-text"].map((name) => [`/inspector/${name}.js`, SCRIPT])),
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

function tokenMatches(presented: string | undefined, token: string): boolean {
  const a = Buffer.from(presented ?? "");
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A request the inspector's API refuses for what it asks (a 400, never the relay's fault). */
const badRequest = (message: string) => new AgentError("bad_request", message, 400);

function messageIdOf(text: string | undefined): number {
  const id = Number(text);
  if (!text || !/^\d+$/.test(text) || !Number.isSafeInteger(id) || id < 1) throw badRequest("a message id is a positive integer (1, 2, …)");
  return id;
}

/**
 * The relay's answer as the inspector's: a refusal of what the page asked passes through (the relay's
 * 404, 409 and other 4xx); a refusal of the agent itself (the relay's 401, 403) or any other failure is
 * the relay's: 502.
 */
async function fromRelay<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    const status = err instanceof AgentError ? err.status : undefined;
    const passes = status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
    throw new AgentError(err instanceof AgentError ? err.code : "relay_failed", err instanceof Error ? err.message : String(err), passes ? status : 502);
  }
}

const HISTORY_PAGE = 50;
/** Bounds on what the page passes on, so a mistake is the inspector's 400 (the relay checks them as well). */
const TEXT_MAX = { search: HISTORY_SEARCH_MAX_CHARS, source: 64, cursor: 512 } as const;

/** The history page's query (state, search, source, cursor) as the relay's, checked; one page of HISTORY_PAGE. */
function historyQueryOf(param: (name: string) => string | undefined): HistoryQuery {
  const state = param("state") ?? "all";
  if (!(HISTORY_STATES as readonly string[]).includes(state)) throw badRequest(`state must be one of ${HISTORY_STATES.join(", ")}`);
  const query: HistoryQuery = { state: state as HistoryState, limit: HISTORY_PAGE };
  for (const name of ["search", "source", "cursor"] as const) {
    const value = param(name);
    if (value === undefined || value === "") continue;
    if (value.length > TEXT_MAX[name]) throw badRequest(`${name} is at most ${TEXT_MAX[name]} characters`);
    query[name] = value;
  }
  return query;
}

/** Every page and API answer: the page's headers, and no Origin but the page's own. */
async function pageGuard(c: Context, next: Next): Promise<void> {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) c.header(name, value);
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== `http://${c.req.header("host") ?? ""}`) throw new AgentError("foreign_origin", "a page from another origin may not use the inspector", 403);
  await next();
}

/** The inspector's routes for the local API, and the token its page carries (a new one per process). */
export function inspectorRoutes(host: InspectorHost): { app: Hono; token: string } {
  const token = randomBytes(24).toString("base64url");
  const app = new Hono();
  const tokenGuard = async (c: Context, next: Next) => {
    // An EventSource cannot send a header: the event stream's token rides in the query.
    if (!tokenMatches(c.req.header(TOKEN_HEADER) ?? c.req.query("token"), token)) {
      throw new AgentError("inspector_token", `the inspector's API needs the token its page carries (${TOKEN_HEADER}); reload the page`, 403);
    }
    await next();
  };
  app.use("/inspector/*", pageGuard);
  app.use("/inspector/api/*", tokenGuard);
  app.use("/inspector/events", tokenGuard);

  const state = () => {
    const now = Date.now();
    return { status: host.status(), totals: host.feed.totals, reconnects: host.feed.reconnects, last_hour: host.feed.lastHour(now), now };
  };

  app.get("/", pageGuard, (c) => c.body(file("index.html").replace("{{TOKEN}}", token), 200, { "content-type": "text/html; charset=utf-8" }));
  // Browsers ask for it on their own; there is none, and a 404 would read as an error in the console.
  app.get("/favicon.ico", pageGuard, (c) => c.body(null, 204));
  app.get("/metrics", pageGuard, async (c) => {
    // A scrape must not wait on a relay that does not answer (Prometheus gives up after 10 s).
    const relayQueue = await Promise.race([
      queueSummary(host.access).catch(() => null),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), RELAY_WAIT_MS).unref()),
    ]);
    const s = host.status();
    const text = renderMetrics({ feed: host.feed, relayConnected: s.relay.state === "connected", relayQueue, inAgent: s.delivery.queued, paused: s.delivery.paused !== null, startedAtMs: s.started_at });
    return c.body(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
  for (const [path, type] of Object.entries(FILES)) app.get(path, (c) => c.body(file(path.slice("/inspector/".length)), 200, { "content-type": type }));

  app.get("/inspector/events", (c) =>
    streamSSE(c, async (stream) => {
      // Not awaited: a write to a stream the page closed resolves all the same (Hono's StreamingApi).
      const push = (event: string, data: unknown) => void stream.writeSSE({ event, data: JSON.stringify(data) });
      push("state", { ...state(), recent: host.feed.recent });
      const stop = host.feed.subscribe((event) => push("delivery", event));
      const timer = setInterval(() => push("state", state()), STATE_EVERY_MS).unref();
      await new Promise<void>((resolve) => stream.onAbort(resolve));
      stop();
      clearInterval(timer);
    }),
  );
  app.post("/inspector/api/retry", (c) => c.json(host.retry?.() ?? { woken: 0 }));
  app.get("/inspector/api/state", (c) => c.json({ ...state(), recent: host.feed.recent }));
  app.get("/inspector/api/queue", async (c) => {
    const wanted = c.req.query("state") ?? "all";
    const chosen = wanted === "all" ? undefined : (MESSAGE_STATES as readonly string[]).includes(wanted) ? (wanted as MessageState) : null;
    if (chosen === null) throw badRequest(`state must be all, ${MESSAGE_STATES.join(", ")}`);
    return c.json(await fromRelay(listMessages(host.access, chosen, QUEUE_CAP)));
  });
  app.get("/inspector/api/history", async (c) => c.json(await fromRelay(historyPage(host.access, historyQueryOf((name) => c.req.query(name))))));
  app.get("/inspector/api/messages/:id", async (c) => c.json(await shownMessage(host, messageIdOf(c.req.param("id")))));
  app.post("/inspector/api/messages/:id/replay", async (c) => c.json(await fromRelay(replayMessage(host.access, messageIdOf(c.req.param("id"))))));
  app.post("/inspector/api/messages/:id/drop", async (c) => c.json(await fromRelay(dropMessage(host.access, messageIdOf(c.req.param("id"))))));
  return { app, token };
}

/**
 * One message: the relay's copy while it has one, else the agent's own of a finished one. Headers come
 * redacted; a forwarded message's `target` is its whole URL (the source's target with the request's tail).
 */
async function shownMessage(host: InspectorHost, id: number): Promise<Record<string, unknown>> {
  try {
    const shown = await fromRelay(showMessage(host.access, id));
    const request = shown.request ? { ...shown.request, headers: redactHeaderPairs(shown.request.headers) } : shown.request;
    const headers = shown.headers ? redactHeaderRecord(shown.headers) : null;
    const target = shown.forward ? `${request?.method ?? "POST"} ${forwardUrl(shown.forward, request?.tail ?? "") ?? shown.forward}` : undefined;
    return { ...shown, message: { ...shown.message, ...(target ? { target } : {}) }, headers, ...(request ? { request } : {}), source: "relay" };
  } catch (err) {
    const kept = host.feed.keptMessage(id);
    if (!kept || !(err instanceof AgentError) || err.status !== 404) throw err;
    const last = host.feed.recent.findLast((event) => event.id === id);
    const seen = last ? { subpath: last.subpath, sender: last.sender, attempts: last.attempts, last_status: last.status, ...(last.target ? { target: `${last.method ?? "POST"} ${last.target}` } : {}) } : {};
    return { message: { id, state: "finished", kind: kept.kind, content_type: kept.content_type, ...seen }, body: kept.body, encoding: kept.encoding, headers: kept.headers ? redactHeaderRecord(kept.headers) : null, source: "agent" };
  }
}
