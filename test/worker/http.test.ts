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
    for (const [method, path] of [["GET", "/nope"], ["DELETE", "/inbox/ag_0123456789ab/envelopes"], ["GET", "/inbox/ag_0123456789ab/hooks/x"]] as const) {
      const res = await relayFetch(path, { method });
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("not_found");
      expect(body.error.message).toContain(path);
    }
  });
});
