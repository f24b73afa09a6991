// Defence in depth: whatever sub-path a stored message carries, the local agent never posts outside
// the gateway's hooks.path (a "../v1/chat/completions" would reach the gateway's operator API with the
// hooks token). The relay refuses such sub-paths at the edge; this is the agent's own check.
import { describe, expect, it } from "vitest";
import type { DeliveryFrame } from "../../protocol/index.ts";
import { DeliveryLoop } from "../../local-agent/delivery/delivery.ts";
import type { Rejection } from "../../local-agent/delivery/delivery-status.ts";
import { hookPath } from "../../local-agent/delivery/gateway-forwarder.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { waitUntil } from "../support/node/stack.ts";

function hookFrame(id: number, subpath: string): DeliveryFrame {
  return { type: "message", id, kind: "hook", subpath, content_type: "application/json", body: "{}", encoding: "utf8", received_at: Date.now(), expires_at: Date.now() + 60_000 };
}

describe("the gateway URL for a sub-path", () => {
  it("is always below hooks.path", () => {
    expect(hookPath("/hooks", "agentgram_inbox/agent")).toBe("/hooks/agentgram_inbox/agent");
    expect(hookPath("/hooks/", "a/b")).toBe("/hooks/a/b");
    expect(hookPath("/custom/hooks", "x")).toBe("/custom/hooks/x");
  });

  it.each(["../v1/chat/completions", "a/../../v1", "./a", "a//b", "a/./b", "a\\b", "a%2Fb", "a b", "", "a/"])("regression: refuses the sub-path %j", (subpath) => {
    expect(() => hookPath("/hooks", subpath)).toThrow(/not canonical/);
  });
});

describe("delivery of a message whose stored sub-path is not canonical", () => {
  it("posts nothing and rejects it to the dead shelf with a reason; the next message goes on", async () => {
    const posted: string[] = [];
    const rejected: { id: number; rejection: Rejection }[] = [];
    const acked: number[] = [];
    const loop = new DeliveryLoop({
      agentId: "ag_0123456789ab",
      target: () => ({ port: 1, hooksPath: "/hooks", hooksToken: "t" }),
      post: async (_target, request) => {
        posted.push(request.subpath);
        return { status: 200, retryAfter: null, detail: "" };
      },
      ack: (id) => acked.push(id),
      reject: (id, rejection) => rejected.push({ id, rejection }),
      logger: silentLogger,
    });
    loop.push(hookFrame(1, "../../v1/chat/completions"));
    loop.push(hookFrame(2, "agentgram_inbox/agent"));
    await waitUntil("both messages finished", () => acked.length + rejected.length === 2, 5000);
    await loop.stop();
    expect(posted).toEqual(["agentgram_inbox/agent"]);
    expect(acked).toEqual([2]);
    expect(rejected).toEqual([{ id: 1, rejection: expect.objectContaining({ reason: expect.stringContaining("not canonical"), attempts: 0 }) }]);
  });
});
