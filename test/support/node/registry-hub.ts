// A small hub for the hub commands' tests (test/node/hub-link.test.ts, hub-bind.test.ts): a real
// node:http server (and /hub/ws on the same port) on an ephemeral loopback port, playing the registry
// of either generation of the public hub code — open registration with a challenge, or bind codes and
// /openclaw/install-claim — with ONE current token per agent (a refresh ends every older one, as on
// today's hub; a token is an HS256 JWT of the agent id and its expiry second, as the hub's
// create_agent_token makes it, so two mints in the same second give the same token, and a test moves
// the hub's clock on rather than waiting for the next second), a second key with a hub-assigned id,
// endpoints that push, are gone (404) or are deprecated (probed, 201, Deprecation/Warning 299), the
// message policy, /hub/history, an empty /hub/inbox for the relay's pulls and the /hub/ws frames. Every
// signature is checked with node:crypto, never protocol/.
import { createHash, createHmac, createPublicKey, randomBytes, verify } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";
import { signingInput } from "../../../protocol/index.ts";
import type { Envelope } from "../../../protocol/index.ts";
import { newIdentity } from "../../../local-agent/identity.ts";

export interface FakeKey {
  key_id: string;
  pubkey: string;
  state: "pending" | "active" | "revoked";
  challenge?: string;
}

export interface FakeAgent {
  agent_id: string;
  display_name: string;
  keys: Map<string, FakeKey>;
  policy: string;
  endpoint?: { endpoint_id: string; url: string; webhook_token: string; state: string };
}

export interface HistoryEntry {
  hub_msg_id: string;
  envelope: Record<string, unknown>;
  room_id: string | null;
  state: string;
  created_at: string;
}

export interface RegistryHubOptions {
  /** push: webhook delivery (the Agentline service, the webhook era); gone: no endpoint routes (404); deprecated: today's hub. */
  webhooks?: "push" | "gone" | "deprecated";
  prefix?: string;
  /** open: POST /registry/agents (the webhook era); closed: only bind codes (today's hub, 405). */
  registration?: "open" | "closed";
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");
export const agentIdOf = (pubkey: string) => "ag_" + createHash("sha256").update(pubkey.slice("ed25519:".length)).digest("hex").slice(0, 12);
const DEPRECATED = { deprecation: "true", warning: '299 BotCord "Webhook endpoint delivery is deprecated; use /hub/ws + /hub/inbox"' };

export function signedBy(pubkey: string, message: Buffer, sig: unknown): boolean {
  const x = Buffer.from(pubkey.slice("ed25519:".length), "base64");
  if (x.length !== 32 || typeof sig !== "string") return false;
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: b64url(x) }, format: "jwk" });
  return verify(null, message, key, Buffer.from(sig, "base64"));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

export async function startRegistryHub(options: RegistryHubOptions = {}) {
  const prefix = options.prefix ?? "agentgram";
  const webhooks = options.webhooks ?? "push";
  const agents = new Map<string, FakeAgent>();
  const current = new Map<string, { token: string; exp: number }>(); // agent id -> its one valid token
  const issued = new Set<string>();
  const nonces = new Set<string>();
  const calls: string[] = [];
  const refreshes: { agent_id: string; key_id: string }[] = [];
  const receipts: { status: number; envelope: Envelope }[] = [];
  const bindCodes = new Map<string, { nonce: string; name: string }>();
  const claims: { body: Record<string, unknown>; status: number }[] = [];
  const history: HistoryEntry[] = [];
  const sockets = new Set<WebSocket>();
  const wsAuths: { token: string; ok: boolean }[] = [];
  let claimAnswerId: string | null = null;

  // The hub's clock: real time moved on by advanceClock(), so a test can say "later" without waiting.
  let clockOffsetMs = 0;
  const nowSec = () => Math.floor((Date.now() + clockOffsetMs) / 1000);
  const jwtSecret = randomBytes(32);
  /**
   * A token for the agent, now its only valid one. As the hub's create_agent_token: a JWT of the agent
   * id and the expiry second, so the same second gives the very same token (and makes it current again).
   */
  const mint = (agentId: string, ttlSec = 86_400) => {
    const exp = nowSec() + ttlSec;
    const signingInput = [b64url(Buffer.from('{"alg":"HS256","typ":"JWT"}')), b64url(Buffer.from(JSON.stringify({ agent_id: agentId, exp, iss: "botcord" })))].join(".");
    const token = `${signingInput}.${b64url(createHmac("sha256", jwtSecret).update(signingInput).digest())}`;
    current.set(agentId, { token, exp });
    issued.add(token);
    return { agent_token: token, expires_at: exp };
  };
  const agentOfToken = (token: string) => [...current.entries()].find(([, t]) => t.token === token)?.[0];
  const newKey = (pubkey: string, state: FakeKey["state"] = "pending"): FakeKey => ({ key_id: "k_" + randomBytes(6).toString("hex"), pubkey, state, challenge: randomBytes(32).toString("base64") });
  const probe = async (url: string, token: string) =>
    Promise.all(
      ["agent", "wake"].map(async (leaf) => {
        const path = `/${prefix}_inbox/${leaf}`;
        const res = await fetch(url + path, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: '{"probe":true}' }).catch(() => null);
        await res?.body?.cancel();
        const status = res?.status ?? 0;
        const ok = status >= 200 && status < 300;
        return { path, status, ok, hint: ok ? "" : status === 401 ? "webhook_token mismatch" : "not reachable" };
      }),
    );

  const installClaim = (body: Record<string, unknown>): [number, unknown] => {
    const host = body.host as { pubkey?: string; proof?: { nonce?: string; sig?: string } } | undefined;
    const agent = body.agent as { pubkey?: string; proof?: { nonce?: string; sig?: string } } | undefined;
    const bind = bindCodes.get(String(body.bind_code));
    if (!bind) return [400, { detail: "INVALID_BIND_CODE", error: "INVALID_BIND_CODE", hint: null, retryable: false }];
    if (host?.proof?.nonce !== bind.nonce || agent?.proof?.nonce !== bind.nonce) return [401, { detail: "INVALID_PROOF", error: "INVALID_PROOF", hint: null, retryable: false }];
    const nonce = Buffer.from(bind.nonce, "base64");
    if (!signedBy(String(host.pubkey), nonce, host.proof.sig) || !signedBy(String(agent.pubkey), nonce, agent.proof.sig)) return [401, { detail: "INVALID_PROOF", error: "INVALID_PROOF", hint: null, retryable: false }];
    if (host.pubkey === agent.pubkey) return [400, { detail: "INVALID_PUBKEY" }];
    const id = agentIdOf(String(agent.pubkey));
    if (agents.has(id)) return [409, { detail: "PUBKEY_ALREADY_REGISTERED", error: "PUBKEY_ALREADY_REGISTERED", hint: null, retryable: false }];
    bindCodes.delete(String(body.bind_code));
    const key = newKey(String(agent.pubkey), "active");
    delete key.challenge;
    agents.set(id, { agent_id: id, display_name: bind.name, keys: new Map([[key.key_id, key]]), policy: "contacts_only" });
    const token = mint(id);
    return [201, {
      agent: { id: claimAnswerId ?? id, key_id: key.key_id, token: token.agent_token, token_expires_at: token.expires_at, display_name: bind.name, bio: null, avatar_url: null },
      host: { host_instance_id: "oc_" + randomBytes(6).toString("hex"), access_token: "host-access-secret", refresh_token: "host-refresh-secret", control_ws_url: "ws://hub/openclaw/control" },
      hub_url: "http://hub",
    }];
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    const url = new URL(req.url ?? "/", "http://hub");
    const p = url.pathname.split("/").filter(Boolean);
    const method = req.method ?? "GET";
    calls.push(`${method} ${url.pathname}`);
    const body = method === "GET" ? {} : await readJson(req);
    const bearer = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (method === "POST" && url.pathname === "/hub/receipt") {
      const envelope = body as unknown as Envelope;
      const key = agents.get(envelope.from)?.keys.get(envelope.sig.key_id);
      const good = key?.state === "active" && signedBy(key.pubkey, Buffer.from(signingInput(envelope)), envelope.sig.value);
      receipts.push({ status: good ? 200 : 400, envelope });
      return good ? send(200, { received: true }) : send(400, { detail: key ? "Signature verification failed" : "Signing key not found or not active" });
    }
    if (method === "POST" && url.pathname === "/openclaw/install-claim") {
      const [status, answer] = installClaim(body);
      claims.push({ body, status });
      return send(status, answer);
    }
    if (p[0] === "hub") {
      const me = agentOfToken(bearer);
      if (!me) return send(401, { detail: "Invalid token", code: "invalid_token" });
      if (method === "GET" && url.pathname === "/hub/history") {
        const limit = Number(url.searchParams.get("limit") ?? 20);
        return send(200, { messages: history.slice().reverse().slice(0, limit), count: Math.min(limit, history.length), has_more: history.length > limit });
      }
      if (method === "GET" && url.pathname === "/hub/inbox") return send(200, { messages: [], count: 0, has_more: false });
      if (method === "POST" && url.pathname === "/hub/inbox/ack") return send(200, { acked: 0 });
      return send(404, { detail: "Not Found" });
    }
    if (p[0] !== "registry" || p[1] !== "agents") return send(404, { detail: "Not Found" });
    if (method === "POST" && p.length === 2) {
      if (options.registration === "closed") return send(405, { detail: "Method Not Allowed" });
      const pubkey = String(body.pubkey);
      const id = agentIdOf(pubkey);
      const existing = agents.get(id);
      if (existing && ![...existing.keys.values()].some((k) => k.pubkey === pubkey)) return send(409, { detail: "Agent id already registered" });
      const agent = existing ?? { agent_id: id, display_name: String(body.display_name), keys: new Map(), policy: "contacts_only" };
      agents.set(id, agent);
      const key = [...agent.keys.values()].find((k) => k.pubkey === pubkey) ?? newKey(pubkey);
      key.challenge = randomBytes(32).toString("base64");
      agent.keys.set(key.key_id, key);
      return send(201, { agent_id: id, key_id: key.key_id, challenge: key.challenge });
    }
    const agent = agents.get(p[2] ?? "");
    if (!agent) return send(404, { detail: "Agent not found" });
    const rest = p.slice(3).join("/");
    if (method === "GET" && p[3] === "keys" && p.length === 5) {
      const key = agent.keys.get(p[4]!);
      return key ? send(200, { key_id: key.key_id, pubkey: key.pubkey, state: key.state, created_at: "2026-01-01T00:00:00Z" }) : send(404, { detail: "Key not found" });
    }
    if (method === "POST" && rest === "verify") {
      const key = agent.keys.get(String(body.key_id));
      if (!key?.challenge || key.challenge !== body.challenge) return send(400, { detail: "Unknown or used challenge" });
      if (!signedBy(key.pubkey, Buffer.from(key.challenge, "base64"), body.sig)) return send(400, { detail: "Signature verification failed" });
      const first = ![...agent.keys.values()].some((k) => k.state === "active");
      key.state = "active";
      delete key.challenge;
      // A second key's /verify answers a token the hub does not store as current (today's hub: it gets 401).
      return send(200, first ? mint(agent.agent_id) : { agent_token: "not-the-current-token", expires_at: nowSec() + 86_400 });
    }
    if (method === "POST" && rest === "token/refresh") {
      const key = agent.keys.get(String(body.key_id));
      if (key?.state !== "active") return send(401, { detail: "Key not active" });
      if (nonces.has(String(body.nonce))) return send(409, { detail: "Nonce already used" });
      nonces.add(String(body.nonce));
      if (!signedBy(key.pubkey, Buffer.from(String(body.nonce), "base64"), body.sig)) return send(401, { detail: "Signature verification failed" });
      refreshes.push({ agent_id: agent.agent_id, key_id: key.key_id });
      return send(200, mint(agent.agent_id));
    }
    if (agentOfToken(bearer) !== agent.agent_id) return send(401, { detail: "Invalid or expired token" });
    if (method === "POST" && rest === "keys") {
      const key = newKey(String(body.pubkey));
      agent.keys.set(key.key_id, key);
      return send(201, { key_id: key.key_id, challenge: key.challenge });
    }
    if (rest.startsWith("endpoints") && webhooks === "gone") return send(404, { detail: "Not Found" });
    const notice = webhooks === "deprecated" ? DEPRECATED : {};
    if (method === "POST" && rest === "endpoints") {
      const results = await probe(String(body.url), String(body.webhook_token));
      const previous = agent.endpoint;
      const endpoint_id = previous && previous.url === body.url ? previous.endpoint_id : "ep_" + randomBytes(6).toString("hex");
      agent.endpoint = { endpoint_id, url: String(body.url), webhook_token: String(body.webhook_token), state: results.every((r) => r.ok) ? "active" : "unverified" };
      return send(previous ? 200 : 201, { endpoint_id, url: agent.endpoint.url, state: agent.endpoint.state, webhook_token_set: true }, notice);
    }
    if (method === "POST" && rest === "endpoints/test") {
      const results = await probe(String(body.url), String(body.webhook_token));
      return send(200, { all_ok: results.every((r) => r.ok), results }, notice);
    }
    if (method === "GET" && rest === "endpoints/status") {
      const e = agent.endpoint;
      return e ? send(200, { endpoint_id: e.endpoint_id, url: e.url, state: e.state, webhook_token: e.webhook_token }, notice) : send(404, { detail: "No endpoint" });
    }
    if (rest === "policy" && method === "GET") return send(200, { message_policy: agent.policy });
    if (rest === "policy" && method === "PATCH") {
      agent.policy = String(body.message_policy);
      return send(200, { message_policy: agent.policy });
    }
    return send(404, { detail: "Not Found" });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ detail: err.message }));
    });
  });
  // /hub/ws as today's hub plays it: auth within 10 s with the CURRENT token, else close 4001.
  const wss = new WebSocketServer({ server, path: "/hub/ws" });
  wss.on("connection", (ws) => {
    sockets.add(ws);
    ws.once("close", () => sockets.delete(ws));
    const timer = setTimeout(() => ws.close(4001, "Auth timeout"), 10_000);
    ws.once("message", (data) => {
      clearTimeout(timer);
      const frame = JSON.parse(data.toString()) as { token?: string };
      const agentId = agentOfToken(frame.token ?? "");
      wsAuths.push({ token: frame.token ?? "", ok: agentId !== undefined });
      if (!agentId) return ws.close(4001, "Invalid token");
      (ws as WebSocket & { agentId?: string }).agentId = agentId;
      ws.send(JSON.stringify({ type: "auth_ok", agent_id: agentId }));
      ws.on("message", (more) => {
        if ((JSON.parse(more.toString()) as { type?: string }).type === "ping") ws.send('{"type":"pong"}');
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = address && typeof address !== "string" ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    agents,
    calls,
    refreshes,
    receipts,
    claims,
    history,
    wsAuths,
    /** The token the hub accepts for the agent now (the one every other was replaced by). */
    currentToken: (agentId: string) => current.get(agentId)?.token ?? null,
    /** An agent registered elsewhere with another key under `agentId` (so registration answers 409). */
    async squat(agentId: string) {
      agents.set(agentId, { agent_id: agentId, display_name: "squatter", keys: new Map([["k_other", { key_id: "k_other", pubkey: (await newIdentity()).publicKey, state: "active" }]]), policy: "open" });
    },
    /** A sender known to the hub, so the relay can look its key up. */
    addAgent(pubkey: string, keyId: string) {
      agents.set(agentIdOf(pubkey), { agent_id: agentIdOf(pubkey), display_name: "sender", keys: new Map([[keyId, { key_id: keyId, pubkey, state: "active" }]]), policy: "open" });
    },
    /** A bind code an owner made on the dashboard (today's hub): claimed once with its nonce. */
    addBindCode(name = "Dashboard Agent"): { code: string; nonce: string } {
      const code = "bd_" + randomBytes(6).toString("hex");
      const nonce = randomBytes(32).toString("base64");
      bindCodes.set(code, { nonce, name });
      return { code, nonce };
    },
    /** Makes install-claim answer another agent id than the key derives to (a hub that disagrees). */
    answerClaimsAs(agentId: string | null) {
      claimAnswerId = agentId;
    },
    mint,
    /** Moves the hub's clock on by `ms`: its next tokens expire that much later. */
    advanceClock(ms: number) {
      clockOffsetMs += ms;
    },
    issued: () => [...issued],
    /** Tells every signed-in socket of the agent there is new mail. */
    inboxUpdate(agentId: string) {
      for (const ws of sockets) if ((ws as WebSocket & { agentId?: string }).agentId === agentId) ws.send('{"type":"inbox_update"}');
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of sockets) ws.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type RegistryHub = Awaited<ReturnType<typeof startRegistryHub>>;
