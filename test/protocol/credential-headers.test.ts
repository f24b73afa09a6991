// Which sender headers count as credentials, and redaction keeping names and order.
import { describe, expect, it } from "vitest";
import { REDACTED_VALUE, isCredentialHeader, redactHeaderPairs, redactHeaderRecord } from "../../protocol/index.ts";

describe("credential headers", () => {
  it("names bearer tokens, cookies and API keys, in any case", () => {
    for (const name of ["Authorization", "proxy-authorization", "Cookie", "X-API-Key", "api-key", "x-gitlab-token", "x-webhook-secret", "x_session_id", "x-myapp-api_key"]) {
      expect(isCredentialHeader(name), name).toBe(true);
    }
  });

  it("leaves provider signatures and ordinary headers visible", () => {
    for (const name of ["stripe-signature", "x-hub-signature-256", "x-signature-ed25519", "content-type", "x-idempotency-key", "x-github-delivery", "user-agent"]) {
      expect(isCredentialHeader(name), name).toBe(false);
    }
  });

  it("redacts values, keeping names and order", () => {
    expect(redactHeaderPairs([["content-type", "application/json"], ["authorization", "Bearer s3cr3t"], ["x-a", "1"]])).toEqual([
      ["content-type", "application/json"],
      ["authorization", REDACTED_VALUE],
      ["x-a", "1"],
    ]);
    expect(redactHeaderRecord({ cookie: "sid=1", "x-github-event": "push" })).toEqual({ cookie: REDACTED_VALUE, "x-github-event": "push" });
  });
});
