// What each gateway answer means (docs/openclaw-setup.md, "How the agent treats each gateway answer"), and Retry-After parsing.
import { describe, expect, it } from "vitest";
import { classifyGatewayResponse, classifyProbe, parseRetryAfter } from "../../local-agent/delivery/gateway-response.ts";

const DEFAULT_RETRY = 5_000;
const kind = (status: number, retryAfter: string | null = null) => classifyGatewayResponse(status, retryAfter, DEFAULT_RETRY).kind;

describe("classifyGatewayResponse", () => {
  it.each([200, 202, 204])("%i is accepted", (status) => {
    expect(kind(status)).toBe("accepted");
  });

  it.each([0, 408, 409, 500, 502, 503])("%i is transient", (status) => {
    expect(kind(status)).toBe("transient");
  });

  it("401 is a config error that blames hooks.token and points at doctor", () => {
    const outcome = classifyGatewayResponse(401, null, DEFAULT_RETRY, "Unauthorized");
    expect(outcome.kind).toBe("config_error");
    expect(outcome.kind === "config_error" && outcome.reason).toContain("clawrelay doctor");
    expect(outcome.kind === "config_error" && outcome.reason).toContain("hooks.token");
  });

  it("401 with a token from agent.json's override names the override (file and key) as the cause, not openclaw.json", () => {
    const from = "gateway.hooks_token in /home/u/.clawrelay/agent.json";
    const outcome = classifyGatewayResponse(401, null, DEFAULT_RETRY, "Unauthorized", from);
    expect(outcome).toEqual({ kind: "config_error", reason: `gateway answered 401 Unauthorized: the hooks token set by ${from} (it overrides openclaw.json's hooks.token) does not match the gateway's: correct it there or remove it (run clawrelay doctor)` });
    const probed = classifyProbe(401, "github/push", "/hooks", "gateway answered 404", "{}", from);
    expect(probed.kind === "config_error" && probed.reason).toContain(`the hooks token set by ${from}`);
  });

  it("regression: 404 alone is not a config error (hooks off and an unmapped sub-path both answer 404): it needs the probe", () => {
    expect(classifyGatewayResponse(404, null, DEFAULT_RETRY, "Not Found")).toEqual({ kind: "not_found", reason: "gateway answered 404 Not Found" });
  });

  it("413 names the gateway's 256 KiB limit", () => {
    const outcome = classifyGatewayResponse(413, null, DEFAULT_RETRY);
    expect(outcome.kind === "content_error" && outcome.reason).toContain("256 KiB");
  });


  it.each([400, 413, 405])("%i is a content error carrying the gateway's detail", (status) => {
    const outcome = classifyGatewayResponse(status, null, DEFAULT_RETRY, '{"ok":false,"error":"message required"}');
    expect(outcome.kind).toBe("content_error");
    expect(outcome.kind === "content_error" && outcome.reason).toContain("message required");
  });

  it("0 carries the connection error as its reason", () => {
    expect(classifyGatewayResponse(0, null, DEFAULT_RETRY, "ECONNREFUSED")).toEqual({ kind: "transient", reason: "ECONNREFUSED" });
    expect(classifyGatewayResponse(0, null, DEFAULT_RETRY)).toEqual({ kind: "transient", reason: "gateway unreachable" });
  });

  it("429 with Retry-After in seconds", () => {
    expect(classifyGatewayResponse(429, "7", DEFAULT_RETRY)).toEqual({ kind: "rate_limited", retryAfterMs: 7_000 });
    expect(classifyGatewayResponse(429, "0", DEFAULT_RETRY)).toEqual({ kind: "rate_limited", retryAfterMs: 0 });
  });

  it("429 with Retry-After as an HTTP date", () => {
    const at = new Date(Date.now() + 120_000).toUTCString();
    const outcome = classifyGatewayResponse(429, at, DEFAULT_RETRY);
    expect(outcome.kind).toBe("rate_limited");
    const ms = outcome.kind === "rate_limited" ? outcome.retryAfterMs : -1;
    // toUTCString drops milliseconds: up to one second less than 120 s.
    expect(ms).toBeGreaterThan(118_000);
    expect(ms).toBeLessThanOrEqual(120_000);
  });

  it("429 without (or with an unreadable) Retry-After uses the default", () => {
    expect(classifyGatewayResponse(429, null, DEFAULT_RETRY)).toEqual({ kind: "rate_limited", retryAfterMs: DEFAULT_RETRY });
    expect(classifyGatewayResponse(429, "soon", DEFAULT_RETRY)).toEqual({ kind: "rate_limited", retryAfterMs: DEFAULT_RETRY });
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");

  it("reads seconds", () => {
    expect(parseRetryAfter("30", now)).toBe(30_000);
    expect(parseRetryAfter("1.5", now)).toBe(1_500);
  });

  it("reads an HTTP date relative to now, and a past date as 0", () => {
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:45 GMT", now)).toBe(45_000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
  });

  it("returns null when absent or unreadable", () => {
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter("", now)).toBeNull();
    expect(parseRetryAfter("later", now)).toBeNull();
  });
});

describe("classifyProbe (POST {hooks.path}/wake with {} after a 404)", () => {
  const first = "gateway answered 404 Not Found";
  it("400: hooks on and the token right, so only this sub-path is unmapped: a content error naming the mapping to add", () => {
    const outcome = classifyProbe(400, "github/push", "/hooks", first);
    expect(outcome.kind).toBe("content_error");
    expect(outcome.kind === "content_error" && outcome.reason).toContain('match: { path: "github/push" }');
    expect(outcome.kind === "content_error" && outcome.reason).toContain("hooks.mappings");
  });

  it("404: hooks off or the wrong hooks.path, a config error", () => {
    const outcome = classifyProbe(404, "github/push", "/hooks", first);
    expect(outcome.kind).toBe("config_error");
    expect(outcome.kind === "config_error" && outcome.reason).toContain("hooks.enabled");
  });

  it("401: the token, a config error", () => {
    const outcome = classifyProbe(401, "github/push", "/hooks", first);
    expect(outcome.kind === "config_error" && outcome.reason).toContain("hooks.token");
  });

  it.each([0, 500, 503])("%i: cannot tell yet, retry", (status) => {
    expect(classifyProbe(status, "github/push", "/hooks", first).kind).toBe("transient");
  });
});
