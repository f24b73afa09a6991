// HTTP of the directory: publish, release and read cards (signed by the agent's key), and search.
import { Hono } from "hono";
import { RelayError, agentIdFor } from "../../protocol/index.ts";
import type { Env } from "../env.ts";
import { parseJsonBody, readBodyCapped } from "../intake/request-body.ts";
import { unwrapRpc } from "../rpc-result.ts";
import { verifySignedRequest } from "../access/request-auth.ts";
import { admissionFrom, assertMayPublish } from "../access/admission.ts";
import { parseCard } from "./card.ts";

const CARD_BODY_LIMIT = 128 * 1024;
export const DIRECTORY_NAME = "directory";
const MAX_QUERY_LENGTH = 500;

function directory(env: Env) {
  return env.DIRECTORY.getByName(DIRECTORY_NAME);
}

/**
 * The key must be the agent's root key or one its (claimed) inbox lists; publishing also follows the
 * operator's admission rule (admission.ts), releasing a card does not.
 */
async function assertMayActFor(env: Env, agentId: string, publicKey: string, publishing: boolean): Promise<void> {
  const inbox = await env.INBOX.getByName(agentId).authorises(publicKey);
  if (!inbox.claimed) throw new RelayError(409, "inbox_not_claimed", `claim the inbox of ${agentId} first: the directory sends tasks there`);
  if (!inbox.allowed && (await agentIdFor(publicKey)) !== agentId) {
    throw new RelayError(403, "key_not_authorised", `${publicKey} may not act for ${agentId}`);
  }
  if (publishing) assertMayPublish(admissionFrom(env), agentId, inbox.admittedByToken);
}

export const directoryRoutes = new Hono<{ Bindings: Env }>();

directoryRoutes.put("/agents/:name", async (c) => {
  const body = await readBodyCapped(c.req.raw, CARD_BODY_LIMIT, "a card's fixed limit", "shorten the card's descriptions, skills or examples (this limit is the relay's, not a setting)");
  const signed = await verifySignedRequest(c.req.raw, body, Math.floor(Date.now() / 1000));
  const card = parseCard(parseJsonBody(body), c.req.param("name"));
  await assertMayActFor(c.env, card.agent_id, signed.publicKey, true);
  const { created } = unwrapRpc(await directory(c.env).publish(card, signed.timestamp));
  return c.json({ name: card.name, agent_id: card.agent_id, created }, created ? 201 : 200);
});

directoryRoutes.delete("/agents/:name", async (c) => {
  const signed = await verifySignedRequest(c.req.raw, new Uint8Array(0), Math.floor(Date.now() / 1000));
  const name = c.req.param("name");
  const card = await directory(c.env).card(name);
  if (!card) throw new RelayError(404, "agent_not_found", `no agent named "${name}" is in the directory`);
  await assertMayActFor(c.env, card.agent_id, signed.publicKey, false);
  unwrapRpc(await directory(c.env).release(name, card.agent_id));
  return c.json({ released: name });
});

directoryRoutes.get("/agents/:name", async (c) => {
  const name = c.req.param("name");
  const card = await directory(c.env).card(name);
  if (!card) throw new RelayError(404, "agent_not_found", `no agent named "${name}" is in the directory`);
  return c.json(card);
});

directoryRoutes.post("/search", async (c) => {
  const body = parseJsonBody(await readBodyCapped(c.req.raw, 16 * 1024, "a search request's fixed limit", "send a shorter query")) as { query?: unknown; limit?: unknown };
  if (typeof body !== "object" || body === null || typeof body.query !== "string" || body.query.length > MAX_QUERY_LENGTH) {
    throw new RelayError(400, "invalid_query", `send {"query": "<text of at most ${MAX_QUERY_LENGTH} characters>", "limit": 1..50}`);
  }
  const limit = Math.min(50, Math.max(1, Math.trunc(Number(body.limit ?? 10)) || 10));
  const { hits, total } = await directory(c.env).search(body.query, limit);
  return c.json({
    agents: hits.map((hit) => ({
      name: hit.card.name,
      agent_id: hit.card.agent_id,
      description: hit.card.description,
      score: Math.round(hit.score * 10_000) / 10_000,
      best_skill_id: hit.best_skill_id,
      skills: hit.card.skills.map((s) => ({ id: s.id, name: s.name, description: s.description })),
    })),
    // Every agent that matched, before the limit: "3 of 12" tells a script there is more to ask for.
    total,
  });
});
