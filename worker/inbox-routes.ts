// HTTP inside one inbox (the edge app forwards /inbox/{agent_id}/… here unchanged): the claim, the
// webhook endpoint (what a hook body is: hub/webhook-era/hub-webhook.ts), posted envelopes, the
// WebSocket upgrade and polling; the owner's queue, hub, source, live, A2A and outbox routes are mounted
// from their folders. Built by inbox.ts; covered by test/worker/claim.test.ts, test/worker/hooks.test.ts,
// test/worker/envelopes.test.ts, test/worker/polling.test.ts and test/worker/websocket-proof.test.ts (the upgrade).
import { Hono } from "hono";
import {
  LONG_POLL_MAX_SEC,
  POLL_MAX_LIMIT,
  RelayError,
  SUBPATH_MAX_LENGTH,
  TIMESTAMP_WINDOW_SEC,
  canonicalSubpath,
  holdsOnlySignedFields,
} from "../protocol/index.ts";
import { openedFrame } from "./delivery/delivery-frame.ts";
import { answerNotFound, handleError } from "./http-errors.ts";
import { applyClaim, keyMayActFor, publicView } from "./inbox-config.ts";
import { acceptPostedEnvelope } from "./intake/intake.ts";
import { parseJsonBody, readBodyCapped, readPostedEnvelope } from "./intake/request-body.ts";
import { assertMayClaim, claimHasToken } from "./access/admission.ts";
import { hubRoutes } from "./hub/hub-routes.ts";
import { acceptHookBody } from "./hub/webhook-era/hub-webhook.ts";
import { queryInteger } from "./delivery/query-params.ts";
import { verifySignedRequest } from "./access/request-auth.ts";
import { queueRoutes } from "./delivery/queue-routes.ts";
import { historyRoutes } from "./history/history-routes.ts";
import { sourceRoutes } from "./sources/source-routes.ts";
import { liveRoutes } from "./live/live-routes.ts";
import type { LiveHost } from "./live/live-routes.ts";
import { a2aRoutes } from "./a2a/a2a-routes.ts";
import type { A2aHost } from "./a2a/a2a-routes.ts";
import { outboxRoutes } from "./outbox/outbox-routes.ts";
import type { OutboxHost } from "./outbox/outbox-routes.ts";
import { sourceMethodAdvice } from "./sources/source-request.ts";
import { openSession } from "./delivery/socket-auth.ts";
import { admitSocket } from "./delivery/socket-limits.ts";
import { checkUpgradeProof } from "./delivery/upgrade-proof.ts";
import { hashWebhookToken, mintWebhookToken, presentedWebhookToken, webhookTokenMatches } from "./access/webhook-token.ts";
import type { Admission } from "./access/admission.ts";
import type { HubLink } from "./hub/hub-link.ts";
import type { InboxConfig } from "./inbox-config.ts";
import type { QueueHost } from "./delivery/queue-routes.ts";
import type { SourceHost } from "./sources/source-routes.ts";

/**
 * What the inbox's routes need of the Durable Object (inbox.ts), beside what their sub-routers need:
 * a narrow view of it (its config, sockets and waiters), and its hub link.
 */
export interface InboxHost extends QueueHost, SourceHost, LiveHost, A2aHost, OutboxHost {
  readonly config: InboxConfig | null;
  readonly hub: HubLink;
  admission(): Admission | RelayError;
  defaultHubUrl(): string | undefined;
  setConfig(config: InboxConfig, hubChanged: boolean): Promise<void>;
  acceptSocket(ws: WebSocket): void;
  /** Every socket of the inbox, hibernated ones included (ctx.getWebSockets()). */
  sockets(): WebSocket[];
  /** Resolves when a message is stored or after `ms` (long-poll). */
  waitForMessage(ms: number): Promise<void>;
}

const CLAIM_BODY_LIMIT = 256 * 1024;

function inboxUrls(request: Request, agentId: string) {
  const base = `${new URL(request.url).origin}/inbox/${agentId}`;
  const ws = base.replace(/^http/, "ws");
  return { inbox: base, hooks: `${base}/hooks`, envelopes: `${base}/envelopes`, connect: `${ws}/connect`, messages: `${base}/messages` };
}

export function inboxRouter(inbox: InboxHost): Hono {
  const app = new Hono();
  app.onError(handleError);
  app.notFound(answerNotFound(app, sourceMethodAdvice));

  app.put("/inbox/:agent_id", async (c) => {
    const agentId = c.req.param("agent_id");
    const now = Date.now();
    const body = await readBodyCapped(c.req.raw, CLAIM_BODY_LIMIT, "a claim's fixed limit", "a claim lists keys, limits and a policy: it needs far less (a long policy list? at most 10,000 ids each)");
    const signed = await verifySignedRequest(c.req.raw, body, Math.floor(now / 1000));
    const existing = inbox.config;
    if (!(await keyMayActFor(existing, agentId, signed.publicKey))) {
      throw new RelayError(403, "key_not_authorised", `${signed.publicKey} is neither the key whose id derives to ${agentId} nor a key that key authorised`);
    }
    const admission = inbox.admission();
    await assertMayClaim(admission, agentId, !existing, c.req.raw.headers);
    // A nonce must be remembered while its timestamp could still pass the window check.
    const nonceUntil = (signed.timestamp + 2 * TIMESTAMP_WINDOW_SEC) * 1000;
    if (!inbox.store.useNonce(signed.nonce, nonceUntil)) {
      throw new RelayError(409, "replayed_request", "this signed request was already used; sign it again with a fresh nonce");
    }
    await inbox.ensureAlarm(nonceUntil);
    const json = parseJsonBody(body) as Record<string, unknown>;
    const rotate = !existing || (typeof json === "object" && json !== null && json.rotate_webhook_token === true);
    const token = rotate ? mintWebhookToken() : null;
    const config = await applyClaim({
      agentId,
      signerKey: signed.publicKey,
      body: json,
      existing,
      webhookTokenHash: token ? await hashWebhookToken(token) : null,
      nowMs: now,
      defaultHubUrl: inbox.defaultHubUrl(),
      admittedByToken: await claimHasToken(admission, c.req.raw.headers),
    });
    await inbox.setConfig(config, existing?.hub_url !== config.hub_url);
    // A link set to pull starts pulling at once (the alarm keeps it going).
    if (config.hub?.mode === "pull") {
      inbox.hub.pullAtNextAlarm();
      await inbox.ensureAlarm(now);
    }
    const urls = inboxUrls(c.req.raw, agentId);
    return c.json(
      {
        agent_id: agentId,
        created: !existing,
        urls,
        ...(token ? { webhook_token: token, hub_registration: { url: urls.hooks, webhook_token: token } } : {}),
        config: publicView(config),
      },
      existing ? 200 : 201,
    );
  });

  app.post("/inbox/:agent_id/hooks/*", async (c) => {
    const config = inbox.requireConfig();
    const token = presentedWebhookToken(c.req.raw.headers);
    if (!token) throw new RelayError(401, "missing_webhook_token", "send the inbox's webhook token as Authorization: Bearer <token> (or x-openclaw-token)");
    if (!(await webhookTokenMatches(token, config.webhook_token_hash))) {
      throw new RelayError(401, "invalid_webhook_token", "the webhook token is not this inbox's; use the token shown when the inbox was claimed, or rotate it");
    }
    // Still percent-encoded: decoding the path whole first would let %2F make new segments. (Plain
    // dot segments never get here: the runtime resolves "a/../b" before the Worker sees the URL.)
    const prefix = `/inbox/${config.agent_id}/hooks/`;
    const canonical = canonicalSubpath(new URL(c.req.url).pathname.slice(prefix.length));
    if (!canonical.ok) {
      throw new RelayError(400, "invalid_subpath", `${canonical.problem}; the sub-path after /hooks/ must be segments of [A-Za-z0-9._~-] (no ".", "..", empty or encoded-slash segments, at most ${SUBPATH_MAX_LENGTH} characters), e.g. agentgram_inbox/agent`);
    }
    const body = await readBodyCapped(c.req.raw, config.limits.max_body_bytes);
    const hook = { body, subpath: canonical.subpath, contentType: c.req.header("content-type") ?? "application/octet-stream" };
    const answer = await acceptHookBody(hook, () => inbox.intake(), inbox.hub);
    return c.json(answer.body, answer.status);
  });

  app.post("/inbox/:agent_id/envelopes", async (c) => {
    const config = inbox.requireConfig();
    const body = await readBodyCapped(c.req.raw, config.limits.max_body_bytes);
    const { json, envelope, payloadHash } = await readPostedEnvelope(body);
    // Stored as sent when it holds nothing but the envelope (a leading BOM, which the parse skips, would not be).
    const asSent = holdsOnlySignedFields(json, envelope) && body[0] !== 0xef;
    return c.json(await acceptPostedEnvelope(inbox.intake(), envelope, asSent ? body : null, payloadHash), 202);
  });

  app.get("/inbox/:agent_id/connect", async (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
      throw new RelayError(426, "upgrade_required", "connect with a WebSocket (Upgrade: websocket)");
    }
    const config = inbox.requireConfig();
    // Refused here, in the JSON shape, before the runtime would answer a bad handshake in plain text.
    if (c.req.header("sec-websocket-version") !== "13") {
      throw new RelayError(426, "upgrade_required", "this relay speaks WebSocket version 13: send Sec-WebSocket-Version: 13", { "sec-websocket-version": "13" });
    }
    if (!/^[A-Za-z0-9+/]{22}==$/.test(c.req.header("sec-websocket-key") ?? "")) {
      throw new RelayError(400, "invalid_websocket_handshake", "Sec-WebSocket-Key must be base64 of 16 random bytes (RFC 6455)");
    }
    // The owner's signed upgrade never waits behind anonymous sockets (delivery/upgrade-proof.ts).
    const proof = await checkUpgradeProof(inbox, c.req.raw);
    const refusal = proof.proven ? null : admitSocket(inbox.sockets(), Date.now(), proof.refused);
    if (refusal) throw refusal;
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    inbox.acceptSocket(server);
    await inbox.ensureAlarm(openSession(server, config, Date.now(), proof.proven));
    return new Response(null, { status: 101, webSocket: client });
  });

  app.get("/inbox/:agent_id/messages", async (c) => {
    const config = inbox.requireConfig();
    const signed = await verifySignedRequest(c.req.raw, new Uint8Array(0), Math.floor(Date.now() / 1000));
    if (!(await keyMayActFor(config, config.agent_id, signed.publicKey))) {
      throw new RelayError(403, "key_not_authorised", `${signed.publicKey} may not read this inbox`);
    }
    const after = queryInteger(c.req.query("after"), "after", 0, Number.MAX_SAFE_INTEGER, 0);
    const limit = queryInteger(c.req.query("limit"), "limit", 1, POLL_MAX_LIMIT, 50);
    const timeout = queryInteger(c.req.query("timeout"), "timeout", 0, LONG_POLL_MAX_SEC, 0);
    const ackText = c.req.query("ack") ?? "true";
    if (ackText !== "true" && ackText !== "false") throw new RelayError(400, "invalid_query", 'ack must be "true" or "false"');
    // ack=true commits the cursor: everything up to `after` was finished by the caller.
    if (ackText === "true" && after > 0) {
      inbox.store.acknowledge({ upTo: after });
      inbox.wakeConsumers();
    }
    let rows = inbox.store.messagesAfter(after, limit + 1);
    if (rows.length === 0 && timeout > 0) {
      await inbox.waitForMessage(timeout * 1000);
      rows = inbox.store.messagesAfter(after, limit + 1);
    }
    const messages = await Promise.all(rows.slice(0, limit).map((row) => openedFrame(row, inbox)));
    const summary = inbox.store.summary(inbox.inFlight());
    return c.json({
      messages,
      count: messages.length,
      has_more: rows.length > limit,
      next_after: messages.length > 0 ? messages[messages.length - 1]!.id : after,
      backlog: summary.queued + summary.sent,
      dead: summary.dead,
    });
  });

  app.route("/", queueRoutes(inbox));
  app.route("/", historyRoutes(inbox));
  app.route("/", hubRoutes(inbox, inbox.hub));
  app.route("/", sourceRoutes(inbox));
  app.route("/", liveRoutes(inbox));
  app.route("/", a2aRoutes(inbox));
  app.route("/", outboxRoutes(inbox));
  return app;
}
