// The owner's view of live requests: GET /inbox/{id}/live?limit=N, the newest first (never a body or a
// query: live-log.ts), with how many wait for their answer now. A signed request by a key of the inbox, as
// the queue's routes. Mounted by inbox-routes.ts; covered by test/worker/live-log.test.ts.
import { Hono } from "hono";
import type { LiveLogView } from "../../protocol/index.ts";
import { requireOwner } from "../access/request-auth.ts";
import type { OwnedInbox } from "../access/request-auth.ts";
import { queryInteger } from "../delivery/query-params.ts";
import type { LiveLog } from "./live-log.ts";
import { LIVE_LOG_KEPT } from "./live-log.ts";
import type { LiveRequests } from "./live-requests.ts";

export interface LiveHost extends OwnedInbox {
  readonly live: LiveRequests;
  readonly liveLog: LiveLog;
}

export function liveRoutes(host: LiveHost): Hono {
  const app = new Hono();
  app.get("/inbox/:agent_id/live", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: false });
    const limit = queryInteger(c.req.query("limit"), "limit", 1, LIVE_LOG_KEPT, 50);
    return c.json({ requests: host.liveLog.newest(limit), in_flight: host.live.inFlight() } satisfies LiveLogView);
  });
  return app;
}
