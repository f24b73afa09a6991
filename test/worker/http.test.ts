// The edge: health, and every failure in the one JSON error shape.
import { describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { relayFetch } from "../support/workerd/agents.ts";

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
    ] as const;
    for (const [method, path, allow] of cases) {
      const res = await relayFetch(path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("method_not_allowed");
    }
  });
});
