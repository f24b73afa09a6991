// Which stored headers may reach the gateway: only x-… and webhook-id/-timestamp, never one the gateway
// reads itself, printable values of bounded length (the relay stores through it, the agent posts through it).
import { describe, expect, it } from "vitest";
import { forwardableHeaders } from "../../protocol/index.ts";

describe("forwardableHeaders", () => {
  it("keeps provider headers, lower-cased", () => {
    expect(forwardableHeaders({ "X-GitHub-Event": "push", "webhook-id": "msg_1", "webhook-timestamp": "1700000000", "x-clawrelay-source": "gh" })).toEqual({
      "x-github-event": "push",
      "webhook-id": "msg_1",
      "webhook-timestamp": "1700000000",
      "x-clawrelay-source": "gh",
    });
  });

  it("drops what the gateway reads itself or could be misled by", () => {
    const headers = {
      authorization: "Bearer stolen",
      "content-type": "text/html",
      "content-length": "1",
      "idempotency-key": "k",
      "x-openclaw-token": "t",
      "x-openclaw-idempotency-key": "k",
      "x-forwarded-for": "1.2.3.4",
      "x-real-ip": "1.2.3.4",
      host: "evil",
      "webhook-signature": "v1,abc",
      "x-": "empty name part",
      "x-bad name": "space",
    };
    expect(forwardableHeaders(headers)).toEqual({});
  });

  it("drops values with control characters, non-ASCII, over 512 characters, or not strings", () => {
    expect(forwardableHeaders({ "x-a": "line\r\nx-injected: 1", "x-b": "caf\u00e9", "x-c": "y".repeat(513), "x-d": 5, "x-e": "y".repeat(512) })).toEqual({ "x-e": "y".repeat(512) });
  });
});
