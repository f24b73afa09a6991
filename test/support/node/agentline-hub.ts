// A stand-in Agentline hub for end-to-end tests: a real node:http server on an ephemeral loopback port.
// The registry (keys, challenges, tokens, policy) lives in agentline-hub-registry.ts, the signature and
// webhook-body rules in agentline-hub-wire.ts (node:crypto, never protocol/); this file keeps the
// records, endpoints and both delivery eras: flat 2.x webhooks with retries, or pull only (/hub/inbox;
// the endpoint routes are gone). Tests share an instance, so all is keyed by agent id, and every record,
// probe, webhook, receipt and request is kept for inspection. Covered by test/node/agentline-hub.test.ts.
import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage } from "node:http";
import { createRegistry, field, hex, HubError, iso, readJson } from "./agentline-hub-registry.ts";
import type { Answer, HubAgent, MessagePolicy } from "./agentline-hub-registry.ts";
import { envelopeFault, flatText, hubEnvelope, parseEnvelope, probeHint, publicKeyText, signBytes, signEnvelope, webhookFor } from "./agentline-hub-wire.ts";
import type { Envelope } from "./agentline-hub-wire.ts";

export type { HubAgent, HubEndpoint, HubKey, MessagePolicy } from "./agentline-hub-registry.ts";
export type DeliveryMode = "webhook" | "pull";
export type RecordState = "queued" | "processing" | "delivered" | "acked" | "done" | "failed";
export interface HubRecord {
  hub_msg_id: string; msg_id: string; sender_id: string; receiver_id: string; envelope: Envelope;
  state: RecordState; created_at: number; acked_at: number | null; lease_until: number | null;
}
export interface HubReply { status: number; body: unknown }
export interface HubTestAgent {
  agentId: string; keyId: string; seed: Uint8Array; publicKey: string; token: string;
  /** Signs an a2a/0.1 message {text} with node:crypto and posts it to /hub/send with this agent's token. */
  send(toAgentId: string, text: string): Promise<HubReply>;
}
export interface AgentlineHubOptions { prefix?: "agentgram" | "botcord"; delivery?: DeliveryMode; tokenTtlSec?: number; retryDelaysMs?: number[] }
export interface AgentlineHub {
  url: string;
  agents: Map<string, HubAgent>;
  records: HubRecord[];
  receipts: { status: number; body: unknown; detail: string }[];
  probes: { path: string; status: number }[];
  webhooks: { path: string; status: number; body: string; at: number }[];
  requests: { method: string; path: string; status: number }[];
  /** Registers and verifies an agent through the hub's own HTTP API (a random seed unless one is given). */
  createAgent(displayName: string, seed?: Uint8Array): Promise<HubTestAgent>;
  setPolicy(agentId: string, policy: MessagePolicy): void;
  addContact(a: string, b: string): void;
  setDelivery(mode: DeliveryMode): void;
  close(): Promise<void>;
}

const DEFAULT_RETRY_DELAYS_MS = [1000, 2000, 4000, 8000];
const LEASE_MS = 120_000;
const HTTP_TIMEOUT_MS = 10_000;
const WELCOME_DELAY_MS = 50; // the real hub pushes it ~0.6 s after registering: after the 201, not before
const RECEIPT_STATE: Record<string, RecordState> = { ack: "acked", result: "done", error: "failed" };
const RANK: Record<RecordState, number> = { queued: 0, processing: 1, delivered: 2, acked: 3, done: 4, failed: 4 };
const NOT_FOUND: Answer = [404, { detail: "Not Found" }]; // an unknown route, as the framework says it

interface ProbeResult { path: string; status: number; ok: boolean; hint: string }
const ok = (status: number) => status >= 200 && status < 300;
const inboxUrl = (base: string, prefix: string, leaf: string) => `${base.replace(/\/+$/, "")}/${prefix}_inbox/${leaf}`;

function intParam(url: URL, name: string, fallback: number, min: number, max: number): number {
  const raw = url.searchParams.get(name);
  const value = raw === null ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new HubError(422, `${name} must be an integer in ${min}..${max}`);
  return value;
}

export async function startAgentlineHub(options: AgentlineHubOptions = {}): Promise<AgentlineHub> {
  const prefix = options.prefix ?? "agentgram";
  const tokenTtlSec = options.tokenTtlSec ?? 86_400;
  const retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  let delivery: DeliveryMode = options.delivery ?? "webhook";
  let closed = false;
  let seq = 0;
  const registry = createRegistry(tokenTtlSec);
  const { agents, agentOr404, authed } = registry;
  const records: HubRecord[] = [];
  const receipts: AgentlineHub["receipts"] = [];
  const probes: AgentlineHub["probes"] = [];
  const webhooks: AgentlineHub["webhooks"] = [];
  const requests: AgentlineHub["requests"] = [];
  const receiptsSeen = new Set<string>(); // `${from}\n${msg_id}`
  const firstAnswers = new Map<string, unknown>(); // `${receiver}\n${msg_id}` → the first 202 body
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<{ agent_id: string; wake(): void }>();
  const pushing = new Set<string>(); // hub_msg_ids with an attempt running or a retry scheduled
  const chains = new Map<string, Promise<void>>(); // receiver → its first attempts, in order
  const closing = new AbortController();

  function later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    timers.add(timer);
  }

  async function post(url: string, token: string, body: string): Promise<number> {
    try {
      const res = await fetch(url, {
        method: "POST", body, redirect: "manual", // a 3xx is a failure, not a detour
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        signal: AbortSignal.any([closing.signal, AbortSignal.timeout(HTTP_TIMEOUT_MS)]),
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0; // refused, reset or timed out: no status at all
    }
  }

  async function probeBoth(body: Record<string, unknown>): Promise<{ url: string; webhook_token: string; results: ProbeResult[] }> {
    const [url, webhook_token] = [field(body, "url"), field(body, "webhook_token")];
    if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url)) throw new HubError(422, "url must be an http(s) URL");
    const results = await Promise.all(["agent", "wake"].map(async (leaf) => {
      const target = inboxUrl(url, prefix, leaf);
      const status = await post(target, webhook_token, JSON.stringify({ probe: true }));
      const path = new URL(target).pathname;
      probes.push({ path, status });
      return { path, status, ok: ok(status), hint: probeHint(status, path) };
    }));
    return { url, webhook_token, results };
  }

  async function registerEndpoint(req: IncomingMessage, agent_id: string, body: Record<string, unknown>): Promise<Answer> {
    const agent = authed(req, agent_id);
    const { url, webhook_token, results } = await probeBoth(body);
    const state = results.every((r) => r.ok) ? "active" : "unverified";
    const fresh = agent.endpoint === null;
    const endpoint_id = agent.endpoint?.endpoint_id ?? `ep_${hex(6)}`;
    agent.endpoint = { endpoint_id, url, webhook_token, state, registered_at: Date.now(), recent_errors: [] };
    if (fresh && state === "active") enqueue(hubEnvelope(agent_id, `[Hub] Welcome! ${agent.display_name} (${agent_id}) will receive messages at this endpoint.`));
    if (state === "active") later(WELCOME_DELAY_MS, () => drain(agent_id));
    return [fresh ? 201 : 200, { endpoint_id, url, state, webhook_token_set: true, registered_at: iso(agent.endpoint.registered_at) }];
  }

  function endpointStatus(req: IncomingMessage, agent_id: string): Answer {
    const endpoint = authed(req, agent_id).endpoint;
    if (!endpoint) throw new HubError(404, "No endpoint registered");
    const count = (state: RecordState) => records.filter((r) => r.receiver_id === agent_id && r.state === state).length;
    const { endpoint_id, url, state, recent_errors } = endpoint;
    return [200, { endpoint_id, url, state, queued_message_count: count("queued"), failed_message_count: count("failed"), recent_errors }];
  }

  function enqueue(envelope: Envelope): HubRecord {
    const record: HubRecord = {
      hub_msg_id: `h_${(++seq).toString(16).padStart(16, "0")}`, // fixed width: string order is creation order
      msg_id: envelope.msg_id, sender_id: envelope.from, receiver_id: envelope.to, envelope,
      state: "queued", created_at: Date.now(), acked_at: null, lease_until: null,
    };
    records.push(record);
    for (const waiter of [...waiters]) if (waiter.agent_id === record.receiver_id) waiter.wake();
    return record;
  }

  const nameOf = (agent_id: string) => (agent_id === "hub" ? "Hub" : (agents.get(agent_id)?.display_name ?? agent_id));

  function push(record: HubRecord): void {
    if (pushing.has(record.hub_msg_id)) return;
    pushing.add(record.hub_msg_id);
    chains.set(record.receiver_id, (chains.get(record.receiver_id) ?? Promise.resolve()).then(() => attempt(record, 0)));
  }

  function drain(agent_id: string): void {
    for (const record of records) if (record.receiver_id === agent_id && record.state === "queued") push(record);
  }

  async function attempt(record: HubRecord, tries: number): Promise<void> {
    const endpoint = agents.get(record.receiver_id)?.endpoint;
    if (closed || delivery !== "webhook" || endpoint?.state !== "active" || record.state !== "queued") {
      pushing.delete(record.hub_msg_id); // pulled meanwhile, or nowhere to push to: it waits in the queue
      return;
    }
    const { leaf, body } = webhookFor(record.envelope, nameOf(record.sender_id));
    const target = inboxUrl(endpoint.url, prefix, leaf);
    const sent = JSON.stringify(body);
    const status = await post(target, endpoint.webhook_token, sent);
    if (closed) return;
    webhooks.push({ path: new URL(target).pathname, status, body: sent, at: Date.now() });
    if (ok(status)) {
      if (record.state === "queued") record.state = "delivered";
      pushing.delete(record.hub_msg_id);
      return;
    }
    endpoint.recent_errors = [...endpoint.recent_errors, `${record.hub_msg_id}: ${status === 0 ? "no answer" : `HTTP ${status}`} from ${target}`].slice(-10);
    const delay = retryDelaysMs[tries];
    if (delay !== undefined) return later(delay, () => void attempt(record, tries + 1));
    record.state = "failed";
    endpoint.state = "unreachable"; // and it stops pushing until the endpoint is registered again
    pushing.delete(record.hub_msg_id);
  }

  function checked(body: Record<string, unknown>): Envelope {
    const envelope = parseEnvelope(body);
    if (typeof envelope === "string") throw new HubError(422, envelope);
    const fault = envelopeFault(envelope, registry.keyOf, Math.floor(Date.now() / 1000));
    if (fault !== null) throw new HubError(400, fault);
    return envelope;
  }

  function send(req: IncomingMessage, body: Record<string, unknown>): Answer {
    const sender = authed(req);
    const envelope = checked(body);
    if (envelope.from !== sender.agent_id) throw new HubError(403, "Envelope from does not match the token's agent");
    const receiver = agents.get(envelope.to);
    if (!receiver) throw new HubError(404, "UNKNOWN_AGENT");
    const dedup = `${envelope.to}\n${envelope.msg_id}`;
    if (firstAnswers.has(dedup)) return [202, firstAnswers.get(dedup)];
    const stranger = receiver.message_policy === "contacts_only" && !receiver.contacts.has(sender.agent_id);
    if (stranger && envelope.type !== "contact_request") throw new HubError(403, "NOT_IN_CONTACTS");
    const record = enqueue(envelope);
    const answer = { queued: true, hub_msg_id: record.hub_msg_id, status: "queued" };
    firstAnswers.set(dedup, answer);
    push(record);
    return [202, answer];
  }

  function receipt(body: Record<string, unknown>): Answer {
    const envelope = checked(body);
    const state = RECEIPT_STATE[envelope.type];
    if (state === undefined) throw new HubError(400, "Receipt type must be ack, result or error");
    if (envelope.reply_to === null) throw new HubError(400, "reply_to is required for a receipt");
    const record = records.find((r) => r.msg_id === envelope.reply_to && r.receiver_id === envelope.from);
    if (!record) throw new HubError(404, "Original message not found");
    if (receiptsSeen.has(`${envelope.from}\n${envelope.msg_id}`)) return [200, { received: true }]; // a repeat is a no-op
    receiptsSeen.add(`${envelope.from}\n${envelope.msg_id}`);
    if (RANK[state] > RANK[record.state]) {
      record.state = state;
      record.lease_until = null;
      if (state === "acked") record.acked_at = Date.now();
    }
    return [200, { received: true }];
  }

  function pullable(agent_id: string): HubRecord[] {
    const now = Date.now();
    return records.filter((r) => r.receiver_id === agent_id && (r.state === "queued" || (r.state === "processing" && (r.lease_until ?? 0) <= now)));
  }

  function waitForMail(agent_id: string, ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiter = {
        agent_id,
        wake: () => {
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, ms);
      timer.unref();
      waiters.add(waiter);
    });
  }

  async function inbox(req: IncomingMessage, url: URL): Promise<Answer> {
    const me = authed(req).agent_id;
    const [limit, timeout] = [intParam(url, "limit", 10, 1, 50), intParam(url, "timeout", 0, 0, 30)];
    const ack = url.searchParams.get("ack") !== "false";
    if (pullable(me).length === 0 && timeout > 0) await waitForMail(me, timeout * 1000);
    const ready = pullable(me);
    const batch = ready.slice(0, limit);
    for (const r of batch) {
      r.state = ack ? "delivered" : "processing";
      r.lease_until = ack ? null : Date.now() + LEASE_MS; // other polls skip it until then
    }
    const messages = batch.map((r) => ({
      hub_msg_id: r.hub_msg_id, envelope: r.envelope, text: flatText(r.envelope, nameOf(r.sender_id)), room_id: null, room_name: null,
      room_member_count: null, room_member_names: null, topic: null, goal: null, delivery_note: null,
    }));
    return [200, { messages, count: messages.length, has_more: ready.length > limit }];
  }

  function inboxAck(req: IncomingMessage, body: Record<string, unknown>): Answer {
    const me = authed(req).agent_id;
    const ids = body.message_ids;
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) throw new HubError(422, "message_ids must be an array of strings");
    const acking = records.filter((r) => r.receiver_id === me && ids.includes(r.hub_msg_id) && (r.state === "queued" || r.state === "processing"));
    for (const r of acking) {
      r.state = "delivered";
      r.lease_until = null;
    }
    return [200, { acked: acking.length }];
  }

  function history(req: IncomingMessage, url: URL): Answer {
    const me = authed(req).agent_id;
    const after = url.searchParams.get("after");
    const limit = intParam(url, "limit", 20, 1, 100);
    const mine = records.filter((r) => (r.sender_id === me || r.receiver_id === me) && r.state !== "failed" && (after === null || r.hub_msg_id > after));
    const messages = mine.slice(0, limit).map((r) => ({
      hub_msg_id: r.hub_msg_id, envelope: r.envelope, room_id: null, topic: null, topic_id: null, goal: null, state: r.state, created_at: iso(r.created_at),
    }));
    return [200, { messages, count: messages.length, has_more: mine.length > limit }];
  }

  async function route(req: IncomingMessage, url: URL, keep: (body: unknown) => void): Promise<Answer> {
    const json = () => readJson(req, keep);
    const m = req.method ?? "GET";
    const [root, agentsPart, id = "", ...tail] = url.pathname.split("/").filter(Boolean);
    const rest = tail.join("/");
    if (root === "registry" && agentsPart === "agents") {
      const answer = await registry.route(m, id, tail, req, json);
      if (answer !== null) return answer;
      if (tail[0] === "endpoints" && delivery === "pull") return NOT_FOUND; // the later hub has no webhooks at all
      if (m === "POST" && rest === "endpoints") return registerEndpoint(req, id, await json());
      if (m === "POST" && rest === "endpoints/test") {
        authed(req, id);
        const { results } = await probeBoth(await json());
        return [200, { all_ok: results.every((r) => r.ok), results }];
      }
      if (m === "GET" && rest === "endpoints/status") return endpointStatus(req, id);
    }
    const where = `${m} ${url.pathname}`;
    if (where === "POST /hub/send") return send(req, await json());
    if (where === "POST /hub/receipt") return receipt(await json());
    if (where === "GET /hub/inbox") return inbox(req, url);
    if (where === "POST /hub/inbox/ack") return inboxAck(req, await json());
    if (where === "GET /hub/history") return history(req, url);
    return NOT_FOUND;
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://hub");
    res.on("finish", () => requests.push({ method: req.method ?? "", path: url.pathname + url.search, status: res.statusCode }));
    let body: unknown = null;
    void route(req, url, (value) => (body = value))
      .catch((err: unknown): Answer => {
        const status = err instanceof HubError ? err.status : 500;
        return [status, { detail: err instanceof Error ? err.message : String(err), retryable: status >= 500 }];
      })
      .then(([status, answer]) => {
        if (req.method === "POST" && url.pathname === "/hub/receipt") {
          const detail = (answer as { detail?: unknown }).detail;
          receipts.push({ status, body, detail: typeof detail === "string" ? detail : "received" });
        }
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(answer));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("stand-in Agentline hub did not get a TCP port");
  const url = `http://127.0.0.1:${address.port}`;

  async function call(path: string, body: unknown, token?: string): Promise<HubReply> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const res = await fetch(url + path, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  }

  async function createAgent(displayName: string, seed: Uint8Array = randomBytes(32)): Promise<HubTestAgent> {
    const publicKey = publicKeyText(seed);
    const registered = await call("/registry/agents", { pubkey: publicKey, display_name: displayName });
    if (registered.status !== 201) throw new Error(`stand-in hub refused to register ${displayName}: ${JSON.stringify(registered)}`);
    const { agent_id, key_id, challenge } = registered.body as { agent_id: string; key_id: string; challenge: string };
    const sig = signBytes(seed, Buffer.from(challenge, "base64"));
    const verified = await call(`/registry/agents/${agent_id}/verify`, { key_id, challenge, sig });
    if (verified.status !== 200) throw new Error(`stand-in hub refused to verify ${displayName}: ${JSON.stringify(verified)}`);
    const token = (verified.body as { agent_token: string }).agent_token;
    const send = (to: string, text: string) => {
      const ts = Math.floor(Date.now() / 1000);
      const fields = { v: "a2a/0.1", msg_id: randomUUID(), ts, from: agent_id, to, type: "message", reply_to: null, ttl_sec: 3600, payload: { text } };
      return call("/hub/send", signEnvelope(seed, key_id, fields), token);
    };
    return { agentId: agent_id, keyId: key_id, seed, publicKey, token, send };
  }

  return {
    url, agents, records, receipts, probes, webhooks, requests, createAgent,
    setPolicy: (agentId, policy) => {
      agentOr404(agentId).message_policy = policy;
    },
    addContact: (a, b) => {
      agentOr404(a).contacts.add(b);
      agentOr404(b).contacts.add(a);
    },
    setDelivery: (mode) => {
      delivery = mode;
      if (mode === "webhook") for (const agent_id of agents.keys()) drain(agent_id);
    },
    close: async () => {
      if (closed) return;
      closed = true;
      closing.abort();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const waiter of [...waiters]) waiter.wake();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setImmediate(() => server.closeAllConnections()); // long polls were just answered; nothing else is owed
      });
    },
  };
}
