// GET /inbox/{id}/hub: the inbox's hub link as its owner sees it (`clawrelay hub status`): mode, prefix,
// how the last receipt, pull and bridge went. Signed by a key of the inbox; secrets (the JWT) are not shown.
import { Hono } from "hono";
import { effectivePrefix } from "./hub-link.ts";
import { hubLinkOf } from "../inbox-config.ts";
import { requireOwner } from "../access/request-auth.ts";
import type { OwnedInbox } from "../access/request-auth.ts";

export function hubRoutes(host: OwnedInbox): Hono {
  const app = new Hono();
  app.get("/inbox/:agent_id/hub", async (c) => {
    const config = await requireOwner(host, c.req.raw, { spendNonce: false });
    const link = hubLinkOf(config);
    const state = host.store.loadHubState();
    return c.json({
      hub_url: config.hub_url,
      mode: link.mode,
      prefix: effectivePrefix(link, state),
      prefix_source: link.prefix ? "set" : state.learned_prefix ? "learned from the hub's probes" : "default",
      pull_interval_sec: link.pull_interval_sec,
      receipt_key_id: config.receipt_key.key_id,
      last_receipt: state.last_receipt,
      receipts_refused: state.receipts_refused,
      receipts_pending: host.store.countOutbox("hub:"),
      last_pull: state.last_pull,
      last_bridge: state.last_bridge,
    });
  });
  return app;
}
