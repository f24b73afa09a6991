// The edge: health, and every failure in the one JSON error shape; the 405 read from the routers.
import { describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { Hono } from "hono";
import { allowedMethods, answerNotFound } from "../../worker/http-errors.ts";
import { errorCode, relayFetch } from "../support/workerd/agents.ts";

describe("edge HTTP", () => {
  it("GET /healthz answers ok with the package version", async () => {
    const res = await relayFetch("/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, version: packageJson.version });
  });

  it("answers unknown routes with a JSON not_found error that says where to look", async () => {
    for (const [method, path] of [["GET", "/nope"], ["GET", "/inbox/ag_0123456789ab/nothing-here"]] as const) {
      const res = await relayFetch(path, { method });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("not_found");
      expect(body.error.message).toContain(path);
    }
  });

  it("regression: a known path with another method is 405 method_not_allowed with Allow, in the JSON shape (was 404)", async () => {
    const cases = [
      ["PATCH", "/healthz", "GET"],
      ["DELETE", "/inbox/ag_0123456789ab/envelopes", "POST"],
      ["GET", "/inbox/ag_0123456789ab/hooks/x", "POST"],
      ["POST", "/inbox/ag_0123456789ab/queue/3", "GET, DELETE"],
      ["POST", "/directory/agents/weather-bot", "GET, PUT, DELETE"],
      ["PATCH", "/inbox/ag_0123456789ab/hub", "GET"],
      // A token source's URL takes every method now (GET and HEAD when the source is live: docs/live.md),
      // each refused there by the source's own check; its bare name still names the owner's calls.
      ["PUT", "/inbox/ag_0123456789ab/sources", "GET, POST"],
      ["GET", "/inbox/ag_0123456789ab/sources/github", "POST, PATCH, DELETE"],
      ["DELETE", "/inbox/ag_0123456789ab", "PUT"],
      ["PUT", "/directory/search", "POST"],
    ] as const;
    for (const [method, path, allow] of cases) {
      const res = await relayFetch(path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("method_not_allowed");
    }
  });

  it("regression: the 405 is derived from the routers, so routes a hand-kept list missed answer it too (they were 404)", async () => {
    const cases = [
      ["DELETE", "/inbox/ag_0123456789ab/hub/token", "GET, PUT"],
      ["GET", "/inbox/ag_0123456789ab/hub/pull", "POST"],
      // POST …/hooks with no sub-path reaches the webhook route (and is refused for its empty sub-path).
      ["GET", "/inbox/ag_0123456789ab/hooks", "POST"],
    ] as const;
    for (const [method, path, allow] of cases) {
      const res = await relayFetch(path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
      expect(await errorCode(res)).toBe("method_not_allowed");
    }
  });

  it("a route added to a router after its notFound handler was set is known to the 405 at once", async () => {
    const app = new Hono();
    app.notFound(answerNotFound(app));
    app.get("/later/:id", (c) => c.text("ok"));
    app.on(["PUT", "DELETE"], "/later/:id/parts/*", (c) => c.text("ok"));
    const wrong = await app.request("/later/7", { method: "POST" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
    const deep = await app.request("/later/7/parts/a/b", { method: "GET" });
    expect(deep.headers.get("allow")).toBe("PUT, DELETE");
    expect((await app.request("/sooner", { method: "POST" })).status).toBe(404);
    expect(allowedMethods(app, "/later/7/other")).toEqual([]);
  });
});
