// The inbox's hub link as its owner sees it, all signed by a key of the inbox:
// GET /inbox/{id}/hub — mode, prefix, the token (never the token itself), the last receipt, pull and
// bridge, and what another client of the agent did (`clawrelay hub status`, `doctor`);
// GET|PUT /inbox/{id}/hub/token — the agent's hub JWT, read by the owner's own hub commands so they
// never mint a token that would end this one, and handed over after a registration (single-use nonce);
// POST /inbox/{id}/hub/pull — pull now (pull mode).
import { Hono } from "hono";
import { RelayError, parseHubToken } from "../../protocol/index.ts";
import { hubLinkOf } from "../inbox-config.ts";
import { requireOwner } from "../access/request-auth.ts";
import type { OwnedInbox } from "../access/request-auth.ts";
import { parseJsonBody, readBodyCapped } from "../intake/request-body.ts";
import { effectivePrefix, prefixSource } from "./hub-link.ts";
import { pullFromHub } from "./hub-pull.ts";
import type { PullHost } from "./hub-pull.ts";
import { idleCostPerDay } from "./hub-schedule.ts";
import { heldHubToken, offerHubToken, tokenView } from "./hub-token.ts";

export interface HubRouteHost extends PullHost, OwnedInbox {}

export function hubRoutes(host: HubRouteHost): Hono {
  const app = new Hono();
  app.get("/inbox/:agent_id/hub", async (c) => {
    const config = await requireOwner(host, c.req.raw, { spendNonce: false });
    const link = hubLinkOf(config);
    const state = host.store.loadHubState();
    return c.json({
      hub_url: config.hub_url,
      mode: link.mode,
      prefix: effectivePrefix(link, state),
      prefix_source: prefixSource(link, state),
      pull_interval_sec: link.pull_interval_sec,
      receipt_key_id: config.receipt_key.key_id,
      token: tokenView(await heldHubToken(host).catch(() => null)),
      token_lost: state.token_lost,
      last_receipt: state.last_receipt,
      receipts_refused: state.receipts_refused,
      receipts_pending: host.store.countOutbox("hub:"),
      last_pull: state.last_pull,
      recent_pulled: state.recent_pulled,
      next_pull_at: link.mode === "pull" ? host.pull.nextAt : null,
      idle_cost_per_day: link.mode === "pull" ? idleCostPerDay(link.pull_interval_sec) : null,
      last_bridge: state.last_bridge,
      bridge_waiting: state.claims.length,
    });
  });

  app.get("/inbox/:agent_id/hub/token", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: true });
    const held = await heldHubToken(host);
    if (!held) throw new RelayError(404, "hub_token_unknown", "this inbox holds no hub token yet: run clawrelay hub register");
    return c.json({ token: held.token, expires_at: held.expires_at, source: held.source });
  });

  app.put("/inbox/:agent_id/hub/token", async (c) => {
    const body = await readBodyCapped(c.req.raw, 16 * 1024, "a token's fixed limit", "a hub token is a few hundred characters");
    await requireOwner(host, c.req.raw, { spendNonce: true, body });
    const json = parseJsonBody(body);
    const offer = typeof json === "object" && json !== null && !Array.isArray(json) ? parseHubToken(json as Record<string, unknown>) : null;
    if (!offer) throw new RelayError(400, "invalid_hub_token", 'send {"token": "<the hub JWT>", "expires_at": <unix seconds>}');
    const { taken, held } = await offerHubToken(host, offer, "owner", Date.now());
    return c.json({ taken, expires_at: held?.expires_at ?? null, source: held?.source ?? null });
  });

  app.post("/inbox/:agent_id/hub/pull", async (c) => {
    const config = await requireOwner(host, c.req.raw, { spendNonce: true });
    if (hubLinkOf(config).mode !== "pull") throw new RelayError(409, "not_pulling", "this inbox's hub link is not in pull mode: run clawrelay hub register --mode pull");
    await pullFromHub(host, { schedule: true });
    return c.json({ last_pull: host.store.loadHubState().last_pull, next_pull_at: host.pull.nextAt });
  });
  return app;
}
