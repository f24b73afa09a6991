// A2A through the relay: the owner's PUT/GET/DELETE /inbox/{id}/a2a (hashes only, signed), and
// POST /inbox/{id}/a2a/v1 — refused 404 when not enabled, 401 in the gateway's own shape for a bearer
// that is none of the peers' (never sent down the socket), passed live to the gateway's /a2a/v1 with the
// caller's headers otherwise, its answer returned unchanged; offline 503 and after the deadline 504, as
// JSON-RPC errors naming the request's id. Never held.
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { A2A_ENDPOINT_PATH, jsonRpcError } from "../../protocol/index.ts";
import type { A2aView, JsonRpcErrorBody } from "../../protocol/index.ts";
import { claimInbox, newAgent, relayFetch, signedFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { answer, liveAgent, liveLog, nextRequest, passDeadline, storedCount } from "../support/workerd/live.ts";
import { closeAllSockets } from "../support/workerd/socket-client.ts";

afterEach(closeAllSockets);

const TOKEN = "peer-token-0123456789";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export async function enableA2a(inbox: ClaimedInbox, extra: Record<string, unknown> = {}): Promise<Response> {
  return signedFetch(inbox.agent, "PUT", `/inbox/${inbox.agent.id}/a2a`, { peers: [{ name: "other", token_sha256: sha256(TOKEN) }, { name: "third", token_sha256: sha256("third-token") }], deadline_sec: 125, ...extra });
}

const SEND = { jsonrpc: "2.0", id: 7, method: "SendMessage", params: { message: { role: "ROLE_USER", parts: [{ text: "hello" }] } } };

function call(inbox: ClaimedInbox, bearer: string | null, body: unknown = SEND): Promise<Response> {
  return relayFetch(`/inbox/${inbox.agent.id}${A2A_ENDPOINT_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: JSON.stringify(body),
  });
}

async function rpcError(res: Response, status: number): Promise<JsonRpcErrorBody> {
  const body = (await res.json()) as JsonRpcErrorBody;
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(body.jsonrpc).toBe("2.0");
  return body;
}

describe("the owner's settings", () => {
  it("PUT keeps the peers' names and hashes and the deadline; GET shows names only; DELETE turns it off; all signed", async () => {
    const inbox = await claimInbox();
    const put = await enableA2a(inbox);
    expect(put.status, await put.clone().text()).toBe(200);
    const made = (await put.json()) as { a2a: A2aView; card_url: string; endpoint_url: string };
    expect(made.card_url).toBe(`https://relay.test/inbox/${inbox.agent.id}/.well-known/agent-card.json`);
    expect(made.endpoint_url).toBe(`https://relay.test/inbox/${inbox.agent.id}/a2a/v1`);
    const view = (await (await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/a2a`)).json()) as A2aView;
    expect(view).toEqual({ enabled: true, peers: ["other", "third"], deadline_sec: 125, card_stored_at: null, last_refusal: null });
    expect(JSON.stringify(view)).not.toContain(sha256(TOKEN));
    expect((await signedFetch(inbox.agent, "PUT", `/inbox/${inbox.agent.id}/a2a`, { peers: [], deadline_sec: 301 })).status).toBe(400);
    expect((await signedFetch(inbox.agent, "PUT", `/inbox/${inbox.agent.id}/a2a`, { peers: [{ name: "x", token_sha256: TOKEN }], deadline_sec: 10 })).status).toBe(400);
    expect((await signedFetch(inbox.agent, "PUT", `/inbox/${inbox.agent.id}/a2a`, { peers: [], deadline_sec: 10 }, newAgent())).status).toBe(403);
    expect((await relayFetch(`/inbox/${inbox.agent.id}/a2a`)).status).toBe(401);
    const removed = await signedFetch(inbox.agent, "DELETE", `/inbox/${inbox.agent.id}/a2a`);
    expect(await removed.json()).toEqual({ removed: true });
    expect(((await (await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/a2a`)).json()) as A2aView).enabled).toBe(false);
  });

  it("a call to an inbox that does not publish A2A is 404 a2a_not_enabled", async () => {
    const inbox = await claimInbox();
    const res = await call(inbox, TOKEN);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("a2a_not_enabled");
  });
});

describe("calls", () => {
  it("a bearer that is none of the peers' (or none at all) is 401 a2a_unauthorized and never sent down the socket", async () => {
    const inbox = await claimInbox();
    await enableA2a(inbox);
    const agent = await liveAgent(inbox);
    for (const bearer of ["wrong-token", null, sha256(TOKEN)]) {
      const res = await call(inbox, bearer);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("a2a_unauthorized");
    }
    await agent.expectQuiet();
    const view = (await (await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/a2a`)).json()) as A2aView;
    expect(view.last_refusal).toMatchObject({ code: "unauthorized" });
    expect((await liveLog(inbox)).requests).toEqual([]);
  });

  it("SendMessage from a peer goes to the gateway's /a2a/v1 with its headers (authorization kept) and the gateway's answer comes back unchanged", async () => {
    const inbox = await claimInbox();
    await enableA2a(inbox);
    const agent = await liveAgent(inbox);
    const pending = call(inbox, "third-token");
    const request = await nextRequest(agent);
    expect(request).toMatchObject({ to: "a2a", method: "POST", tail: "/a2a/v1", deadline_ms: 125_000, body: JSON.stringify(SEND) });
    expect(request.headers).toContainEqual(["authorization", "Bearer third-token"]);
    const reply = '{"jsonrpc":"2.0","id":7,"result":{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"}}}}';
    answer(agent, request.rid, 200, [["content-type", "application/json; charset=utf-8"]], reply);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(reply);
    expect((await liveLog(inbox)).requests[0]).toMatchObject({ source: "a2a", method: "POST", path: "/a2a/v1", status: 200, outcome: "answered" });
  });

  it("offline: HTTP 503 with Retry-After: 30 and a JSON-RPC error naming the call's id; nothing kept", async () => {
    const inbox = await claimInbox();
    await enableA2a(inbox);
    const res = await call(inbox, TOKEN, { ...SEND, id: "call-1" });
    expect(res.headers.get("retry-after")).toBe("30");
    const body = await rpcError(res, 503);
    expect(body).toMatchObject({ id: "call-1", error: { code: -32000, data: { code: "agent_offline", retry_after_sec: 30 } } });
    expect(body.error.message).toMatch(/offline.*retry after 30 s/);
    expect(await storedCount(inbox)).toBe(0);
    expect(jsonRpcError(null, "x", "m").id).toBeNull();
  });

  it("after the deadline: HTTP 504 with a JSON-RPC error naming returnImmediately and GetTask; never held", async () => {
    const inbox = await claimInbox();
    await enableA2a(inbox);
    const agent = await liveAgent(inbox);
    const pending = call(inbox, TOKEN);
    await passDeadline(inbox, (await nextRequest(agent)).rid);
    const body = await rpcError(await pending, 504);
    expect(body).toMatchObject({ id: 7, error: { code: -32000, data: { code: "deadline_passed" } } });
    expect(body.error.message).toContain("configuration.returnImmediately: true");
    expect(body.error.message).toContain("GetTask");
    expect(await storedCount(inbox)).toBe(0);
    await agent.expectQuiet();
  });
});
