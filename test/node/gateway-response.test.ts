// What each gateway answer means (openclaw.md, "Responses to expect"), and Retry-After parsing.
import { describe, expect, it } from "vitest";
import { classifyGatewayResponse, parseRetryAfter } from "../../local-agent/gateway-response.ts";

const DEFAULT_RETRY = 5_000;
const kind = (status: number, retryAfter: string | null = null) => classifyGatewayResponse(status, retryAfter, DEFAULT_RETRY).kind;

describe("classifyGatewayResponse", () => {
  it.each([200, 202, 204])("%i is accepted", (status) => {
    expect(kind(status)).toBe("accepted");
  });

  it.each([0, 408, 409, 500, 502, 503])("%i is transient", (status) => {
    expect(kind(status)).toBe("transient");
  });

  it.each([401, 404])("%i is a config error that points at doctor", (status) => {
    const outcome = classifyGatewayResponse(status, null, DEFAULT_RETRY, "Unauthorized");
    expect(outcome.kind).toBe("config_error");
    expect(outcome.kind === "config_error" && outcome.reason).toContain("clawrelay doctor");
    expect(outcome.kind === "config_error" && outcome.reason).toContain(String(status));
  });

  it("401 blames hooks.token, 404 blames hooks/mappings", () => {
    const r401 = classifyGatewayResponse(401, null, DEFAULT_RETRY);
    const r404 = classifyGatewayResponse(404, null, DEFAULT_RETRY);
    expect(r401.kind === "config_error" && r401.reason).toContain("hooks.token");
    expect(r404.kind === "config_error" && r404.reason).toContain("hooks.mappings");
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
