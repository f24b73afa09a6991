// Today's only way in: an owner (a dashboard user; here a bearer token the stand-in issues to tests, not
// a Supabase JWT) asks for a bind code, and the OpenClaw install claims it with two proofs of
// possession — the host's key and the agent's key, each signing the decoded bind nonce — and gets the
// agent (its key already active, its token the current one). Answers and refusals as recorded in
// test/fixtures/hub/current/install-claim.json. Imported by agentline-hub.ts.
import { createHmac, randomBytes, randomInt, randomUUID } from "node:crypto";
import { HubError, invalidBody } from "./agentline-hub-errors.ts";
import type { Registry } from "./agentline-hub-registry.ts";
import { answer, field, hex, isoTime, jsonObject, nowSec } from "./agentline-hub-world.ts";
import type { Answer, HubAgent, HubRequest, HubUser, HubWorld } from "./agentline-hub-world.ts";
import { agentIdFor, isObject, pubkeyFault, sha256Hex, verifyBytes } from "./agentline-hub-wire.ts";

const BIND_TTL_MS = 30 * 60_000;
const MAX_ACTIVE_CODES = 5;

interface BindCode { code: string; owner: string; nonce: string; ticket: string; name: string; bio: string | null; expires: number; consumed: number | null; agent_id: string | null }

export interface Installer {
  /** A dashboard user and the bearer token that stands for their login. */
  newOwner(name: string): HubUser;
  route(req: HubRequest): Promise<Answer | null>;
}

export function createInstaller(world: HubWorld, registry: Registry): Installer {
  const codes = new Map<string, BindCode>();

  function newOwner(name: string): HubUser {
    const user: HubUser = { id: randomUUID(), token: `owner_${hex(24)}`, display_name: `${name.toLowerCase()}-${hex(4)}`, human_id: `hu_${hex(6)}` };
    world.users.set(user.id, user);
    return user;
  }

  function ownerOf(req: HubRequest): HubUser {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const user = [...world.users.values()].find((u) => u.token === token);
    if (!user) throw new HubError(401, "Unauthorized");
    return user;
  }

  async function install(req: HubRequest): Promise<Answer> {
    const owner = ownerOf(req);
    const body = await jsonObject(req);
    const name = field(body, "name").trim();
    if (!name) throw new HubError(400, "name is required");
    const now = Date.now();
    if ([...codes.values()].filter((c) => c.owner === owner.id && c.consumed === null && c.expires > now).length >= MAX_ACTIVE_CODES) {
      throw new HubError(429, `Too many active bind codes (max ${MAX_ACTIVE_CODES}); revoke or wait for one to expire`);
    }
    const nonce = randomBytes(32).toString("base64");
    const expires = now + BIND_TTL_MS;
    const bio = typeof body.bio === "string" && body.bio.trim() ? body.bio.trim() : null;
    const payload = Buffer.from(JSON.stringify({ uid: owner.id, purpose: "openclaw_install", nonce, iat: nowSec(), exp: Math.floor(expires / 1000), jti: hex(16), intended_name: name })).toString("base64url");
    const ticket = `${payload}.${createHmac("sha256", world.secret).update(payload).digest("base64url")}`;
    const code: BindCode = { code: `bd_${hex(6)}`, owner: owner.id, nonce, ticket, name, bio, expires, consumed: null, agent_id: null };
    codes.set(code.code, code);
    const install_command = `curl -fsSL ${world.url}/openclaw/install.sh | bash -s -- --purpose openclaw_install --bind-code ${code.code} --bind-nonce ${nonce}`;
    return answer({ bind_code: code.code, bind_ticket: ticket, nonce, expires_at: Math.floor(expires / 1000), install_command });
  }

  function proofOf(body: Record<string, unknown>, who: "host" | "agent"): { pubkey: string; nonce: string; sig: string } {
    const part = body[who];
    const proof = isObject(part) ? part.proof : undefined;
    if (!isObject(part) || typeof part.pubkey !== "string" || !isObject(proof) || typeof proof.nonce !== "string" || typeof proof.sig !== "string") {
      throw invalidBody([{ type: "missing", loc: ["body", who], msg: "Field required", input: body }]);
    }
    return { pubkey: part.pubkey.trim(), nonce: proof.nonce, sig: proof.sig };
  }

  async function claim(req: HubRequest): Promise<Answer> {
    const body = await jsonObject(req);
    const bindCode = field(body, "bind_code");
    const [host, agentProof] = [proofOf(body, "host"), proofOf(body, "agent")];
    const code = codes.get(bindCode);
    if (!bindCode.startsWith("bd_") || !code || code.consumed !== null || code.expires <= Date.now()) throw new HubError(400, "INVALID_BIND_CODE");
    if (host.nonce !== code.nonce || agentProof.nonce !== code.nonce) throw new HubError(401, "INVALID_PROOF");
    if (pubkeyFault(host.pubkey) !== null || pubkeyFault(agentProof.pubkey) !== null) throw new HubError(400, "INVALID_PUBKEY");
    const nonce = Buffer.from(code.nonce, "base64");
    if (!verifyBytes(host.pubkey, nonce, host.sig) || !verifyBytes(agentProof.pubkey, nonce, agentProof.sig)) throw new HubError(401, "INVALID_PROOF");
    if (host.pubkey === agentProof.pubkey) throw new HubError(400, "INVALID_PUBKEY");
    const agent_id = agentIdFor(agentProof.pubkey);
    const hostId = `oc_${sha256Hex(host.pubkey.slice(8)).slice(0, 12)}`;
    const taken = [...world.agents.values()].some((a) => a.agent_id === agent_id || [...a.keys.values()].some((k) => k.pubkey === agentProof.pubkey && k.state !== "revoked"));
    // Checked before the code is consumed: after a 409 the code still works.
    if (taken || hostIds.has(hostId)) throw new HubError(409, "PUBKEY_ALREADY_REGISTERED");
    code.consumed = Date.now();
    code.agent_id = agent_id;
    hostIds.add(hostId);
    const key_id = `k_${hex(6)}`;
    const agent: HubAgent = {
      agent_id, display_name: code.name, bio: code.bio, message_policy: "contacts_only", contacts: new Set(), keys: new Map([[key_id, { key_id, pubkey: agentProof.pubkey, state: "active", created_at: Date.now() }]]),
      endpoint: null, current_token: null, owner: code.owner, claim_code: `clm_${hex(16)}`, avatar_url: `/agent-avatars/${randomInt(1, 40)}.png`,
    };
    world.agents.set(agent_id, agent);
    const { agent_token, expires_at } = registry.mint(agent_id, true);
    const now = nowSec();
    return answer({
      agent: { id: agent_id, key_id, token: agent_token, token_expires_at: expires_at, display_name: agent.display_name, bio: agent.bio, avatar_url: agent.avatar_url },
      host: { host_instance_id: hostId, access_token: `oc_at_${hex(24)}`, refresh_token: `oc_rt_${hex(24)}`, access_expires_at: now + 3600, refresh_expires_at: now + 30 * 86_400, control_ws_url: `${world.url.replace(/^http/, "ws")}/openclaw/control` },
      hub_url: world.url,
    }, 201);
  }

  function codeStatus(req: HubRequest, value: string): Answer {
    const owner = ownerOf(req);
    const code = codes.get(value);
    if (!code || code.owner !== owner.id) throw new HubError(404, "Bind code not found");
    const state = code.consumed !== null ? "claimed" : code.expires <= Date.now() ? "expired" : "pending";
    const expiresIso = new Date(code.expires).toISOString().replace("Z", "+00:00");
    return answer({ bind_code: code.code, status: state, agent_id: code.agent_id, ...(code.consumed !== null ? { claimed_at: isoTime(code.consumed).replace("Z", "+00:00") } : {}), expires_at: expiresIso, expires_at_ts: Math.floor(code.expires / 1000) });
  }

  const hostIds = new Set<string>();
  const INSTALL = "/api/users/me/agents/openclaw/install";

  async function route(req: HubRequest): Promise<Answer | null> {
    const path = req.url.pathname;
    if (path === INSTALL && req.method === "POST") return install(req);
    if (path === "/openclaw/install-claim" && req.method === "POST") return claim(req);
    if (path.startsWith(`${INSTALL}/`) && req.method === "GET") return codeStatus(req, path.slice(INSTALL.length + 1));
    if (path === "/api/users/me" && req.method === "GET") {
      const owner = ownerOf(req);
      const agents = [...world.agents.values()].filter((a) => a.owner === owner.id).map((a) => a.agent_id);
      return answer({ id: owner.id, display_name: owner.display_name, email: `${owner.display_name}@example.test`, avatar_url: null, status: "active", max_agents: 30, beta_access: true, beta_admin: false, roles: [], agents });
    }
    return null;
  }

  return { newOwner, route };
}
