// The inbox's hub link as its owner sees it, all signed by a key of the inbox:
// GET /inbox/{id}/hub — mode, prefix, the token (never the token itself), the last receipt, pull and
// bridge, and what another client of the agent did (`clawrelay hub status`, `doctor`);
// GET|PUT /inbox/{id}/hub/token — the agent's hub JWT, read by the owner's own hub commands so they
// never mint a token that would end this one, and handed over after a registration (single-use nonce);
// POST /inbox/{id}/hub/pull — pull now (pull mode). Mounted by inbox-routes.ts; covered by
// test/worker/hub-token.test.ts and test/worker/hub-pull.test.ts.
import { Hono } from "hono";
import { RelayError } from "../../protocol/index.ts";
import { requireOwner, requireOwnerJson } from "../access/request-auth.ts";
import type { OwnedInbox } from "../access/request-auth.ts";
import type { HubLink } from "./hub-link.ts";
import { readTokenOffer } from "./hub-token.ts";

export function hubRoutes(owner: OwnedInbox, hub: HubLink): Hono {
  const app = new Hono();
  app.get("/inbox/:agent_id/hub", async (c) => {
    await requireOwner(owner, c.req.raw, { spendNonce: false });
    return c.json(await hub.view());
  });

  app.get("/inbox/:agent_id/hub/token", async (c) => {
    await requireOwner(owner, c.req.raw, { spendNonce: true });
    const held = await hub.heldToken();
    if (!held) throw new RelayError(404, "hub_token_unknown", "this inbox holds no hub token yet: run clawrelay hub register");
    return c.json({ token: held.token, expires_at: held.expiresAtMs / 1000, source: held.source });
  });

  app.put("/inbox/:agent_id/hub/token", async (c) => {
    const { json } = await requireOwnerJson(owner, c.req.raw, 16 * 1024, "a token's fixed limit", "a hub token is a few hundred characters");
    const offer = readTokenOffer(json, Date.now());
    const { taken, held } = await hub.offerToken(offer, "owner", Date.now());
    return c.json({ taken, expires_at: held ? held.expiresAtMs / 1000 : null, source: held?.source ?? null });
  });

  app.post("/inbox/:agent_id/hub/pull", async (c) => {
    await requireOwner(owner, c.req.raw, { spendNonce: true });
    if (hub.settings().mode !== "pull") throw new RelayError(409, "not_pulling", "this inbox's hub link is not in pull mode: run clawrelay hub register --mode pull");
    await hub.pullNow();
    return c.json(hub.pullReport());
  });
  return app;
}
