// A stand-in for the BotCord/Agentline hub, as the real hub's code answers (test/fixtures/hub/ hold the
// recordings it is held to): a real node:http server on an ephemeral loopback port, in one of two
// generations — "webhook-era" (9d900985: anonymous registration, endpoint probes, flat webhooks pushed
// inside /hub/send before the records commit, retries) or "current" (ed35a77a: owner install flow, one
// current token per agent, the leased pull inbox, /hub/ws, no push). Tests can share an instance
// (everything is keyed by agent id) and read every record, probe, webhook, receipt, request and ws frame.
// Its modules: -world (state), -wire (crypto, envelopes), -text (flat text), -errors, -registry,
// -install, -rooms, -records (history, status, inbox), -send, -push (+ -http), -ws, -client (what
// tests do as agents). Covered by test/node/agentline-hub.test.ts; used by test/node/hub-link.e2e.test.ts.
import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { HubError, METHOD_NOT_ALLOWED, NOT_FOUND, invalidBody, renderError } from "./agentline-hub-errors.ts";
import { hubCall, installAgent, refreshToken, registerAgent } from "./agentline-hub-client.ts";
import type { HubTestAgent } from "./agentline-hub-client.ts";
import { createInstaller } from "./agentline-hub-install.ts";
import { createPusher } from "./agentline-hub-push.ts";
import { addRecord, expiryTick, history, inbox, inboxAck, leaseRenew, status } from "./agentline-hub-records.ts";
import { createRegistry } from "./agentline-hub-registry.ts";
import { addMember, createRoom, dashboardRoom, dmRoomId } from "./agentline-hub-rooms.ts";
import { createSender } from "./agentline-hub-send.ts";
import { DEFAULT_TIMINGS, agentOr404, hex } from "./agentline-hub-world.ts";
import type { Answer, ContactRequest, Generation, HubAgent, HubLogs, HubPrefix, HubRecord, HubRequest, HubRoom, HubTimings, HubUser, HubWorld, MessagePolicy } from "./agentline-hub-world.ts";
import { createSockets } from "./agentline-hub-ws.ts";

export type { HubReply, HubTestAgent, SendOptions } from "./agentline-hub-client.ts";
export type { Generation, HubAgent, HubEndpoint, HubKey, HubPrefix, HubRecord, HubRoom, HubTimings, HubUser, MessagePolicy, RecordState } from "./agentline-hub-world.ts";

export interface AgentlineHubOptions {
  generation: Generation;
  /** The sub-path prefix of probes and pushes: the real code's "botcord", or Agentline's "agentgram". */
  prefix?: HubPrefix;
  /** Loopback and private endpoint URLs (the webhook-era recordings allowed them; today's default refuses). */
  allowPrivateEndpoints?: boolean;
  timings?: Partial<HubTimings>;
  tokenTtlSec?: number;
  /** Sends per agent per sliding minute (20), and per agent and target (10). */
  rateLimitPerMinute?: number;
  pairRateLimitPerMinute?: number;
}

export interface AgentlineHub extends HubLogs {
  url: string;
  generation: Generation;
  prefix: HubPrefix;
  timings: HubTimings;
  agents: Map<string, HubAgent>;
  rooms: Map<string, HubRoom>;
  /** Every record, committed or not (`committed` says whether the hub's own reads see it yet). */
  records: HubRecord[];
  contactRequests: ContactRequest[];
  approvals: HubWorld["approvals"];
  /** Webhook era: registers and verifies; today: an owner (its own, unless given) installs it. */
  createAgent(displayName: string, options?: { seed?: Uint8Array; bio?: string; owner?: HubUser; open?: boolean }): Promise<HubTestAgent>;
  /** A dashboard user; its `token` is the owner bearer the install routes take. */
  newOwner(name: string): HubUser;
  /** Refreshes as another client of the agent would; `agent.token` is left as it was. */
  refreshToken(agent: HubTestAgent): Promise<string>;
  /**
   * Moves the clock the hub mints tokens by `sec` on: a token is a JWT of the agent and its expiry
   * second (fact 19), so a mint after this differs from one before it, without waiting for the next second.
   */
  advanceClock(sec: number): void;
  /** Long polls (GET /hub/inbox with a timeout) waiting for mail now. */
  waitingPulls(): number;
  /** POST /hub/rooms as `owner`: the new room's id. */
  createRoom(owner: HubTestAgent, name: string, memberIds: string[]): Promise<string>;
  /** Today: the agent's owner writes in the dashboard's owner chat (rm_oc_…); the record it makes. */
  injectOwnerChat(agentId: string, text: string): HubRecord;
  /** Today: a dashboard human (hu_…) writes to the agent in their DM room; the record it makes. */
  injectHumanDm(agentId: string, text: string, humanName?: string): HubRecord;
  setPolicy(agentId: string, policy: MessagePolicy): void;
  addContact(a: string, b: string): void;
  close(): Promise<void>;
}

/** Paths the hub serves: any method not answered above is FastAPI's 405 there, elsewhere its 404. */
const KNOWN_PATHS = [
  /^\/registry\/agents$/, /^\/registry\/agents\/[^/]+\/(verify|keys|token\/refresh|policy|endpoints|endpoints\/test|endpoints\/status)$/, /^\/registry\/agents\/[^/]+\/(keys|contacts)\/[^/]+$/,
  /^\/hub\/(send|receipt|inbox|history|rooms|status\/[^/]+)$/,
];

export async function startAgentlineHub(options: AgentlineHubOptions): Promise<AgentlineHub> {
  const generation = options.generation;
  const timers = new Set<NodeJS.Timeout>();
  const closing = new AbortController();
  let seq = 0;
  const world: HubWorld = {
    generation, prefix: options.prefix ?? "botcord", timings: { ...DEFAULT_TIMINGS[generation], ...options.timings },
    allowPrivateEndpoints: options.allowPrivateEndpoints ?? generation === "webhook-era", tokenTtlSec: options.tokenTtlSec ?? 86_400,
    rateLimitPerMinute: options.rateLimitPerMinute ?? 20, pairRateLimitPerMinute: options.pairRateLimitPerMinute ?? 10, secret: randomBytes(32).toString("hex"), url: "", clockAheadSec: 0,
    agents: new Map(), rooms: new Map(), records: [], users: new Map(), topics: new Map(), contactRequests: [], approvals: [],
    logs: { receipts: [], probes: [], webhooks: [], requests: [], wsFrames: [] },
    listeners: new Set(),
    notify: (agentId) => {
      for (const listener of [...world.listeners]) listener(agentId);
      sockets.inboxUpdate(agentId);
    },
    later: (ms, run) => {
      if (closing.signal.aborted) return;
      const timer = setTimeout(() => (timers.delete(timer), run()), ms);
      timer.unref();
      timers.add(timer);
    },
    closing: closing.signal,
    nextSeq: () => ++seq,
  };
  const registry = createRegistry(world);
  const pusher = createPusher(world);
  const sender = createSender(world, registry, pusher);
  const installer = createInstaller(world, registry);
  const sockets = createSockets(world, registry);
  registry.notice = (from, to, type, payload) => sender.notice(from, to, type, payload);
  const today = generation === "current";
  const expiry = () => {
    expiryTick(world);
    world.later(world.timings.expiryLoopMs, expiry);
  };
  if (today) world.later(world.timings.expiryLoopMs, expiry);

  async function route(req: HubRequest): Promise<Answer> {
    const path = req.url.pathname;
    const where = `${req.method} ${path}`;
    const parts = path.split("/").filter(Boolean);
    if (parts[0] === "registry" && parts[1] === "agents") {
      const [id = "", ...tail] = parts.slice(2);
      const answered = (await registry.route(req, id, tail)) ?? (id !== "" ? await pusher.route(req, id, tail, registry) : null);
      if (answered) return answered;
    }
    if (where === "POST /hub/send") return sender.send(req);
    if (where === "POST /hub/receipt") return sender.receipt(req);
    if (req.method === "GET" && parts[0] === "hub" && parts[1] === "status" && parts.length === 3) return status(world, registry.authenticate(req, "db"), parts[2]!);
    if (where === "GET /hub/inbox") return inbox(world, registry.authenticate(req, "db"), req.url);
    if (where === "GET /hub/history") return history(world, registry.authenticate(req, "db"), req.url);
    if (today && where === "POST /hub/inbox/ack") return inboxAck(world, registry.authenticate(req, "db"), req);
    if (today && where === "POST /hub/inbox/lease/renew") return leaseRenew(world, registry.authenticate(req, "db"), req);
    if (where === "POST /hub/rooms") return createRoom(world, registry.authenticate(req, "db"), req);
    if (req.method === "POST" && parts[0] === "hub" && parts[1] === "rooms" && parts[3] === "members" && parts.length === 4) return addMember(world, registry.authenticate(req, "db"), parts[2]!, req);
    const installed = today ? await installer.route(req) : null;
    if (installed) return installed;
    const leases = today && /^\/hub\/inbox\/(ack|lease\/renew)$/.test(path);
    if (leases || KNOWN_PATHS.some((pattern) => pattern.test(path))) throw METHOD_NOT_ALLOWED();
    throw NOT_FOUND();
  }

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://hub");
    const raw = await readBody(req);
    let parsed: unknown = raw;
    const hubReq: HubRequest = {
      method: req.method ?? "GET", url, headers: req.headers,
      json: async () => {
        try {
          return (parsed = JSON.parse(raw));
        } catch {
          throw invalidBody([{ type: "json_invalid", loc: ["body", 0], msg: "JSON decode error", input: {} }]);
        }
      },
    };
    let result: { status: number; body: unknown; headers: Record<string, string> };
    try {
      const ok = await route(hubReq);
      result = { status: ok.status, body: ok.body, headers: ok.headers ?? {} };
    } catch (err) {
      result = err instanceof HubError ? renderError(err, generation, req.headers["accept-language"]) : { status: 500, body: { detail: `stand-in hub bug: ${String(err)}` }, headers: {} };
    }
    if (hubReq.method === "POST" && url.pathname === "/hub/receipt") {
      const detail = (result.body as { detail?: unknown }).detail;
      world.logs.receipts.push({ status: result.status, body: parsed, detail: typeof detail === "string" ? detail : "received" });
    }
    world.logs.requests.push({ method: hubReq.method, path: url.pathname + url.search, status: result.status, at: Date.now() });
    if (result.status === 204) res.writeHead(204, result.headers).end();
    else res.writeHead(result.status, { ...result.headers, "content-type": "application/json" }).end(JSON.stringify(result.body));
  }

  const server = createServer((req, res) => void handle(req, res));
  server.on("upgrade", (req, socket, head) => {
    if (new URL(req.url ?? "/", "http://hub").pathname === "/hub/ws") sockets.upgrade(req, socket, head);
    else socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the stand-in hub did not get a TCP port");
  world.url = `http://127.0.0.1:${address.port}`;

  async function createAgent(displayName: string, opts: { seed?: Uint8Array; bio?: string; owner?: HubUser; open?: boolean } = {}): Promise<HubTestAgent> {
    const seed = opts.seed ?? randomBytes(32);
    const agent = today ? await installAgent(world.url, displayName, seed, opts.bio ?? null, opts.owner ?? installer.newOwner(`${displayName}Owner`)) : await registerAgent(world.url, displayName, seed, opts.bio ?? null);
    if (opts.open) {
      const reply = await hubCall(world.url, "PATCH", `/registry/agents/${agent.agentId}/policy`, { body: { message_policy: "open" }, token: agent.token });
      if (reply.status !== 200) throw new Error(`stand-in hub refused to open ${displayName}'s policy: ${reply.status}`);
    }
    return agent;
  }

  function ownerOfAgent(agentId: string): HubUser {
    const owner = world.users.get(agentOr404(world, agentId).owner ?? "");
    if (!owner) throw new Error(`${agentId} has no owner at the stand-in hub (a webhook-era agent?)`);
    return owner;
  }

  /** A dashboard user's message, unsigned: the hub's own session vouches for it (fact 25). */
  function dashboardRecord(agentId: string, roomId: string, from: string, to: string, text: string, user: HubUser, kind: "owner" | "human"): HubRecord {
    const owner = kind === "owner";
    const envelope = { v: "a2a/0.1", msg_id: randomUUID(), ts: Math.floor(Date.now() / 1000), from, to, type: "message", reply_to: null, ttl_sec: 3600, payload: { text }, payload_hash: "", sig: { alg: "ed25519", key_id: owner ? "dashboard" : "dashboard-human", value: "" } };
    const record = addRecord(world, {
      envelope, sender_id: from, receiver_id: agentId, room_id: roomId, mentioned: owner, source_type: owner ? "dashboard_user_chat" : "dashboard_human_room",
      source_session_kind: owner ? "owner_chat" : "room_human", source_user_id: user.id, source_user_name: user.display_name,
    });
    world.notify(agentId);
    return record;
  }

  const humans = new Map<string, HubUser>();

  return {
    get url() {
      return world.url;
    },
    generation, prefix: world.prefix, timings: world.timings, agents: world.agents, rooms: world.rooms, records: world.records,
    contactRequests: world.contactRequests, approvals: world.approvals, ...world.logs,
    createAgent,
    newOwner: (name) => installer.newOwner(name),
    refreshToken: (agent) => refreshToken(world.url, agent.agentId, agent.keyId, agent.seed),
    advanceClock: (sec) => void (world.clockAheadSec += sec),
    waitingPulls: () => world.listeners.size,
    createRoom: async (owner, name, memberIds) => {
      const reply = await hubCall(world.url, "POST", "/hub/rooms", { body: { name, member_ids: memberIds }, token: owner.token });
      if (reply.status !== 201) throw new Error(`stand-in hub refused the room ${name}: ${reply.status} ${JSON.stringify(reply.body)}`);
      return String((reply.body as { room_id: string }).room_id);
    },
    injectOwnerChat: (agentId, text) => {
      const owner = ownerOfAgent(agentId);
      const mine = (r: HubRoom) => r.room_id.startsWith("rm_oc_") && r.members.some((m) => m.agent_id === agentId) && r.members.some((m) => m.agent_id === owner.human_id);
      const room = [...world.rooms.values()].find(mine) ?? dashboardRoom(world, `rm_oc_${hex(8)}`, agentOr404(world, agentId).display_name, [[agentId, "owner"], [owner.human_id, "member"]]);
      return dashboardRecord(agentId, room.room_id, agentId, agentId, text, owner, "owner");
    },
    injectHumanDm: (agentId, text, humanName = "Hana") => {
      const human = humans.get(humanName) ?? installer.newOwner(humanName);
      humans.set(humanName, human);
      const room = dashboardRoom(world, dmRoomId(agentId, human.human_id), `DM ${[agentId, human.human_id].sort().join(" & ")}`, [[human.human_id, "member"], [agentId, "member"]]);
      return dashboardRecord(agentId, room.room_id, human.human_id, room.room_id, text, human, "human");
    },
    setPolicy: (agentId, policy) => void (agentOr404(world, agentId).message_policy = policy),
    addContact: (a, b) => {
      agentOr404(world, a).contacts.add(b);
      agentOr404(world, b).contacts.add(a);
    },
    close: async () => {
      if (closing.signal.aborted) return;
      closing.abort();
      for (const timer of timers) clearTimeout(timer);
      pusher.close();
      sockets.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
