// The local API's app and server. Through the Hono app's request(), without a server: the guards every
// request passes (a foreign Host = DNS rebinding, an Origin on the JSON routes, the inspector's own
// origin and token, bodies over 64 KiB), 404s and failures in their two shapes (the Society routes'
// `success: false`, everyone else's `{error: {code, message}}`). On a real loopback server: moving to the
// next port when the preferred one is busy, and the Host checked against the port it got.
import { createServer, request } from "node:http";
import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { apiApp } from "../../local-agent/api/api-app.ts";
import { startApiServer } from "../../local-agent/api/api-server.ts";
import type { ApiServer } from "../../local-agent/api/api-server.ts";
import { AgentError } from "../../local-agent/errors.ts";
import type { Identity } from "../../local-agent/identity.ts";
import { DeliveryFeed } from "../../local-agent/inspector/delivery-feed.ts";
import { TOKEN_HEADER, inspectorRoutes } from "../../local-agent/inspector/inspector-routes.ts";
import type { AgentStatus } from "../../local-agent/agent-status.ts";

const PORT = 19791;
const HOST = `127.0.0.1:${PORT}`;

/** The app with a few routes of the test's own, and the inspector's behind the same guards. */
function testApp() {
  const app = apiApp(() => PORT);
  app.get("/api/status", (c) => c.json({ ok: true }));
  app.post("/api/echo", async (c) => {
    const text = await c.req.text();
    return c.json({ size: Buffer.byteLength(text), text: text.slice(0, 20) });
  });
  app.get("/api/boom", () => {
    throw new Error("route failed");
  });
  app.get("/clawrelay/boom", () => {
    throw new Error("route failed");
  });
  app.get("/clawrelay/refused", () => {
    throw new AgentError("already_done", "that was done before", 409);
  });
  const identity = {} as Identity;
  const inspector = inspectorRoutes({ status: () => ({ agent_id: "ag_0123456789ab" }) as AgentStatus, feed: new DeliveryFeed(), access: { relayUrl: "http://127.0.0.1:9", agentId: "ag_0123456789ab", identity } });
  app.route("/", inspector.app);
  return { app, token: inspector.token };
}

async function ask(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const res = await testApp().app.request(path, { method: init.method ?? "GET", headers: { host: HOST, ...init.headers }, ...(init.body !== undefined ? { body: init.body } : {}) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("the local API's guards and answers (app.request, no server)", () => {
  it("serves its routes, ignoring the query string; localhost:<port> in any case is this server too", async () => {
    expect(await ask("/api/status")).toEqual({ status: 200, body: { ok: true } });
    expect((await ask("/api/status?x=1")).status).toBe(200);
    expect(await ask("/api/echo", { method: "POST", body: "hello" })).toEqual({ status: 200, body: { size: 5, text: "hello" } });
    expect((await ask("/api/status", { headers: { host: `localhost:${PORT}` } })).status).toBe(200);
    expect((await ask("/api/status", { headers: { host: `LocalHost:${PORT}` } })).status).toBe(200);
  });

  it("refuses any request with an Origin header on the JSON routes (403), each in its own shape", async () => {
    for (const origin of ["https://evil.example", `http://${HOST}`, "null"]) {
      const society = await ask("/api/status", { headers: { origin } });
      expect(society).toEqual({ status: 403, body: { success: false, error: expect.stringMatching(/Origin/) } });
      const own = await ask("/clawrelay/refused", { headers: { origin } });
      expect(own).toEqual({ status: 403, body: { error: { code: "web_page_refused", message: expect.stringMatching(/Origin/) } } });
    }
  });

  it("refuses a Host that is not the loopback name and port (DNS rebinding, 403), on every route", async () => {
    for (const host of ["evil.example", `evil.example:${PORT}`, `127.0.0.1:${PORT + 1}`, "127.0.0.1", `localhost.evil.example:${PORT}`]) {
      const society = await ask("/api/status", { headers: { host } });
      expect(society.status, host).toBe(403);
      expect(society.body.error).toContain(HOST);
      expect(await ask("/inspector/api/state", { headers: { host } })).toEqual({ status: 403, body: { error: { code: "foreign_host", message: expect.stringContaining(HOST) } } });
    }
  });

  it("answers 404 for an unknown route or method, in the shape of the path's routes", async () => {
    expect(await ask("/nope")).toEqual({ status: 404, body: { error: { code: "not_found", message: "no route GET /nope" } } });
    expect(await ask("/api/nope")).toEqual({ status: 404, body: { success: false, error: "no route GET /api/nope" } });
    expect((await ask("/api/status", { method: "POST" })).status).toBe(404);
  });

  it("answers 413 for a body over 64 KiB and accepts one of exactly 64 KiB", async () => {
    const over = await ask("/api/echo", { method: "POST", body: "a".repeat(64 * 1024 + 1) });
    expect(over).toEqual({ status: 413, body: { success: false, error: "body larger than 65536 bytes" } });
    expect(await ask("/api/echo", { method: "POST", body: "a".repeat(64 * 1024) })).toMatchObject({ status: 200, body: { size: 64 * 1024 } });
  });

  it("answers a failing route with its message: 500 for a bug, a refusal's own status and code", async () => {
    expect(await ask("/api/boom")).toEqual({ status: 500, body: { success: false, error: "route failed" } });
    expect(await ask("/clawrelay/boom")).toEqual({ status: 500, body: { error: { code: "internal_error", message: "route failed" } } });
    expect(await ask("/clawrelay/refused")).toEqual({ status: 409, body: { error: { code: "already_done", message: "that was done before" } } });
  });

  it("the inspector's API takes only its page's origin and token; its refusals are in the local shape", async () => {
    const { app, token } = testApp();
    const state = (headers: Record<string, string>) => app.request("/inspector/api/state", { headers: { host: HOST, ...headers } });
    expect((await state({ [TOKEN_HEADER]: token, origin: `http://${HOST}` })).status).toBe(200);
    expect((await state({ [TOKEN_HEADER]: token })).status).toBe(200);
    const noToken = await state({});
    expect(noToken.status).toBe(403);
    expect(await noToken.json()).toEqual({ error: { code: "inspector_token", message: expect.stringContaining(TOKEN_HEADER) } });
    const foreign = await state({ [TOKEN_HEADER]: token, origin: "https://attacker.test" });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("x-frame-options")).toBe("DENY");
    const badId = await app.request("/inspector/api/messages/0", { headers: { host: HOST, [TOKEN_HEADER]: token } });
    expect({ status: badId.status, body: await badId.json() }).toEqual({ status: 400, body: { error: { code: "bad_request", message: "a message id is a positive integer (1, 2, …)" } } });
  });
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(port = 0): Promise<ApiServer> {
  let server: ApiServer | null = null;
  const app = apiApp(() => server?.port ?? 0);
  app.get("/api/status", (c) => c.json({ ok: true }));
  server = await startApiServer(port, app);
  cleanups.push(() => server.close());
  return server;
}

/** node:http, so Host can be set freely (fetch would not allow a foreign Host). */
function call(port: number, path: string, host = `127.0.0.1:${port}`): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { host } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

function occupy(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

describe("the local API's server", () => {
  it("serves on an ephemeral port, to fetch too", async () => {
    const api = await start();
    expect(api.port).toBeGreaterThan(0);
    expect(await call(api.port, "/api/status")).toBe(200);
    expect((await fetch(`http://127.0.0.1:${api.port}/api/status`)).status).toBe(200);
  });

  it("binds the next port when the preferred one is busy, and checks Host against the port it got", async () => {
    const held = await occupy(0);
    if (!held) throw new Error("could not bind an ephemeral port");
    cleanups.push(() => new Promise((r) => held.close(() => r())));
    const address = held.address();
    const busy = address && typeof address !== "string" ? address.port : 0;
    const api = await start(busy);
    expect(api.port).toBeGreaterThan(busy);
    expect(api.port).toBeLessThan(busy + 20);
    expect(await call(api.port, "/api/status")).toBe(200);
    expect(await call(api.port, "/api/status", `127.0.0.1:${busy}`)).toBe(403);
  });

  it("fails with api_port_busy when 20 ports in a row are taken", async () => {
    // Find 20 consecutive free ports and hold them all.
    let base = 0;
    for (let tries = 0; tries < 20 && base === 0; tries++) {
      const candidate = 30_000 + Math.floor(Math.random() * 25_000);
      const held: Server[] = [];
      for (let p = candidate; p < candidate + 20; p++) {
        const server = await occupy(p);
        if (!server) break;
        held.push(server);
      }
      if (held.length === 20) base = candidate;
      for (const server of held) cleanups.push(() => new Promise((r) => server.close(() => r())));
    }
    expect(base, "20 consecutive free ports").toBeGreaterThan(0);
    const error = await startApiServer(base, apiApp(() => 0)).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe("api_port_busy");
    expect((error as AgentError).message).toContain("api_port");
  });
});
