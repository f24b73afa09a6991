// The owner's outbox routes (docs/protocol.md, "The outbox and receipt filing"): record a message before
// posting it, say how a post went when no receipt will, list the records a page at a time, and choose
// whether acks that answer a record are delivered too. Every call is a request signed by a key of the
// inbox; recording spends no nonce (a replayed record call inserts nothing), the setting does. Mounted by
// inbox-routes.ts; covered by test/worker/outbox.test.ts.
import { Hono } from "hono";
import { ACK_DELIVERIES, ENVELOPE_TYPES, RelayError } from "../../protocol/index.ts";
import type { AckDelivery, OutboxOutcome, OutboxPage, OutboxRecordRequest } from "../../protocol/index.ts";
import { requireOwner, requireOwnerJson } from "../access/request-auth.ts";
import type { OwnedInbox } from "../access/request-auth.ts";
import { queryInteger } from "../delivery/query-params.ts";
import { parseJsonBody, readBodyCapped } from "../intake/request-body.ts";
import type { OutboxBook } from "./outbox-store.ts";

export interface OutboxHost extends OwnedInbox {
  readonly outbox: OutboxBook;
}

const BODY_LIMIT = 4096;
const ID_MAX = 128;
const TOPIC_MAX = 1024;
const LIST_MAX = 200;

const invalid = (message: string) => new RelayError(400, "invalid_outbox_request", message);

/** A JSON object holding only `allowed` fields; an unknown one is named. */
function fieldsOf(json: unknown, allowed: readonly string[], example: string): Record<string, unknown> {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw invalid(`the body must be a JSON object, e.g. ${example}`);
  const unknown = Object.keys(json).find((key) => !allowed.includes(key));
  if (unknown !== undefined) throw invalid(`unknown field "${unknown}": this route takes ${allowed.join(", ")}`);
  return json as Record<string, unknown>;
}

function text(body: Record<string, unknown>, field: string, max: number, nullable: boolean): string | null {
  const value = body[field] ?? null;
  if (value === null && nullable) return null;
  if (typeof value !== "string" || value === "" || value.length > max) {
    throw invalid(`"${field}" must be ${nullable ? "null or " : ""}a string of 1 to ${max} characters`);
  }
  return value;
}

export function recordRequest(json: unknown): OutboxRecordRequest {
  const body = fieldsOf(json, ["msg_id", "to", "type", "reply_to", "topic"], '{"msg_id":"…","to":"ag_…","type":"message","reply_to":null,"topic":null}');
  const type = text(body, "type", 32, false)!;
  if (!(ENVELOPE_TYPES as readonly string[]).includes(type)) throw invalid(`"type" must be one of ${ENVELOPE_TYPES.join(", ")}`);
  return {
    msg_id: text(body, "msg_id", ID_MAX, false)!,
    to: text(body, "to", ID_MAX, false)!,
    type,
    reply_to: text(body, "reply_to", ID_MAX, true),
    topic: text(body, "topic", TOPIC_MAX, true),
  };
}

export function outcomeRequest(json: unknown): OutboxOutcome {
  const body = fieldsOf(json, ["outcome", "error"], '{"outcome":"refused","error":{"code":"…","message":"…"}}');
  if (body.outcome === "queued" && body.error === undefined) return { outcome: "queued" };
  if (body.outcome !== "refused") throw invalid('"outcome" must be "queued" (with no error) or "refused" (with an error)');
  const error = fieldsOf(body.error, ["code", "message"], '{"code":"relay_unreachable","message":"…"}');
  return { outcome: "refused", error: { code: text(error, "code", 64, false)!, message: text(error, "message", 500, false)! } };
}

async function ownerBody(host: OutboxHost, request: Request): Promise<unknown> {
  const body = await readBodyCapped(request, BODY_LIMIT, "an outbox call's fixed limit", "an outbox call names a message's ids: it needs far less");
  await requireOwner(host, request, { spendNonce: false, body });
  return parseJsonBody(body);
}

export function outboxRoutes(host: OutboxHost): Hono {
  const app = new Hono();

  app.get("/inbox/:agent_id/outbox", async (c) => {
    await requireOwner(host, c.req.raw, { spendNonce: false });
    const limit = queryInteger(c.req.query("limit"), "limit", 0, LIST_MAX, 50);
    const before = queryInteger(c.req.query("before"), "before", 0, Number.MAX_SAFE_INTEGER, 0);
    const page = host.outbox.list(before, limit, Date.now());
    const answer: OutboxPage = {
      records: page.records,
      count: page.records.length,
      has_more: page.hasMore,
      next_before: page.nextBefore,
      total: page.total,
      acks: host.outbox.acks(),
    };
    return c.json(answer);
  });

  app.post("/inbox/:agent_id/outbox", async (c) => {
    const request = recordRequest(await ownerBody(host, c.req.raw));
    const recorded = host.outbox.record(request, Date.now());
    return c.json({ recorded, record: host.outbox.find(request.msg_id) }, recorded ? 201 : 200);
  });

  app.post("/inbox/:agent_id/outbox/:msg_id/outcome", async (c) => {
    const outcome = outcomeRequest(await ownerBody(host, c.req.raw));
    const msgId = c.req.param("msg_id");
    const record = host.outbox.settle(msgId, outcome);
    if (!record) throw new RelayError(404, "outbox_record_not_found", `no outbox record for msg_id ${msgId.slice(0, ID_MAX)}: record it first (POST …/outbox), or it was pruned`);
    return c.json({ record });
  });

  app.put("/inbox/:agent_id/outbox/settings", async (c) => {
    const { json } = await requireOwnerJson(host, c.req.raw, BODY_LIMIT, "an outbox call's fixed limit", 'the setting is {"acks":"record"} or {"acks":"deliver"}');
    const body = fieldsOf(json, ["acks"], '{"acks":"deliver"}');
    if (!ACK_DELIVERIES.includes(body.acks as AckDelivery)) {
      throw invalid(`"acks" must be "record" (acks answering a sent message only change its record) or "deliver" (they reach the agent too)`);
    }
    host.outbox.setAcks(body.acks as AckDelivery);
    return c.json({ acks: host.outbox.acks() });
  });

  return app;
}
