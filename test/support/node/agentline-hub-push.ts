// Webhook endpoints at the stand-in hub: POST …/endpoints (probes inside the request, 201/200,
// active/unverified, the welcome), POST …/endpoints/test, GET …/endpoints/status; today's hub still
// probes but answers with `Deprecation: true` and its `Warning: 299`, and never pushes. The webhook
// era's pushes: the flat body to {url}/<prefix>_inbox/agent|wake, and its retry loop (backoff 1, 2, 4 …
// s, TTL, unreachable endpoints). Imported by agentline-hub.ts and agentline-hub-send.ts.
import { isIP } from "node:net";
import { HubError } from "./agentline-hub-errors.ts";
import { hubHttp } from "./agentline-hub-http.ts";
import type { PostResult } from "./agentline-hub-http.ts";
import { addRecord, ttlError, visible } from "./agentline-hub-records.ts";
import type { Registry } from "./agentline-hub-registry.ts";
import { roomContext } from "./agentline-hub-rooms.ts";
import { webhookBody } from "./agentline-hub-text.ts";
import type { RoomContext } from "./agentline-hub-text.ts";
import { answer, agentOr404, displayName, field, hex, isoOrNull, isoTime, jsonObject } from "./agentline-hub-world.ts";
import type { Answer, HubEndpoint, HubRecord, HubRequest, HubWorld } from "./agentline-hub-world.ts";
import { hubMadeEnvelope } from "./agentline-hub-wire.ts";

export const DEPRECATION = { Deprecation: "true", Warning: '299 BotCord "Webhook endpoint delivery is deprecated; use /hub/ws + /hub/inbox"' };
const WELCOME = "[BotCord Hub] Welcome! Your webhook endpoint is active. This test message confirms delivery is working.";
const STATUS_HINTS: Record<number, string> = {
  401: "Check that webhook_token matches your OpenClaw hooks.token configuration", 403: "Check webhook_token permissions and OpenClaw hooks.token configuration",
  404: "Check hooks.mappings in openclaw.json — the path may not be registered", 400: "Check allowRequestSessionKey and allowedSessionKeyPrefixes in openclaw.json",
};

/** Where and how a push goes: the session key's room and topic, and the header's room context. */
export interface PushTarget { roomId: string | null; topic: string | null; room: RoomContext | null }

export interface Pusher {
  /** Pushes a record at once (inside the request that made it) and sets its state as the hub does; no commit. */
  deliverNow(record: HubRecord, target: PushTarget): Promise<void>;
  route(req: HubRequest, agentId: string, tail: string[], registry: Registry): Promise<Answer | null>;
  close(): void;
}

function privateHost(hostname: string): string | null {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || [".local", ".internal", ".localhost"].some((s) => host.endsWith(s))) return "private_hostnames_not_allowed";
  const v4 = isIP(host) === 4 ? host.split(".").map(Number) : null;
  const [a = 0, b = 0] = v4 ?? [];
  const private4 = v4 !== null && (a === 10 || a === 127 || a === 0 || a >= 240 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 169 && b === 254) || (a === 100 && b >= 64 && b <= 127));
  const private6 = isIP(host) === 6 && (host === "::1" || host === "::" || /^f[cd]/.test(host) || /^fe[89ab]/.test(host));
  return private4 || private6 ? "private_ips_not_allowed" : null;
}

export function createPusher(world: HubWorld): Pusher {
  const http = hubHttp();
  const sub = (leaf: string) => `/${world.prefix}_inbox/${leaf}`;
  const webhookEra = world.generation === "webhook-era";
  let stopped = false;

  function validateUrl(raw: string): void {
    const url = URL.canParse(raw) ? new URL(raw) : null;
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) throw new HubError(400, "url_must_use_http_or_https");
    if (url.hostname === "") throw new HubError(400, "url_must_have_hostname");
    const refusal = world.allowPrivateEndpoints ? null : privateHost(url.hostname);
    if (refusal) throw new HubError(400, refusal);
  }

  /** build_forward_url: the base without a trailing sub-path of ours, then /<prefix>_inbox/<leaf>. */
  function forwardUrl(base: string, leaf: "agent" | "wake"): string {
    let url = base.replace(/\/+$/, "");
    for (const suffix of [sub("agent"), sub("wake")]) if (url.endsWith(suffix)) url = url.slice(0, -suffix.length);
    return url + sub(leaf);
  }

  async function probe(url: string, token: string, leaf: "agent" | "wake") {
    const target = url.replace(/\/+$/, "") + sub(leaf);
    const result = await http.post(target, token, JSON.stringify({ probe: true }), { fresh: true, timeoutMs: world.timings.probeTimeoutMs, signal: world.closing });
    world.logs.probes.push({ path: new URL(target).pathname, status: result.status, error: result.error, raw: result.raw, headers: result.headers, at: Date.now() });
    if (result.status >= 200 && result.status < 300) return { path: sub(leaf), ok: true, status_code: result.status, error: null, hint: null };
    if (result.status > 0) return { path: sub(leaf), ok: false, status_code: result.status, error: `HTTP ${result.status}`, hint: STATUS_HINTS[result.status] ?? (result.status >= 500 ? "Target service returned a server error — check OpenClaw health and logs" : null) };
    const seconds = world.timings.probeTimeoutMs / 1000;
    const timeout = result.error === "TIMEOUT";
    return {
      path: sub(leaf), ok: false, status_code: null, error: timeout ? `Timeout after ${Number.isInteger(seconds) ? seconds.toFixed(1) : seconds}s` : "Connection refused",
      hint: timeout ? "Check network connectivity and target service responsiveness" : "Check that the target service is running and the URL is reachable",
    };
  }

  /** probe_endpoint_detailed: /agent, then /wake, each on a new connection. */
  async function probeBoth(url: string, token: string) {
    const agent_path = await probe(url, token, "agent");
    const wake_path = await probe(url, token, "wake");
    const all_ok = agent_path.ok && wake_path.ok;
    const summary = all_ok ? "Both paths are reachable and responding correctly"
      : agent_path.ok ? `${sub("agent")} OK, but ${sub("wake")} failed: ${wake_path.error}`
      : wake_path.ok ? `${sub("wake")} OK, but ${sub("agent")} failed: ${agent_path.error}`
      : `Both paths failed — agent: ${agent_path.error}, wake: ${wake_path.error}`;
    return { url, agent_path, wake_path, all_ok, summary };
  }

  const endpointView = (e: HubEndpoint) => ({ endpoint_id: e.endpoint_id, url: e.url, state: e.state, webhook_token_set: true, registered_at: isoTime(e.registered_at) });

  async function register(req: HubRequest, agentId: string, registry: Registry): Promise<Answer> {
    registry.owns(req, agentId, "jwt");
    const body = await jsonObject(req);
    const [url, webhook_token] = [field(body, "url"), field(body, "webhook_token")];
    validateUrl(url);
    const report = await probeBoth(url, webhook_token);
    const state = report.all_ok ? "active" : "unverified";
    const agent = agentOr404(world, agentId);
    const headers = webhookEra ? undefined : DEPRECATION;
    const now = Date.now();
    const existing = agent.endpoint;
    if (existing) {
      const wasNotActive = existing.state !== "active";
      Object.assign(existing, { url, webhook_token, state, last_probe_at: now });
      if (wasNotActive && state === "active") {
        for (const r of visible(world)) if (r.receiver_id === agentId && r.state === "queued" && r.last_error === "ENDPOINT_UNREACHABLE" && r.next_retry_at === null) r.next_retry_at = now;
      }
      return answer(endpointView(existing), 200, headers);
    }
    agent.endpoint = { endpoint_id: `ep_${hex(6)}`, url, webhook_token, state, registered_at: now, last_probe_at: now, last_delivery_error: null };
    if (state === "active") {
      const envelope = hubMadeEnvelope("hub", agentId, "system", { text: WELCOME }, "hub");
      // Due at once; the retry loop (webhook era) carries it, 0–1 s later. Today nothing pushes it.
      addRecord(world, { envelope, sender_id: "hub", receiver_id: agentId, created_at: now, next_retry_at: now + world.timings.welcomeDelayMs });
    }
    return answer(endpointView(agent.endpoint), 201, headers);
  }

  function status(req: HubRequest, agentId: string, registry: Registry): Answer {
    registry.owns(req, agentId, "jwt");
    const endpoint = world.agents.get(agentId)?.endpoint;
    if (!endpoint) throw new HubError(404, "no_endpoint_registered");
    const mine = visible(world).filter((r) => r.receiver_id === agentId);
    const since = Date.now() - 86_400_000;
    const recent = [...new Set(mine.filter((r) => r.last_error && r.created_at >= since).map((r) => r.last_error!))].slice(0, 10);
    const body = {
      ...endpointView(endpoint), last_probe_at: isoOrNull(endpoint.last_probe_at), last_delivery_error: endpoint.last_delivery_error,
      queued_message_count: mine.filter((r) => r.state === "queued").length, failed_message_count: mine.filter((r) => r.state === "failed" && r.created_at >= since).length, recent_errors: recent,
    };
    return answer(body, 200, webhookEra ? undefined : DEPRECATION);
  }

  async function route(req: HubRequest, agentId: string, tail: string[], registry: Registry): Promise<Answer | null> {
    const path = tail.join("/");
    if (path === "endpoints" && req.method === "POST") return register(req, agentId, registry);
    if (path === "endpoints/status" && req.method === "GET") return status(req, agentId, registry);
    if (path === "endpoints/test" && req.method === "POST") {
      registry.owns(req, agentId, "jwt");
      const body = await jsonObject(req);
      const [url, token] = [field(body, "url"), field(body, "webhook_token")];
      validateUrl(url);
      return answer(await probeBoth(url, token), 200, webhookEra ? undefined : DEPRECATION);
    }
    return null;
  }

  /** One push of a record's flat body; the hub's error string, or null on a 2xx. */
  async function push(endpoint: HubEndpoint, record: HubRecord, target: PushTarget): Promise<string | null> {
    const { leaf, body } = webhookBody(record.envelope, displayName(world, record.sender_id), target.roomId, target.topic, target.room);
    const url = forwardUrl(endpoint.url, leaf);
    const result: PostResult = await http.post(url, endpoint.webhook_token, JSON.stringify(body), { fresh: false, timeoutMs: world.timings.pushTimeoutMs, signal: world.closing });
    const err = result.error ?? (result.status >= 200 && result.status < 300 ? null : `HTTP ${result.status}`);
    world.logs.webhooks.push({ path: new URL(url).pathname, status: result.status, error: result.error, body: result.raw, headers: result.headers, hub_msg_id: record.hub_msg_id, at: Date.now() });
    endpoint.last_delivery_error = err;
    return err;
  }

  const deadline = (r: HubRecord) => r.created_at + r.ttl_sec * 1000;
  const backoff = (n: number) => world.timings.retryBackoffMs[Math.min(n, world.timings.retryBackoffMs.length - 1)]!;
  const parkedEndpoint = (agentId: string) => ["unverified", "unreachable"].includes(world.agents.get(agentId)?.endpoint?.state ?? "");

  async function deliverNow(record: HubRecord, target: PushTarget): Promise<void> {
    const endpoint = world.agents.get(record.receiver_id)?.endpoint;
    let err: string | null = "NO_ENDPOINT";
    if (endpoint?.state === "active") err = await push(endpoint, record, target);
    else if (parkedEndpoint(record.receiver_id)) err = "ENDPOINT_UNREACHABLE";
    if (err === null) [record.state, record.delivered_at] = ["delivered", Date.now()];
    else if (err === "ENDPOINT_UNREACHABLE") [record.last_error, record.next_retry_at] = [err, null];
    else {
      const next = Date.now() + backoff(0);
      [record.last_error, record.next_retry_at] = next > deadline(record) ? ["TTL_EXPIRED", null] : [err, next];
    }
  }

  /** TTL over after webhook failures: the endpoint is marked unreachable and its agent told so. */
  function giveUp(record: HubRecord, webhookFailed: boolean): void {
    [record.state, record.next_retry_at, record.last_error] = ["failed", null, "TTL_EXPIRED"];
    const endpoint = world.agents.get(record.receiver_id)?.endpoint;
    if (webhookFailed && endpoint) {
      if (endpoint.state === "active") endpoint.state = "unreachable";
      const payload = { error: { code: "ENDPOINT_UNREACHABLE", message: "Your webhook endpoint is unreachable. Please re-register: POST /registry/agents/{agent_id}/endpoints" } };
      addRecord(world, { envelope: hubMadeEnvelope("hub", record.receiver_id, "error", payload, "hub"), sender_id: "hub", receiver_id: record.receiver_id });
    }
    if (!["ack", "result", "error"].includes(record.envelope.type)) ttlError(world, record);
  }

  /** retry_loop's batch: due queued records, one after another (the room header without 权限). */
  async function retryBatch(): Promise<void> {
    const now = Date.now();
    const due = visible(world).filter((r) => r.state === "queued" && r.next_retry_at !== null && r.next_retry_at <= now).slice(0, 50);
    for (const record of due) {
      if (stopped) return;
      if (now >= deadline(record)) {
        giveUp(record, record.last_error !== null && record.last_error !== "NO_ENDPOINT");
        continue;
      }
      const endpoint = world.agents.get(record.receiver_id)?.endpoint;
      if (endpoint?.state !== "active") {
        if (parkedEndpoint(record.receiver_id)) [record.next_retry_at, record.last_error] = [null, "ENDPOINT_UNREACHABLE"];
        else {
          record.retry_count++;
          record.last_error = "NO_ENDPOINT";
          if (now + backoff(record.retry_count) > deadline(record)) giveUp(record, false);
          else record.next_retry_at = now + backoff(record.retry_count);
        }
        continue;
      }
      const room = record.room_id ? world.rooms.get(record.room_id) : undefined;
      const err = await push(endpoint, record, { roomId: record.room_id, topic: record.topic, room: room ? roomContext(world, room, null) : null });
      if (err === null) [record.state, record.delivered_at, record.next_retry_at] = ["delivered", now, null];
      else {
        record.retry_count++;
        record.last_error = err;
        if (now + backoff(record.retry_count) > deadline(record)) giveUp(record, true);
        else record.next_retry_at = now + backoff(record.retry_count);
      }
    }
  }

  const loop = () => {
    if (stopped) return;
    void retryBatch().finally(() => world.later(world.timings.retryPollMs, loop));
  };
  if (webhookEra) world.later(world.timings.retryPollMs, loop);

  return {
    deliverNow,
    route,
    close: () => {
      stopped = true;
      http.close();
    },
  };
}
