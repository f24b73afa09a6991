// The owner's history: GET /inbox/{id}/history (every stored message, queue and kept, in id order,
// filtered, searched, with a cursor that carries the inbox's epoch, and an optional long-poll for the next
// one) and POST /inbox/{id}/history/replay (kept and dead messages queued again in bulk). Signed owner
// calls like GET …/queue (docs/protocol.md, "History"); they never acknowledge anything and never touch
// the agent's socket. Mounted by delivery/queue-routes.ts; covered by test/worker/history.test.ts.
import { Hono } from "hono";
import { HISTORY_LIMIT_MAX, HISTORY_SEARCH_MAX_CHARS, HISTORY_STATES, HISTORY_WAIT_MAX_SEC, RelayError } from "../../protocol/index.ts";
import type { HistoryPage, HistoryState } from "../../protocol/index.ts";
import { requireOwner } from "../access/request-auth.ts";
import { queueItem } from "../delivery/queue-routes.ts";
import { queryInteger } from "../delivery/query-params.ts";
import { sourceSender } from "../sources/source-config.ts";
import type { HistoryQuery } from "../storage/history-scan.ts";
import { replayRoute } from "./history-replay.ts";
import type { HistoryHost } from "./history-replay.ts";

const invalid = (message: string) => new RelayError(400, "invalid_query", message);

export function cursorOf(epoch: string, seq: number): string {
  return `${epoch}.${seq}`;
}

function parseCursor(text: string): { epoch: string; seq: number } {
  const match = /^([0-9a-f]{1,32})\.(0|[1-9][0-9]{0,15})$/.exec(text);
  const seq = match ? Number(match[2]) : NaN;
  if (!match || !Number.isSafeInteger(seq)) throw invalid(`cursor "${text.slice(0, 60)}" is not a history cursor: pass next_cursor back as it came`);
  return { epoch: match[1]!, seq };
}

function optionalText(value: string | undefined, name: string, max: number): string | null {
  if (value === undefined || value === "") return null;
  if (value.length > max) throw invalid(`${name} must be at most ${max} characters`);
  return value;
}

function optionalMs(value: string | undefined, name: string): number | null {
  return value === undefined || value === "" ? null : queryInteger(value, name, 0, Number.MAX_SAFE_INTEGER, 0);
}

export function historyRoutes(host: HistoryHost): Hono {
  const app = new Hono();

  app.get("/inbox/:agent_id/history", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: false });
    const stateText = c.req.query("state") ?? "all";
    if (!(HISTORY_STATES as readonly string[]).includes(stateText)) throw invalid(`state must be one of ${HISTORY_STATES.join(", ")}`);
    const limit = queryInteger(c.req.query("limit"), "limit", 1, HISTORY_LIMIT_MAX, 50);
    const waitSec = queryInteger(c.req.query("wait"), "wait", 0, HISTORY_WAIT_MAX_SEC, 0);
    const search = optionalText(c.req.query("search"), "search", HISTORY_SEARCH_MAX_CHARS);
    const source = optionalText(c.req.query("source"), "source", 200);
    const from = optionalText(c.req.query("from"), "from", 200);
    const { store } = host;
    const epoch = store.epoch();
    const cursorText = c.req.query("cursor");
    let after = 0;
    let gap: HistoryPage["gap"] = null;
    if (cursorText !== undefined && cursorText !== "") {
      const cursor = parseCursor(cursorText);
      // Another epoch: this storage is not the one the cursor was read from; start at the oldest kept.
      if (cursor.epoch !== epoch) gap = { reason: "epoch", oldest_kept: null };
      else after = cursor.seq;
      if (!gap && after < store.history.floor()) gap = { reason: "retention", oldest_kept: null };
      if (gap) {
        const oldest = store.oldestSeq();
        gap.oldest_kept = oldest === null ? null : cursorOf(epoch, oldest - 1);
      }
    } else if (waitSec > 0) {
      after = store.queueStats().lastSeq;
    }
    const query: HistoryQuery = {
      after,
      limit,
      state: stateText as HistoryState,
      since: optionalMs(c.req.query("since"), "since"),
      until: optionalMs(c.req.query("until"), "until"),
      sender: source !== null ? sourceSender(source) : from,
      lane: optionalText(c.req.query("conversation"), "conversation", 300),
      search,
      inFlight: host.inFlight(),
    };
    if (source !== null && from !== null && sourceSender(source) !== from) throw invalid("source and from name two different senders");
    let scan = store.historyPage(query);
    const deadline = Date.now() + waitSec * 1000;
    // Waits only when the scan saw everything stored: past its bound the answer's cursor is where to go on.
    while (scan.rows.length === 0 && scan.complete && Date.now() < deadline) {
      await host.waitForMessage(deadline - Date.now());
      scan = store.historyPage({ ...query, inFlight: host.inFlight() });
    }
    const inFlight = host.inFlight();
    const more = scan.rows.length > limit;
    const rows = scan.rows.slice(0, limit);
    const position = more ? Number(rows[rows.length - 1]!.seq) : scan.lastScanned;
    const page: HistoryPage = {
      messages: rows.map((row) => queueItem(row as unknown as Parameters<typeof queueItem>[0], inFlight)),
      next_cursor: position === null ? null : cursorOf(epoch, position),
      cursor: cursorOf(epoch, position ?? after),
      epoch,
      gap,
      scanned: scan.scanned,
    };
    return c.json(page);
  });

  app.post("/inbox/:agent_id/history/replay", (c) => replayRoute(host, c.req.raw).then((result) => c.json(result)));

  return app;
}
