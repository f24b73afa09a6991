// The local HTTP API: routes on loopback, refusal of what a web page could send (Origin header, a
// foreign Host = DNS rebinding), 404/413, and moving to the next port when the preferred one is busy.
import { createServer, request } from "node:http";
import type { Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startApiServer } from "../../local-agent/api-server.ts";
import type { ApiServer, Route } from "../../local-agent/api-server.ts";
import { AgentError } from "../../local-agent/errors.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const routes: Record<string, Route> = {
  "GET /api/status": async () => ({ status: 200, body: { ok: true } }),
  "POST /echo": async (_req, body) => ({ status: 200, body: { size: body.length, text: body.toString("utf8").slice(0, 20) } }),
  "GET /boom": async () => {
    throw new Error("route failed");
  },
};

async function start(port = 0): Promise<ApiServer> {
  const api = await startApiServer(port, routes);
  cleanups.push(() => api.close());
  return api;
}

interface Answer {
  status: number;
  body: { success?: boolean; error?: string; [key: string]: unknown };
}

/** node:http, so Host and Origin can be set freely (fetch would not allow a foreign Host). */
function call(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Answer["body"] }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function occupy(port: number): Promise<Server | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

async function occupyFree(): Promise<Server> {
  const server = await occupy(0);
  if (!server) throw new Error("could not bind an ephemeral port");
  cleanups.push(() => new Promise((r) => server.close(() => r())));
  return server;
}

const portOf = (server: Server) => {
  const address = server.address();
  return address && typeof address !== "string" ? address.port : 0;
};

describe("local API server", () => {
  it("serves its routes on an ephemeral port, ignoring the query string", async () => {
    const api = await start();
    expect(api.port).toBeGreaterThan(0);
    expect(await call(api.port, "GET", "/api/status")).toEqual({ status: 200, body: { ok: true } });
    expect((await call(api.port, "GET", "/api/status?x=1")).status).toBe(200);
    expect(await call(api.port, "POST", "/echo", {}, "hello")).toEqual({ status: 200, body: { size: 5, text: "hello" } });
    const viaFetch = await fetch(`http://127.0.0.1:${api.port}/api/status`);
    expect(viaFetch.status).toBe(200);
  });

  it("accepts localhost:<port> as Host, in any case", async () => {
    const api = await start();
    expect((await call(api.port, "GET", "/api/status", { host: `localhost:${api.port}` })).status).toBe(200);
    expect((await call(api.port, "GET", "/api/status", { host: `LocalHost:${api.port}` })).status).toBe(200);
  });

  it("refuses any request with an Origin header (403)", async () => {
    const api = await start();
    for (const origin of ["https://evil.example", `http://127.0.0.1:${api.port}`, "null"]) {
      const answer = await call(api.port, "GET", "/api/status", { origin });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ success: false });
      expect(answer.body.error).toMatch(/Origin/);
    }
  });

  it("refuses a Host that is not the loopback name and port (DNS rebinding, 403)", async () => {
    const api = await start();
    for (const host of ["evil.example", `evil.example:${api.port}`, `127.0.0.1:${api.port + 1}`, "127.0.0.1", `localhost.evil.example:${api.port}`]) {
      const answer = await call(api.port, "GET", "/api/status", { host });
      expect(answer.status, host).toBe(403);
      expect(answer.body.error).toContain(`127.0.0.1:${api.port}`);
    }
  });

  it("answers 404 for an unknown route or method", async () => {
    const api = await start();
    const unknown = await call(api.port, "GET", "/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ success: false });
    expect((await call(api.port, "POST", "/api/status")).status).toBe(404);
  });

  it("answers 413 for a body over 64 KiB and accepts one of exactly 64 KiB", async () => {
    const api = await start();
    expect((await call(api.port, "POST", "/echo", {}, Buffer.alloc(64 * 1024 + 1, 0x61))).status).toBe(413);
    expect(await call(api.port, "POST", "/echo", {}, Buffer.alloc(64 * 1024, 0x61))).toMatchObject({ status: 200, body: { size: 64 * 1024 } });
  });

  it("answers 500 with the message when a route throws", async () => {
    const api = await start();
    expect(await call(api.port, "GET", "/boom")).toEqual({ status: 500, body: { success: false, error: "route failed" } });
  });

  it("binds the next port when the preferred one is busy, and checks Host against the port it got", async () => {
    const busy = portOf(await occupyFree());
    const api = await start(busy);
    expect(api.port).toBeGreaterThan(busy);
    expect(api.port).toBeLessThan(busy + 20);
    expect((await call(api.port, "GET", "/api/status")).status).toBe(200);
    expect((await call(api.port, "GET", "/api/status", { host: `127.0.0.1:${busy}` })).status).toBe(403);
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
    const error = await startApiServer(base, routes).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe("api_port_busy");
    expect((error as AgentError).message).toContain("api_port");
  });
});
